// Reads the facts from GGUF metadata (../shared/GGUF.md: general.*, <arch>.*) and runs loading's
// checks (loadModelParts) for the verdict.
#include "app/cli_core/model_facts.h"

#include <algorithm>
#include <cctype>
#include <utility>
#include <map>
#include <vector>

#include "app/cli_core/core_common.h"
#include "app/cli_core/text.h"
#include "engine/engine.h"
#include "engine/model/gguf.h"
#include "engine/tokenizer/chat_format.h"

namespace hearth::cli::core {

namespace {

std::string stringKey(const GgufFile& f, const std::string& key) {
    const GgufValue* v = f.find(key);
    const std::string* s = v ? v->asString() : nullptr;
    return s ? validUtf8(*s) : std::string();
}

// llama.cpp's LLAMA_FTYPE numbering, the value of general.file_type.
std::string fileTypeName(uint64_t t) {
    static const std::map<uint64_t, const char*> names = {
        {0, "F32"},     {1, "F16"},     {2, "Q4_0"},    {3, "Q4_1"},    {7, "Q8_0"},    {8, "Q5_0"},
        {9, "Q5_1"},    {10, "Q2_K"},   {11, "Q3_K_S"}, {12, "Q3_K_M"}, {13, "Q3_K_L"}, {14, "Q4_K_S"},
        {15, "Q4_K_M"}, {16, "Q5_K_S"}, {17, "Q5_K_M"}, {18, "Q6_K"},   {32, "BF16"},
    };
    const auto it = names.find(t);
    return it == names.end() ? std::string() : std::string(it->second);
}

// Of the matrices only: norms and biases are F32 in every quantized file.
std::string dominantType(const GgufFile& f) {
    std::map<std::string, uint64_t> bytesByType;
    for (const GgufTensorInfo& t : f.tensors())
        if (t.dims.size() >= 2 && t.dims[1] > 1) bytesByType[dtypeInfo(t.type).name] += t.nBytes;
    const auto it = std::max_element(bytesByType.begin(), bytesByType.end(),
                                     [](const auto& a, const auto& b) { return a.second < b.second; });
    return it == bytesByType.end() ? std::string() : it->first;
}

// general.architecture as people name the family; llama.cpp's names of those Hearth does not run
// too, so that the picker says "Mamba is not supported" rather than "mamba".
std::string familyName(const std::string& arch) {
    static const std::map<std::string, const char*> names = {
        {"llama", "Llama"},
        {"qwen2", "Qwen 2"},
        {"qwen3", "Qwen 3"},
        {"phi3", "Phi-3"},
        {"gemma", "Gemma"},
        {"gemma2", "Gemma 2"},
        {"gemma3", "Gemma 3"},
        {"qwen2moe", "Qwen 2 MoE"},
        {"qwen3moe", "Qwen 3 MoE"},
        {"phi2", "Phi-2"},
        {"gpt2", "GPT-2"},
        {"falcon", "Falcon"},
        {"mpt", "MPT"},
        {"starcoder2", "StarCoder 2"},
        {"deepseek2", "DeepSeek V2"},
        {"command-r", "Command R"},
        {"mamba", "Mamba"},
        {"bert", "BERT"},
        {"olmo2", "OLMo 2"},
        {"granite", "Granite"},
        {"stablelm", "StableLM"},
        {"mistral3", "Mistral 3"},
        {"llama4", "Llama 4"},
        {"gemma3n", "Gemma 3n"},
    };
    const auto it = names.find(arch);
    return it == names.end() ? arch : std::string(it->second);
}

std::string fileNameOf(const std::string& path) {
#if defined(_WIN32)
    const size_t slash = path.find_last_of("/\\");
#else
    const size_t slash = path.find_last_of('/');
#endif
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

char lowerAscii(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }
bool isDigit(char c) { return c >= '0' && c <= '9'; }
bool isAlnum(char c) { return isDigit(c) || (lowerAscii(c) >= 'a' && lowerAscii(c) <= 'z'); }
bool isHex(char c) { return isDigit(c) || (lowerAscii(c) >= 'a' && lowerAscii(c) <= 'f'); }

std::string lowered(std::string s) {
    for (char& c : s) c = lowerAscii(c);
    return s;
}

// Letters and digits only, lower case: "Meta-Llama-3.1" and "meta_llama_31" compare equal.
std::string nameKey(const std::string& s) {
    std::string key;
    for (char c : s)
        if (isAlnum(c)) key += lowerAscii(c);
    return key;
}

bool endsWithNoCase(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() && lowered(s.substr(s.size() - suffix.size())) == suffix;
}

// llama.cpp's type names as file names carry them: Q4_0, Q4_K_M, IQ3_XS, Q8_K_XL, F16, BF16.
bool isQuantizationWord(const std::string& word) {
    const std::string w = lowered(word);
    if (w == "f16" || w == "f32" || w == "bf16" || w == "fp16" || w == "fp32" || w == "gguf") return true;
    const size_t digit = w.rfind("iq", 0) == 0 ? 2 : w.rfind('q', 0) == 0 ? 1 : std::string::npos;
    if (digit == std::string::npos || digit >= w.size() || !isDigit(w[digit])) return false;
    return std::all_of(w.begin() + static_cast<std::ptrdiff_t>(digit), w.end(),
                       [](char c) { return isAlnum(c) || c == '_'; });
}

// "-00001-of-00003" at the end (llama.cpp's gguf-split names).
bool stripSplitSuffix(std::string& stem) {
    const size_t of = stem.rfind("-of-");
    if (of == std::string::npos || of < 2) return false;
    const size_t dash = stem.rfind('-', of - 1);
    if (dash == std::string::npos) return false;
    const auto digits = [](const std::string& s) { return !s.empty() && std::all_of(s.begin(), s.end(), isDigit); };
    if (!digits(stem.substr(dash + 1, of - dash - 1)) || !digits(stem.substr(of + 4))) return false;
    stem.resize(dash);
    return true;
}

bool isContentHash(const std::string& stem) {
    const std::string s = lowered(stem);
    const std::string hex = s.rfind("sha256", 0) == 0 && s.size() > 7 ? s.substr(7) : s;
    return hex.size() >= 32 && std::all_of(hex.begin(), hex.end(), isHex);
}

std::string joinedNonEmpty(const std::vector<std::string>& parts, char separator) {
    std::string out;
    for (const std::string& p : parts)
        if (!p.empty()) out += (out.empty() ? "" : std::string(1, separator)) + p;
    return out;
}

}  // namespace

ModelFacts describeModelFacts(const GgufFile& f, const ChatFormat* format) {
    ModelFacts info;
    info.path = validUtf8(f.path());
    info.architecture = stringKey(f, "general.architecture");
    info.family = familyName(info.architecture);
    for (const GgufTensorInfo& t : f.tensors()) info.nParams += static_cast<int64_t>(t.nElements());
    info.name = readableModelName(f);
    info.fileBytes = static_cast<int64_t>(f.modelBytes());  // every part of a split model
    if (const GgufValue* v = f.find("general.file_type"))
        if (auto t = v->asUInt()) info.quantization = fileTypeName(*t);
    if (info.quantization.empty()) info.quantization = dominantType(f);
    if (const GgufValue* v = f.find(info.architecture + ".context_length"))
        info.contextLength = static_cast<int>(v->asUInt().value_or(0));
    const std::string tmpl = stringKey(f, "tokenizer.chat_template");
    info.chatFormat = format ? format->name() : ChatFormat::detect(tmpl, info.architecture).name();
    info.chatTuned = isChatTuned({.basename = stringKey(f, "general.basename"),
                                  .sizeLabel = {},
                                  .finetune = stringKey(f, "general.finetune"),
                                  .name = stringKey(f, "general.name"),
                                  .path = f.path()},
                                 !tmpl.empty());
    return info;
}

bool isChatTuned(const ModelNameFields& fields, bool hasChatTemplate) {
    std::vector<std::string> words;
    for (const std::string& text : {fields.finetune, fields.name, fields.basename, cleanedModelFileName(fields.path)}) {
        std::string word;
        for (const char c : text + ' ') {
            if (std::isalnum(static_cast<unsigned char>(c)))
                word += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
            else if (!word.empty()) words.push_back(std::exchange(word, {}));
        }
    }
    const auto has = [&](std::initializer_list<const char*> set) {
        return std::any_of(words.begin(), words.end(), [&](const std::string& w) {
            return std::any_of(set.begin(), set.end(), [&](const char* s) { return w == s; });
        });
    };
    if (has({"instruct", "chat", "it", "sft", "dpo", "rlhf", "orpo", "assistant"})) return true;
    if (has({"base"})) return false;
    return hasChatTemplate;
}

std::string cleanedModelFileName(const std::string& path) {
    std::string stem = fileNameOf(path);
    if (endsWithNoCase(stem, ".gguf")) stem.resize(stem.size() - 5);
    if (isContentHash(stem)) return {};
    stripSplitSuffix(stem);
    while (true) {
        const size_t cut = stem.find_last_of("-.");
        if (cut == std::string::npos || cut == 0 || !isQuantizationWord(stem.substr(cut + 1))) break;
        stem.resize(cut);
    }
    while (!stem.empty() && (stem.back() == '-' || stem.back() == '.' || stem.back() == '_' || stem.back() == ' '))
        stem.pop_back();
    return stem;
}

std::string readableModelName(const ModelNameFields& f) {
    const std::string stem = cleanedModelFileName(f.path);
    const std::string base = nameKey(f.basename);
    if (!base.empty()) {
        if (!stem.empty() && nameKey(stem).find(base) != std::string::npos) return stem;
        return joinedNonEmpty({f.basename, f.sizeLabel, f.finetune}, '-');
    }
    if (!stem.empty()) return stem;
    if (!f.name.empty()) return f.name;
    const std::string file = fileNameOf(f.path);
    return file.empty() ? std::string("model") : file;
}

std::string readableModelName(const GgufFile& f) {
    ModelNameFields fields;
    fields.basename = withoutControls(stringKey(f, "general.basename"));
    fields.sizeLabel = withoutControls(stringKey(f, "general.size_label"));
    fields.finetune = withoutControls(stringKey(f, "general.finetune"));
    fields.name = withoutControls(stringKey(f, "general.name"));
    fields.path = validUtf8(f.path());
    return readableModelName(fields);
}

Result<ModelFacts> inspectModelFacts(const std::string& path) {
    auto file = GgufFile::open(path);
    if (!file) return std::unexpected(file.error());
    const auto parts = loadModelParts(**file);
    ModelFacts info = describeModelFacts(**file, parts ? &parts->chatFormat : nullptr);
    if (!parts) info.unsupported = describeError(parts.error());
    return info;
}

std::string formatBytes(int64_t bytes) {
    const double mb = static_cast<double>(bytes) / 1e6;
    return mb < 1000 ? fixed(mb, 1) + " MB" : fixed(mb / 1000, 2) + " GB";
}

std::string formatParams(int64_t n) {
    const double x = static_cast<double>(n);
    if (x >= 1e9) return fixed(x / 1e9, 1) + " B";
    if (x >= 1e6) return fixed(x / 1e6, x < 1e7 ? 1 : 0) + " M";
    return fixed(x / 1e3, 0) + " K";
}

}  // namespace hearth::cli::core
