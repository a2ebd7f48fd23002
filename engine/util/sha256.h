// SHA-256 (FIPS 180-4) of our own: block keys of the KV cache's prefix index and, later, model
// fingerprints and snapshot checksums. No library dependency.
// Thread-safety: a Sha256 object is used by one thread; the free functions are pure.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace hearth {

using Sha256Digest = std::array<uint8_t, 32>;

// Incremental hasher: update() any number of times, then finish(), which returns the digest
// and resets the hasher for a new message.
class Sha256 {
public:
    Sha256() { reset(); }
    void reset();
    Sha256& update(std::span<const uint8_t> bytes);
    Sha256& update(std::string_view bytes);
    Sha256Digest finish();

private:
    void compress(const uint8_t* block);  // one 64-byte block into state_

    std::array<uint32_t, 8> state_{};
    std::array<uint8_t, 64> buffer_{};
    size_t bufferLen_ = 0;
    uint64_t totalBytes_ = 0;
};

Sha256Digest sha256(std::span<const uint8_t> bytes);
Sha256Digest sha256(std::string_view bytes);
std::string toHex(const Sha256Digest& digest);  // 64 lowercase hex digits

}  // namespace hearth
