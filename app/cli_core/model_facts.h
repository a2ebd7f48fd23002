// The facts of a GGUF file that `hearth-cli info` and the model picker show, without Qt: its
// family, parameter count, quantization, trained context, chat format, and whether Hearth can
// run it (loading's checks, with the reason when it cannot). app/common/model_info.h adds the
// sampling defaults and Qt types for the picker.
#pragma once

#include <cstdint>
#include <string>

#include "engine/error.h"

namespace hearth {
class ChatFormat;
class GgufFile;
}  // namespace hearth

namespace hearth::cli::core {

struct ModelFacts {
    std::string path;
    std::string name;  // general.name, else the file name without its last extension
    std::string architecture;  // general.architecture
    std::string family;  // the architecture's display name ("Llama", "Qwen 3"), else the architecture
    int64_t nParams = 0;  // elements of all tensors
    std::string quantization;  // general.file_type's name, else the type holding most of the matrices' bytes
    std::string chatFormat;  // "chatml", "gemma", "llama2", "plain", ...
    int64_t fileBytes = 0;
    int contextLength = 0;  // <arch>.context_length: the trained context
    std::string unsupported = {};  // why Hearth cannot run the file; empty: it can
};

// The metadata facts of a file; format: the chat format loading detected (null: detected from
// the template and the architecture alone). Sets no `unsupported`.
[[nodiscard]] ModelFacts describeModelFacts(const GgufFile& file, const ChatFormat* format = nullptr);
// Validates the file and runs loading's checks on it (loadModelParts) without reading weights.
// Errors: GgufFile::open's; a valid GGUF that Hearth cannot run has `unsupported` set.
[[nodiscard]] Result<ModelFacts> inspectModelFacts(const std::string& path);
// "135 M", "1.1 B", "4.6 M", "292 K"
[[nodiscard]] std::string formatParams(int64_t n);
// "135.0 MB", "1.2 GB"
[[nodiscard]] std::string formatBytes(int64_t bytes);

}  // namespace hearth::cli::core
