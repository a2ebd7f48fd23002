// Split GGUF models (gguf_split.h): naming the parts, and GgufFile::openOtherParts, which maps and
// validates parts 2..N of a model whose first part says split.count = N and takes in their
// tensors. The split.* keys are llama.cpp's (LLM_KV_SPLIT_NO, _COUNT, _TENSORS_COUNT in
// llama-arch.cpp; gguf-split writes them as u16, u16 and i32; any integer type is accepted).
#include "engine/model/gguf_split.h"

#include <cstdio>
#include <filesystem>

#include "engine/model/gguf.h"
#include "engine/str_cat.h"

namespace hearth {

namespace {

std::optional<int> fiveDigits(std::string_view s) {
    if (s.size() != 5) return std::nullopt;
    int v = 0;
    for (const char c : s) {
        if (c < '0' || c > '9') return std::nullopt;
        v = v * 10 + (c - '0');
    }
    return v;
}

std::string fileName(const std::string& path) { return std::filesystem::path(path).filename().string(); }

std::optional<uint64_t> splitKey(const GgufFile& file, std::string_view key) {
    const GgufValue* v = file.find(key);
    return v ? v->asUInt() : std::nullopt;
}

}  // namespace

std::optional<GgufSplitName> parseGgufSplitName(std::string_view path) {
    constexpr std::string_view kTail = ".gguf";
    // "-00001-of-00003.gguf": 1 + 5 + 4 + 5 + 5 characters
    constexpr size_t kSuffix = 20;
    if (path.size() < kSuffix || path.substr(path.size() - kTail.size()) != kTail) return std::nullopt;
    const std::string_view suffix = path.substr(path.size() - kSuffix);
    if (suffix[0] != '-' || suffix.substr(6, 4) != "-of-") return std::nullopt;
    const auto index = fiveDigits(suffix.substr(1, 5));
    const auto count = fiveDigits(suffix.substr(10, 5));
    if (!index || !count || *index < 1 || *index > *count) return std::nullopt;
    return GgufSplitName{std::string(path.substr(0, path.size() - kSuffix)), *index, *count};
}

std::string ggufSplitPath(std::string_view prefix, int index, int count) {
    char suffix[32];
    std::snprintf(suffix, sizeof suffix, "-%05d-of-%05d.gguf", index, count);
    return std::string(prefix) + suffix;
}

std::vector<std::string> ggufModelFiles(const std::string& path) {
    const auto name = parseGgufSplitName(path);
    if (!name || name->index != 1 || name->count < 2) return {path};
    std::vector<std::string> parts;
    for (int i = 1; i <= name->count; ++i) parts.push_back(ggufSplitPath(name->prefix, i, name->count));
    return parts;
}

Result<void> GgufFile::openOtherParts() {
    const auto count = splitKey(*this, "split.count");
    const auto no = splitKey(*this, "split.no").value_or(0);
    if (!count || *count <= 1) return {};
    const std::string self = fileName(path_);
    if (*count > kMaxGgufSplitParts)
        return fail(ErrorCode::InvalidFormat, strCat("GGUF: split.count ", *count, " in '", self, "' is out of range"));
    const auto name = parseGgufSplitName(path_);
    if (no != 0) {
        const std::string first = name ? fileName(ggufSplitPath(name->prefix, 1, name->count)) : "its first part";
        return fail(ErrorCode::InvalidArgument,
                    strCat("GGUF: '", self, "' is part ", no + 1, " of ", *count, " of a split model; open ", first));
    }
    if (!name || name->index != 1 || static_cast<uint64_t>(name->count) != *count) {
        const std::string expected = ggufSplitPath("", 1, static_cast<int>(*count));
        return fail(ErrorCode::InvalidFormat,
                    strCat("GGUF: '", self, "' is the first of ", *count,
                           " parts of a split model, but its name does not end in ", expected,
                           ", so its other parts cannot be found"));
    }
    for (int i = 2; i <= name->count; ++i) {
        const std::string partPath = ggufSplitPath(name->prefix, i, name->count);
        const std::string where =
            strCat("GGUF: split model '", self, "': part ", i, " of ", name->count, " ('", fileName(partPath), "')");
        std::error_code ec;
        if (!std::filesystem::exists(partPath, ec))
            return fail(ErrorCode::Io, where + " is missing; every part must be in the same folder");
        auto part = openOne(partPath);
        if (!part) {
            Error e = part.error();
            e.message = where + ": " + e.message;  // the code and cause stay
            return std::unexpected(std::move(e));
        }
        if (splitKey(**part, "split.no") != static_cast<uint64_t>(i - 1) || splitKey(**part, "split.count") != count)
            return fail(ErrorCode::InvalidFormat, where + " does not say it is that part (split.no, split.count)");
        for (GgufTensorInfo t : (*part)->tensors()) {
            t.part = static_cast<uint32_t>(i - 1);
            if (!tensorIndex_.emplace(t.name, tensors_.size()).second)
                return fail(ErrorCode::InvalidFormat, where + " repeats tensor '" + t.name + "'");
            tensors_.push_back(std::move(t));
        }
        partPaths_.push_back(partPath);
        otherParts_.push_back(std::move(*part));
    }
    if (const auto nTensors = splitKey(*this, "split.tensors.count"); nTensors && *nTensors != tensors_.size())
        return fail(ErrorCode::InvalidFormat,
                    strCat("GGUF: split model '", self, "': split.tensors.count says ", *nTensors,
                           " tensors, its parts hold ", tensors_.size()));
    return {};
}

}  // namespace hearth
