// Human-readable descriptions of the compute backends and of a loaded model, shared by
// `hearth-cli info` and the GUI.
#pragma once

#include <QString>

namespace hearth {

class Engine;

QString backendsText();                  // one line per backend: name, available or why not
QString modelInfoText(const Engine& e);  // architecture, parameters, types, context, vocabulary, chat format

}  // namespace hearth
