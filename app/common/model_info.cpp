// The picker's facts of a GGUF file: the Qt-free core's (app/cli_core/model_facts.h), which
// `hearth-cli info` prints too, plus the model's recommended sampling defaults.
#include "app/common/model_info.h"

#include "app/cli_core/core_common.h"
#include "app/cli_core/model_facts.h"
#include "engine/engine.h"
#include "engine/model/gguf.h"
#include "engine/tokenizer/chat_format.h"

namespace hearth {

namespace {

ModelFileInfo fromFacts(const cli::core::ModelFacts& f) {
    ModelFileInfo info;
    info.path = QString::fromStdString(f.path);
    info.name = QString::fromStdString(f.name);
    info.architecture = QString::fromStdString(f.architecture);
    info.family = QString::fromStdString(f.family);
    info.nParams = f.nParams;
    info.quantization = QString::fromStdString(f.quantization);
    info.chatFormat = QString::fromStdString(f.chatFormat);
    info.fileBytes = f.fileBytes;
    info.contextLength = f.contextLength;
    info.unsupported = QString::fromStdString(f.unsupported);
    info.chatTuned = f.chatTuned;
    return info;
}

}  // namespace

ModelFileInfo describeModel(const GgufFile& f, const ChatFormat* format) {
    ModelFileInfo info = fromFacts(cli::core::describeModelFacts(f, format));
    for (const GgufTensorInfo& t : f.tensors()) info.weightBytes += static_cast<qint64>(t.nBytes);
    for (const std::string& part : f.partPaths()) info.files.append(QString::fromStdString(part));
    info.defaults = modelDefaults(f);
    return info;
}

Result<ModelFileInfo> inspectModel(const QString& path, const MemoryOptions& memory) {
    auto file = GgufFile::open(path.toStdString());
    if (!file) return std::unexpected(file.error());
    const auto parts = loadModelParts(**file);
    ModelFileInfo info = describeModel(**file, parts ? &parts->chatFormat : nullptr);
    if (!parts) info.unsupported = QString::fromStdString(cli::core::describeError(parts.error()));
    else {
        info.kvLayout = parts->model->kvLayout();
        info.placement = placementSizes(**file, parts->model->config());
    }
    info.memory = estimateMemory(info, memory);
    return info;
}

MemoryEstimate estimateMemory(const ModelFileInfo& info, const MemoryOptions& options) {
    return estimateMemory(info.weightBytes, info.kvLayout, info.contextLength, options, &info.placement);
}

QString modelDisplayName(const QString& path) {
    const std::string p = path.toStdString();
    auto file = GgufFile::open(p);
    if (file) return QString::fromStdString(cli::core::readableModelName(**file));
    const std::string cleaned = cli::core::cleanedModelFileName(p);
    return QString::fromStdString(cleaned.empty() ? cli::core::readableModelName({.path = p}) : cleaned);
}

QString formatBytes(qint64 bytes) { return QString::fromStdString(cli::core::formatBytes(bytes)); }

QString formatParams(qint64 n) { return QString::fromStdString(cli::core::formatParams(n)); }

}  // namespace hearth
