// ModelFingerprint: XXH3-128 of every byte of a model file — the model's part of the KV chain
// root, so KV saved with one file is never restored into another (even one with the same
// architecture and vocabulary). A split model's covers every byte of every part, in order.
// Callers cache it by (path, size, modification time) - modelStamp(), of all the parts.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/error.h"

namespace hearth {

using ModelFingerprint = std::array<uint8_t, 16>;

ModelFingerprint fingerprintBytes(std::span<const uint8_t> bytes);
// Maps and hashes the whole file. Errors: Io.
Result<ModelFingerprint> fingerprintFile(const std::string& path);
// The fingerprint of a model made of these files (GgufFile::partPaths()): one file's is
// fingerprintFile's; several files' is XXH3-128 over a tag, their count, and each one's size and
// bytes in order, so no other set of files (nor the parts merged into one file) shares it.
// Errors: Io.
Result<ModelFingerprint> fingerprintFiles(const std::vector<std::string>& paths);
// fingerprintFiles of the model at path: its parts when path is a split model's first part
// (ggufModelFiles), else the file alone.
Result<ModelFingerprint> fingerprintModel(const std::string& path);

std::string fingerprintHex(const ModelFingerprint& fp);  // 32 lowercase hex digits
std::optional<ModelFingerprint> fingerprintFromHex(std::string_view hex);

// What identifies a file's version for the cache: its size and modification time (ns).
struct FileStamp {
    uint64_t size = 0;
    int64_t mtimeNs = 0;
};
Result<FileStamp> fileStamp(const std::string& path);  // Errors: Io
// fileStamp of the model at path: of the file alone, or for a split model's first part the
// parts' total size and a value that changes when any part's size or modification time does.
// Errors: Io (a part is missing).
Result<FileStamp> modelStamp(const std::string& path);

}  // namespace hearth
