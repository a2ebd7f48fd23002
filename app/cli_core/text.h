// Text helpers of the Qt-free CLI core: UTF-8 as a QString would hold it, numbers formatted
// as Qt formats them, so that the Linux build (Qt) and the Windows build (no Qt) print the same.
#pragma once

#include <string>

namespace hearth::cli::core {

// text with every byte that does not belong to a well-formed UTF-8 sequence replaced by U+FFFD
// (what QString::fromUtf8 then toUtf8 gives).
[[nodiscard]] std::string validUtf8(const std::string& text);
// text on one line: control characters (Unicode category Cc) become spaces.
[[nodiscard]] std::string withoutControls(const std::string& text);
// A finite double as QJsonDocument writes it (the shortest digits that read back the same);
// "null" for infinities and NaN.
[[nodiscard]] std::string formatJsonDouble(double d);
// x with `decimals` digits after the point (QString::arg(x, 0, 'f', decimals)).
[[nodiscard]] std::string fixed(double x, int decimals);

}  // namespace hearth::cli::core
