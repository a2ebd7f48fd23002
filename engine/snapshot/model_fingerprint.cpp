// XXH3-128 (libxxhash, header-only inline build: nothing to link) over a mapped model file.
#include "engine/snapshot/model_fingerprint.h"

#include <chrono>
#include <filesystem>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "engine/model/gguf_split.h"
#include "engine/str_cat.h"
#include "engine/util/mapped_file.h"
#include "engine/util/file_path.h"

namespace hearth {

ModelFingerprint fingerprintBytes(std::span<const uint8_t> bytes) {
    const XXH128_hash_t h = XXH3_128bits(bytes.data(), bytes.size());
    XXH128_canonical_t c;
    XXH128_canonicalFromHash(&c, h);
    ModelFingerprint fp;
    static_assert(sizeof c.digest == sizeof fp);
    std::copy(std::begin(c.digest), std::end(c.digest), fp.begin());
    return fp;
}

Result<ModelFingerprint> fingerprintFile(const std::string& path) {
    auto mapped = MappedFile::open(path);
    if (!mapped) return std::unexpected(mapped.error());
    return fingerprintBytes((*mapped)->bytes());
}

Result<ModelFingerprint> fingerprintFiles(const std::vector<std::string>& paths) {
    if (paths.size() == 1) return fingerprintFile(paths.front());
    XXH3_state_t* state = XXH3_createState();
    if (!state) return fail(ErrorCode::OutOfMemory, "cannot hash the model's files");
    const auto putU64 = [state](uint64_t v) {
        uint8_t le[8];
        for (int i = 0; i < 8; ++i) le[i] = static_cast<uint8_t>(v >> (8 * i));
        XXH3_128bits_update(state, le, sizeof le);
    };
    static constexpr char kTag[] = "hearth-model-parts/v1";
    XXH3_128bits_reset(state);
    XXH3_128bits_update(state, kTag, sizeof kTag - 1);
    putU64(paths.size());
    for (const std::string& path : paths) {
        auto mapped = MappedFile::open(path);
        if (!mapped) {
            XXH3_freeState(state);
            return std::unexpected(mapped.error());
        }
        const auto bytes = (*mapped)->bytes();
        putU64(bytes.size());
        XXH3_128bits_update(state, bytes.data(), bytes.size());
    }
    XXH128_canonical_t c;
    XXH128_canonicalFromHash(&c, XXH3_128bits_digest(state));
    XXH3_freeState(state);
    ModelFingerprint fp;
    std::copy(std::begin(c.digest), std::end(c.digest), fp.begin());
    return fp;
}

Result<ModelFingerprint> fingerprintModel(const std::string& path) { return fingerprintFiles(ggufModelFiles(path)); }

std::string fingerprintHex(const ModelFingerprint& fp) {
    static const char* digits = "0123456789abcdef";
    std::string s;
    for (uint8_t b : fp) {
        s += digits[b >> 4];
        s += digits[b & 15];
    }
    return s;
}

std::optional<ModelFingerprint> fingerprintFromHex(std::string_view hex) {
    if (hex.size() != 32) return std::nullopt;
    auto nibble = [](char c) -> int {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        return -1;
    };
    ModelFingerprint fp;
    for (size_t i = 0; i < fp.size(); ++i) {
        const int hi = nibble(hex[2 * i]), lo = nibble(hex[2 * i + 1]);
        if (hi < 0 || lo < 0) return std::nullopt;
        fp[i] = static_cast<uint8_t>(hi << 4 | lo);
    }
    return fp;
}

Result<FileStamp> fileStamp(const std::string& path) {
    // std::filesystem rather than stat(): Windows has no st_mtim and a 32-bit st_size. fsPath:
    // the UTF-8 path as UTF-16 on Windows (a std::string would be read in the ANSI code page).
    std::error_code ec;
    const std::filesystem::path p = fsPath(path);
    const auto size = std::filesystem::file_size(p, ec);
    const auto mtime = ec ? std::filesystem::file_time_type{} : std::filesystem::last_write_time(p, ec);
    if (ec) return fail(ErrorCode::Io, strCat("cannot stat ", path));
    return FileStamp{static_cast<uint64_t>(size),
                     std::chrono::duration_cast<std::chrono::nanoseconds>(mtime.time_since_epoch()).count()};
}

}  // namespace hearth

namespace hearth {

Result<FileStamp> modelStamp(const std::string& path) {
    const std::vector<std::string> parts = ggufModelFiles(path);
    if (parts.size() == 1) return fileStamp(path);
    FileStamp total;
    std::vector<uint64_t> each;  // every part's size and modification time, hashed into one value
    for (const std::string& part : parts) {
        auto stamp = fileStamp(part);
        if (!stamp) return std::unexpected(stamp.error());
        total.size += stamp->size;
        each.push_back(stamp->size);
        each.push_back(static_cast<uint64_t>(stamp->mtimeNs));
    }
    total.mtimeNs = static_cast<int64_t>(XXH3_64bits(each.data(), each.size() * sizeof(uint64_t)));
    return total;
}

}  // namespace hearth
