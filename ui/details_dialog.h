// "Details…": the technical text behind a plain message (an engine error, a KV refusal), in
// English as the engine wrote it, and labelled so in every language.
#pragma once

#include <QString>

class QWidget;

namespace hearth {

// Opens a window-modal box (object name "detailsDialog", deleted when closed) and returns at
// once: the plain summary (when given) over the labelled technical text.
void showTechnicalDetails(QWidget* parent, const QString& details, const QString& summary = {});

}  // namespace hearth
