// Light and dark: by default Hearth keeps the platform's palette (which follows the desktop's
// light/dark setting); "light" or "dark" in the settings forces the Fusion style with that palette.
#pragma once

#include <QString>

class QApplication;

namespace hearth {

void applyAppearance(QApplication& app, const QString& mode);  // "", "light", "dark"

}  // namespace hearth
