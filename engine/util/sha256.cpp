// SHA-256 following FIPS 180-4 (sections 4.1.2, 4.2.2, 5.1.1, 5.3.3, 6.2): message schedule,
// 64 rounds, padding with 0x80, zeros and the 64-bit big-endian bit length.
#include "engine/util/sha256.h"

#include <algorithm>
#include <cstring>

namespace hearth {
namespace {

// FIPS 180-4 4.2.2: first 32 bits of the fractional parts of the cube roots of the first 64 primes.
constexpr uint32_t kRound[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

constexpr uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

uint32_t loadBigEndian(const uint8_t* p) {
    return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | uint32_t{p[3]};
}

}  // namespace

void Sha256::reset() {
    // FIPS 180-4 5.3.3: fractional parts of the square roots of the first 8 primes.
    state_ = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    bufferLen_ = 0;
    totalBytes_ = 0;
}

void Sha256::compress(const uint8_t* block) {
    uint32_t w[64];
    for (int t = 0; t < 16; ++t) w[t] = loadBigEndian(block + 4 * t);
    for (int t = 16; t < 64; ++t) {
        const uint32_t s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
        const uint32_t s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
        w[t] = w[t - 16] + s0 + w[t - 7] + s1;
    }
    uint32_t a = state_[0], b = state_[1], c = state_[2], d = state_[3];
    uint32_t e = state_[4], f = state_[5], g = state_[6], h = state_[7];
    for (int t = 0; t < 64; ++t) {
        const uint32_t sum1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
        const uint32_t choose = (e & f) ^ (~e & g);
        const uint32_t t1 = h + sum1 + choose + kRound[t] + w[t];
        const uint32_t sum0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
        const uint32_t majority = (a & b) ^ (a & c) ^ (b & c);
        const uint32_t t2 = sum0 + majority;
        h = g;
        g = f;
        f = e;
        e = d + t1;
        d = c;
        c = b;
        b = a;
        a = t1 + t2;
    }
    state_[0] += a;
    state_[1] += b;
    state_[2] += c;
    state_[3] += d;
    state_[4] += e;
    state_[5] += f;
    state_[6] += g;
    state_[7] += h;
}

Sha256& Sha256::update(std::span<const uint8_t> bytes) {
    totalBytes_ += bytes.size();
    const uint8_t* p = bytes.data();
    size_t n = bytes.size();
    if (bufferLen_ > 0) {
        const size_t take = std::min(n, buffer_.size() - bufferLen_);
        std::memcpy(buffer_.data() + bufferLen_, p, take);
        bufferLen_ += take;
        p += take;
        n -= take;
        if (bufferLen_ < buffer_.size()) return *this;
        compress(buffer_.data());
        bufferLen_ = 0;
    }
    for (; n >= 64; p += 64, n -= 64) compress(p);
    if (n > 0) std::memcpy(buffer_.data(), p, n);
    bufferLen_ = n;
    return *this;
}

Sha256& Sha256::update(std::string_view bytes) {
    return update(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
}

Sha256Digest Sha256::finish() {
    // FIPS 180-4 5.1.1: append 0x80, zeros up to 56 mod 64, then the length in bits (big-endian).
    const uint64_t bitLength = totalBytes_ * 8;
    uint8_t pad[72] = {0x80};
    const size_t padLen = (bufferLen_ < 56 ? 56 - bufferLen_ : 120 - bufferLen_);
    for (int i = 0; i < 8; ++i) pad[padLen + static_cast<size_t>(i)] = static_cast<uint8_t>(bitLength >> (56 - 8 * i));
    update(std::span<const uint8_t>(pad, padLen + 8));
    Sha256Digest digest;
    for (size_t i = 0; i < 8; ++i)
        for (size_t j = 0; j < 4; ++j) digest[4 * i + j] = static_cast<uint8_t>(state_[i] >> (24 - 8 * j));
    reset();
    return digest;
}

Sha256Digest sha256(std::span<const uint8_t> bytes) { return Sha256().update(bytes).finish(); }
Sha256Digest sha256(std::string_view bytes) { return Sha256().update(bytes).finish(); }

std::string toHex(const Sha256Digest& digest) {
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string hex(64, '0');
    for (size_t i = 0; i < digest.size(); ++i) {
        hex[2 * i] = kDigits[digest[i] >> 4];
        hex[2 * i + 1] = kDigits[digest[i] & 15];
    }
    return hex;
}

}  // namespace hearth
