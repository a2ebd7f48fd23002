// Human-readable descriptions of the compute backends, the CPU and a loaded model, for
// `hearth-cli info` (both builds).
#pragma once

#include <string>

namespace hearth {
class Engine;
}

namespace hearth::cli::core {

struct ModelFacts;

std::string backendsText();  // one line per backend: name, available or why not
// What the CPU and OS offer, which kernel levels run here and which is used and why (HEARTH_CPU).
// The line "  levels this CPU runs: reference avx2 ..." is read by the test command.
std::string cpuText();
// The file's facts (model_facts.h: name, architecture and family, parameters, quantization,
// trained context, chat format, whether Hearth runs it and why not).
std::string modelFileText(const ModelFacts& info);
// What loading decided: shapes, tensor types, the context used, vocabulary, a chat-format
// fallback, the backend.
std::string modelInfoText(const Engine& e);

}  // namespace hearth::cli::core
