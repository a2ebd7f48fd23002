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
    std::string name;  // readableModelName(): what the window, the terminal and the server call the model
    std::string architecture;  // general.architecture
    std::string family;  // the architecture's display name ("Llama", "Qwen 3"), else the architecture
    int64_t nParams = 0;  // elements of all tensors
    std::string quantization;  // general.file_type's name, else the type holding most of the matrices' bytes
    std::string chatFormat;  // "chatml", "gemma", "llama2", "plain", ...
    int64_t fileBytes = 0;
    int contextLength = 0;  // <arch>.context_length: the trained context
    std::string unsupported = {};  // why Hearth cannot run the file; empty: it can
    bool chatTuned = true;  // false: a base model (isChatTuned), which continues text rather than answering
};

// What a readable model name is made of: GGUF's naming fields (../shared/GGUF.md, general.*)
// and the file's path.
struct ModelNameFields {
    std::string basename = {};  // general.basename ("smollm2", "Meta-Llama-3.1")
    std::string sizeLabel = {};  // general.size_label ("135M", "8x7B")
    std::string finetune = {};  // general.finetune ("Instruct", "8k-lc100k-mix1-ep2")
    std::string name = {};  // general.name, the converter's title-cased folder name: the last resort
    std::string path = {};  // the model file (the first part of a split model)
};

// The name people read for a model, never general.name while anything better exists:
// - the cleaned file name (cleanedModelFileName) when it contains general.basename (letters and
//   digits compared, case ignored): the file name carries the publisher's spelling and the
//   variant ("SmolLM2-135M-Instruct" where the metadata says "smollm2", "135M" and a training
//   run's tag as the fine-tune);
// - else basename-size_label-finetune, those present (a file named by its hash, as Ollama's
//   blobs are, or renamed to "model.gguf");
// - else, without a basename, the cleaned file name, and general.name only when the file name
//   is a hash; "model" when there is nothing at all.
[[nodiscard]] std::string readableModelName(const ModelNameFields& fields);
[[nodiscard]] std::string readableModelName(const GgufFile& file);
// The file name without its folder, its extension, a split part's "-00001-of-00003" and a
// quantization suffix (".Q4_1", "-q4_k_m", "-IQ3_XS", ".F16", "-BF16"): "SmolLM2-135M-Instruct".
// Empty when nothing is left or the name is a content hash ("sha256-<hex>", or 32+ hex digits).
[[nodiscard]] std::string cleanedModelFileName(const std::string& path);

// Whether a model was tuned to follow a chat (instruct/chat/"it" fine-tunes) rather than being a
// base (pretrained) model, from its naming fields and file name, and whether it ships a chat
// template: a name word "instruct", "chat", "it", "sft", "dpo", "rlhf", "orpo" or "assistant" says
// tuned; else the word "base" says base; else a chat template says tuned, and its absence base
// (Gemma 3 270M, the base model, has neither; its "-it" sibling has both).
[[nodiscard]] bool isChatTuned(const ModelNameFields& fields, bool hasChatTemplate);

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
