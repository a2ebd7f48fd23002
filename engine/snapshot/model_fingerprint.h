// ModelFingerprint: XXH3-128 of every byte of a model file — the model's part of the KV chain
// root, so KV saved with one file is never restored into another (even one with the same
// architecture and vocabulary). Callers cache it by (path, size, modification time).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "engine/error.h"

namespace hearth {

using ModelFingerprint = std::array<uint8_t, 16>;

ModelFingerprint fingerprintBytes(std::span<const uint8_t> bytes);
// Maps and hashes the whole file. Errors: Io.
Result<ModelFingerprint> fingerprintFile(const std::string& path);

std::string fingerprintHex(const ModelFingerprint& fp);  // 32 lowercase hex digits
std::optional<ModelFingerprint> fingerprintFromHex(std::string_view hex);

// What identifies a file's version for the cache: its size and modification time (ns).
struct FileStamp {
    uint64_t size = 0;
    int64_t mtimeNs = 0;
};
Result<FileStamp> fileStamp(const std::string& path);  // Errors: Io

}  // namespace hearth
