// Human-readable descriptions of the compute backends and of a loaded model, shared by
// `hearth-cli info` and the GUI.
#pragma once

#include <QString>

namespace hearth {

class Engine;

QString backendsText();                  // one line per backend: name, available or why not
// What the CPU and OS offer, which kernel levels run here and which is used and why (HEARTH_CPU).
// The line "  levels this CPU runs: reference avx2 ..." is read by the test command.
QString cpuText();
QString modelInfoText(const Engine& e);  // architecture, parameters, types, context, vocabulary, chat format

}  // namespace hearth
