// Reads the picker's facts from GGUF metadata (../shared/GGUF.md: general.*, <arch>.*).
#include "app/common/model_info.h"

#include <QFileInfo>
#include <map>

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
        {0, "F32"},     {1, "F16"},     {2, "Q4_0"},    {3, "Q4_1"},    {7, "Q8_0"},
        {8, "Q5_0"},    {9, "Q5_1"},    {10, "Q2_K"},   {11, "Q3_K_S"}, {12, "Q3_K_M"},
        {13, "Q3_K_L"}, {14, "Q4_K_S"}, {15, "Q4_K_M"}, {16, "Q5_K_S"}, {17, "Q5_K_M"},
        {18, "Q6_K"},   {32, "BF16"},
    };
    const auto it = names.find(t);
    return it == names.end() ? QString() : QString::fromLatin1(it->second);
}

QString dominantType(const GgufFile& f) {
    std::map<std::string, uint64_t> bytesByType;
    for (const GgufTensorInfo& t : f.tensors()) bytesByType[dtypeInfo(t.type).name] += t.nBytes;
    const auto it = std::max_element(bytesByType.begin(), bytesByType.end(),
                                     [](const auto& a, const auto& b) { return a.second < b.second; });
    return it == bytesByType.end() ? QString() : QString::fromStdString(it->first);
}

}  // namespace

ModelFileInfo describeModel(const GgufFile& f) {
    ModelFileInfo info;
    info.path = QString::fromStdString(f.path());
    info.architecture = stringKey(f, "general.architecture");
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
        ChatFormat::detect(tmpl.toStdString(), info.architecture.toStdString()).name());
    info.defaults = modelDefaults(f);
    return info;
}

Result<ModelFileInfo> inspectModel(const QString& path) {
    auto file = GgufFile::open(path.toStdString());
    if (!file) return std::unexpected(file.error());
    return describeModel(**file);
}

QString formatBytes(qint64 bytes) {
    const double mb = static_cast<double>(bytes) / 1e6;
    return mb < 1000 ? QStringLiteral("%1 MB").arg(mb, 0, 'f', 1) : QStringLiteral("%1 GB").arg(mb / 1000, 0, 'f', 2);
}

}  // namespace hearth
