// What the model picker (and hearth-cli info) shows about a GGUF file before loading it: its
// family, parameter count, quantization, trained context, chat format, the model's recommended
// sampling defaults, and whether Hearth can run it - decided by the checks loading runs, with
// their reason when it cannot -, where it was found, and whether it fits in memory.
#pragma once

#include <QString>
#include <QStringList>

#include "app/chat/chat_settings.h"
#include "app/common/memory_fit.h"
#include "engine/error.h"

namespace hearth {

class ChatFormat;
class GgufFile;

struct ModelFileInfo {
    QString path;
    QString name;  // readable: cli::core::readableModelName (never the raw general.name while better exists)
    QString architecture;  // general.architecture
    QString family;  // the architecture's display name ("Llama", "Qwen 3", "Phi-3"), else the architecture
    qint64 nParams = 0;  // elements of all tensors (ModelConfig::nParams)
    QString quantization;  // general.file_type's name, else the type holding most of the matrices' bytes
    QString chatFormat;  // "chatml", "gemma", "llama2", "plain", ...
    qint64 fileBytes = 0;  // of every part of a split model
    QStringList files;  // the model's files: one, or every part of a split model
    int contextLength = 0;  // <arch>.context_length: the trained context
    ChatSettings defaults;  // modelDefaults(file)
    QString unsupported;  // why Hearth cannot run the file (loadModelParts' error, described); empty: it can
    bool chatTuned = true;  // false: a base model, not tuned for chat (cli::core::isChatTuned)
    QString source;  // where it was found ("LM Studio", "Ollama", ...: modelSourceName); empty: opened directly
    qint64 weightBytes = 0;  // the tensors' bytes
    KvLayout kvLayout;  // the engine's KV layout for the model (nLayers 0: unknown, when it cannot run)
    PlacementSizes placement;  // the tensors' sizes by layer, for the GPU's share (empty when it cannot run)
    MemoryEstimate memory;  // at the options inspectModel was given (estimateMemory again for others)
};

// Validates the file (GgufFile::open) and runs loading's checks on it (loadModelParts: the
// architecture, its hyperparameters and tensors, the vocabulary and its pre-tokenizer) without
// reading weights. Errors: GgufFile::open's (a file that is no valid GGUF); a valid GGUF that
// Hearth cannot run is a record with `unsupported` set.
// memory: the context, KV type and available memory `memory` is estimated for.
Result<ModelFileInfo> inspectModel(const QString& path, const MemoryOptions& memory = {});
// estimateMemory for info's weights and KV layout.
MemoryEstimate estimateMemory(const ModelFileInfo& info, const MemoryOptions& options);
// The metadata facts of a file; format: the chat format loading detected (null: detected from
// the template and the architecture alone). Sets no `unsupported`.
ModelFileInfo describeModel(const GgufFile& file, const ChatFormat* format = nullptr);
// The readable name of the model at path (cli::core::readableModelName) for a label of a model
// that is not loaded, e.g. the one a stored conversation last used: reads the file's metadata
// (memory-mapped, no weights); a file that cannot be opened is named by its cleaned file name.
QString modelDisplayName(const QString& path);
// "135.0 MB", "1.2 GB"
QString formatBytes(qint64 bytes);
// "135 M", "1.1 B", "4.6 M", "292 K"
QString formatParams(qint64 n);

}  // namespace hearth
