// Reads the facts from GGUF metadata (../shared/GGUF.md: general.*, <arch>.*) and runs loading's
// checks (loadModelParts) for the verdict.
#include "app/cli_core/model_facts.h"

#include <algorithm>
#include <map>

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

// The file name without its folder and its last extension (QFileInfo::completeBaseName).
std::string completeBaseName(const std::string& path) {
#if defined(_WIN32)
    const size_t slash = path.find_last_of("/\\");
#else
    const size_t slash = path.find_last_of('/');
#endif
    const std::string file = slash == std::string::npos ? path : path.substr(slash + 1);
    const size_t dot = file.find_last_of('.');
    return dot == std::string::npos ? file : file.substr(0, dot);
}

}  // namespace

ModelFacts describeModelFacts(const GgufFile& f, const ChatFormat* format) {
    ModelFacts info;
    info.path = validUtf8(f.path());
    info.architecture = stringKey(f, "general.architecture");
    info.family = familyName(info.architecture);
    for (const GgufTensorInfo& t : f.tensors()) info.nParams += static_cast<int64_t>(t.nElements());
    info.name = stringKey(f, "general.name");
    if (info.name.empty()) info.name = completeBaseName(info.path);
    info.fileBytes = static_cast<int64_t>(f.modelBytes());  // every part of a split model
    if (const GgufValue* v = f.find("general.file_type"))
        if (auto t = v->asUInt()) info.quantization = fileTypeName(*t);
    if (info.quantization.empty()) info.quantization = dominantType(f);
    if (const GgufValue* v = f.find(info.architecture + ".context_length"))
        info.contextLength = static_cast<int>(v->asUInt().value_or(0));
    const std::string tmpl = stringKey(f, "tokenizer.chat_template");
    info.chatFormat = format ? format->name() : ChatFormat::detect(tmpl, info.architecture).name();
    return info;
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
