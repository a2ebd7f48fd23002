// Reads the picker's facts from GGUF metadata (../shared/GGUF.md: general.*, <arch>.*) and runs
// loading's checks (loadModelParts) for the verdict.
#include "app/common/model_info.h"

#include <QFileInfo>
#include <map>

#include "app/common/error_text.h"
#include "engine/engine.h"
#include "engine/model/gguf.h"
#include "engine/tokenizer/chat_format.h"

namespace hearth {

namespace {

QString stringKey(const GgufFile& f, const std::string& key) {
    const GgufValue* v = f.find(key);
    const std::string* s = v ? v->asString() : nullptr;
    return s ? QString::fromUtf8(s->data(), static_cast<qsizetype>(s->size())) : QString();
}

// llama.cpp's LLAMA_FTYPE numbering, the value of general.file_type.
QString fileTypeName(uint64_t t) {
    static const std::map<uint64_t, const char*> names = {
        {0, "F32"},     {1, "F16"},     {2, "Q4_0"},    {3, "Q4_1"},    {7, "Q8_0"},    {8, "Q5_0"},
        {9, "Q5_1"},    {10, "Q2_K"},   {11, "Q3_K_S"}, {12, "Q3_K_M"}, {13, "Q3_K_L"}, {14, "Q4_K_S"},
        {15, "Q4_K_M"}, {16, "Q5_K_S"}, {17, "Q5_K_M"}, {18, "Q6_K"},   {32, "BF16"},
    };
    const auto it = names.find(t);
    return it == names.end() ? QString() : QString::fromLatin1(it->second);
}

// Of the matrices only: norms and biases are F32 in every quantized file.
QString dominantType(const GgufFile& f) {
    std::map<std::string, uint64_t> bytesByType;
    for (const GgufTensorInfo& t : f.tensors())
        if (t.dims.size() >= 2 && t.dims[1] > 1) bytesByType[dtypeInfo(t.type).name] += t.nBytes;
    const auto it = std::max_element(bytesByType.begin(), bytesByType.end(),
                                     [](const auto& a, const auto& b) { return a.second < b.second; });
    return it == bytesByType.end() ? QString() : QString::fromStdString(it->first);
}

// general.architecture as people name the family; llama.cpp's names of those Hearth does not run
// too, so that the picker says "Mamba is not supported" rather than "mamba".
QString familyName(const QString& arch) {
    static const std::map<QString, const char*> names = {
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
    return it == names.end() ? arch : QString::fromLatin1(it->second);
}

}  // namespace

ModelFileInfo describeModel(const GgufFile& f, const ChatFormat* format) {
    ModelFileInfo info;
    info.path = QString::fromStdString(f.path());
    info.architecture = stringKey(f, "general.architecture");
    info.family = familyName(info.architecture);
    for (const GgufTensorInfo& t : f.tensors()) info.nParams += static_cast<qint64>(t.nElements());
    info.name = stringKey(f, "general.name");
    if (info.name.isEmpty()) info.name = QFileInfo(info.path).completeBaseName();
    info.fileBytes = static_cast<qint64>(f.fileSize());
    if (const GgufValue* v = f.find("general.file_type"))
        if (auto t = v->asUInt()) info.quantization = fileTypeName(*t);
    if (info.quantization.isEmpty()) info.quantization = dominantType(f);
    if (const GgufValue* v = f.find(info.architecture.toStdString() + ".context_length"))
        info.contextLength = static_cast<int>(v->asUInt().value_or(0));
    const QString tmpl = stringKey(f, "tokenizer.chat_template");
    info.chatFormat = QString::fromLatin1(
        format ? format->name() : ChatFormat::detect(tmpl.toStdString(), info.architecture.toStdString()).name());
    info.defaults = modelDefaults(f);
    return info;
}

Result<ModelFileInfo> inspectModel(const QString& path) {
    auto file = GgufFile::open(path.toStdString());
    if (!file) return std::unexpected(file.error());
    const auto parts = loadModelParts(**file);
    ModelFileInfo info = describeModel(**file, parts ? &parts->chatFormat : nullptr);
    if (!parts) info.unsupported = describe(parts.error());
    return info;
}

QString formatBytes(qint64 bytes) {
    const double mb = static_cast<double>(bytes) / 1e6;
    return mb < 1000 ? QStringLiteral("%1 MB").arg(mb, 0, 'f', 1) : QStringLiteral("%1 GB").arg(mb / 1000, 0, 'f', 2);
}

QString formatParams(qint64 n) {
    const double x = static_cast<double>(n);
    if (x >= 1e9) return QStringLiteral("%1 B").arg(x / 1e9, 0, 'f', 1);
    if (x >= 1e6) return QStringLiteral("%1 M").arg(x / 1e6, 0, 'f', x < 1e7 ? 1 : 0);
    return QStringLiteral("%1 K").arg(x / 1e3, 0, 'f', 0);
}

}  // namespace hearth
