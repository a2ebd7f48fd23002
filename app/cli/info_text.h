// Human-readable descriptions of the compute backends and of a loaded model, shared by
// `hearth-cli info` and the GUI.
#pragma once

#include <QString>

namespace hearth {

class Engine;
struct ModelFileInfo;

QString backendsText();  // one line per backend: name, available or why not
// What the CPU and OS offer, which kernel levels run here and which is used and why (HEARTH_CPU).
// The line "  levels this CPU runs: reference avx2 ..." is read by the test command.
QString cpuText();
// The file's facts (app/common/model_info.h: name, architecture and family, parameters,
// quantization, trained context, chat format, whether Hearth runs it and why not).
QString modelFileText(const ModelFileInfo& info);
// What loading decided: shapes, tensor types, the context used, vocabulary, a chat-format
// fallback, the backend.
QString modelInfoText(const Engine& e);

}  // namespace hearth
