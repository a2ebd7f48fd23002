// Reads the tokenizer.* keys of a GGUF into a VocabSpec, and Tokenizer::fromGguf.
// Every value's type is checked; the GGUF reader has already bounded every length.
#include <algorithm>
#include <cctype>
#include <string_view>

#include "engine/model/gguf.h"
#include "engine/str_cat.h"
#include "engine/tokenizer/tokenizer.h"
#include "engine/tokenizer/vocab_spec.h"

namespace hearth {
namespace {

Result<const GgufArray*> findArray(const GgufFile& file, std::string_view key, bool required) {
    const GgufValue* value = file.find(key);
    if (!value) {
        if (required) return fail(ErrorCode::InvalidFormat, strCat(key, ": missing"));
        return nullptr;
    }
    const GgufArray* array = value->asArray();
    if (!array) return fail(ErrorCode::InvalidFormat, strCat(key, ": not an array"));
    return array;
}

Result<std::vector<std::string>> readStrings(const GgufFile& file, std::string_view key, bool required) {
    auto array = findArray(file, key, required);
    if (!array) return std::unexpected(array.error());
    std::vector<std::string> out;
    if (!*array) return out;
    if ((*array)->elemType != GgufType::STRING && (*array)->size() > 0)
        return fail(ErrorCode::InvalidFormat, strCat(key, "[0]: not a string"));
    out.reserve((*array)->size());
    for (uint64_t i = 0; i < (*array)->size(); ++i) out.emplace_back((*array)->stringAt(i));
    return out;
}

Result<std::vector<float>> readFloats(const GgufFile& file, std::string_view key) {
    auto array = findArray(file, key, false);
    if (!array) return std::unexpected(array.error());
    std::vector<float> out;
    if (!*array) return out;
    out.reserve((*array)->size());
    for (uint64_t i = 0; i < (*array)->size(); ++i) {
        const auto f = (*array)->item(i).asFloat();
        if (!f) return fail(ErrorCode::InvalidFormat, strCat(key, "[", i, "]: not a number"));
        out.push_back(static_cast<float>(*f));
    }
    return out;
}

Result<std::vector<int32_t>> readTypes(const GgufFile& file, std::string_view key) {
    auto array = findArray(file, key, false);
    if (!array) return std::unexpected(array.error());
    std::vector<int32_t> out;
    if (!*array) return out;
    out.reserve((*array)->size());
    for (uint64_t i = 0; i < (*array)->size(); ++i) {
        const auto v = (*array)->item(i).asInt();
        if (!v || *v < 0 || *v > 6)
            return fail(ErrorCode::InvalidFormat, strCat(key, "[", i, "]: not a token type (0..6)"));
        out.push_back(static_cast<int32_t>(*v));
    }
    return out;
}

// Absent, negative, not an integer, or the u32 "none" (4294967295) all mean "no such token";
// the range against the vocabulary size is checked when the tokenizer is built.
int64_t readId(const GgufFile& file, std::string_view key) {
    const GgufValue* value = file.find(key);
    if (!value) return -1;
    const auto id = value->asInt();
    return id && *id >= 0 ? *id : -1;
}

std::optional<bool> readBool(const GgufFile& file, std::string_view key) {
    const GgufValue* value = file.find(key);
    return value ? value->asBool() : std::nullopt;
}

std::string readString(const GgufFile& file, std::string_view key) {
    const GgufValue* value = file.find(key);
    const std::string* s = value ? value->asString() : nullptr;
    return s ? *s : std::string();
}

}  // namespace

Result<VocabSpec> readVocabSpec(const GgufFile& file) {
    VocabSpec vocab;
    if (!file.find("tokenizer.ggml.model")) return fail(ErrorCode::InvalidFormat, "tokenizer.ggml.model: missing");
    vocab.model = readString(file, "tokenizer.ggml.model");
    vocab.pre = readString(file, "tokenizer.ggml.pre");
    std::string name = readString(file, "general.name");
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    vocab.rightStripSpecials = name.find("phi-3") != std::string::npos || name.find("phi3") != std::string::npos ||
        readString(file, "general.architecture") == "phi3";
    auto tokens = readStrings(file, "tokenizer.ggml.tokens", true);
    if (!tokens) return std::unexpected(tokens.error());
    vocab.tokens = std::move(*tokens);
    auto scores = readFloats(file, "tokenizer.ggml.scores");
    if (!scores) return std::unexpected(scores.error());
    vocab.scores = std::move(*scores);
    auto types = readTypes(file, "tokenizer.ggml.token_type");
    if (!types) return std::unexpected(types.error());
    vocab.tokenTypes = std::move(*types);
    auto merges = readStrings(file, "tokenizer.ggml.merges", false);
    if (!merges) return std::unexpected(merges.error());
    vocab.merges = std::move(*merges);
    vocab.bosId = readId(file, "tokenizer.ggml.bos_token_id");
    vocab.eosId = readId(file, "tokenizer.ggml.eos_token_id");
    vocab.eotId = readId(file, "tokenizer.ggml.eot_token_id");
    vocab.unknownId = readId(file, "tokenizer.ggml.unknown_token_id");
    vocab.addBos = readBool(file, "tokenizer.ggml.add_bos_token");
    vocab.addSpacePrefix = readBool(file, "tokenizer.ggml.add_space_prefix");
    return vocab;
}

Result<std::unique_ptr<Tokenizer>> Tokenizer::fromGguf(const GgufFile& file) {
    auto vocab = readVocabSpec(file);
    if (!vocab) return std::unexpected(vocab.error());
    return fromVocab(std::move(*vocab));
}

}  // namespace hearth
