// What the model picker shows about a GGUF file before loading it: architecture, size,
// quantization, context length, chat format and the model's recommended sampling defaults.
#pragma once

#include <QString>

#include "app/chat/chat_settings.h"
#include "engine/error.h"

namespace hearth {

class GgufFile;

struct ModelFileInfo {
    QString path;
    QString name;          // general.name, else the file name
    QString architecture;  // general.architecture
    QString quantization;  // general.file_type's name, else the type holding most weight bytes
    QString chatFormat;    // "chatml", "gemma", "llama2", "plain"
    qint64 fileBytes = 0;
    int contextLength = 0;  // <arch>.context_length
    ChatSettings defaults;  // modelDefaults(file)
};

// Validates the file's metadata (GgufFile::open) and reads the facts. Errors: GgufFile::open's.
Result<ModelFileInfo> inspectModel(const QString& path);
ModelFileInfo describeModel(const GgufFile& file);
// "135.0 MB", "1.2 GB"
QString formatBytes(qint64 bytes);

}  // namespace hearth
