// Light and dark: Hearth's own palettes, both readable (WCAG AA, 4.5:1, for every text colour on
// the background it is drawn on; test_appearance checks them), the colours the message view
// paints with, and the icon theme. "light" or "dark" in the settings forces the Fusion style
// with that palette; the default ("") keeps the platform's style and follows its light or dark
// choice with the matching palette.
#pragma once

#include <QColor>
#include <QIcon>
#include <QPalette>
#include <QString>

class QApplication;

namespace hearth {

void applyAppearance(QApplication& app, const QString& mode);  // "", "light", "dark"

QPalette lightPalette();
QPalette darkPalette();
bool isDarkPalette(const QPalette& palette);  // by the lightness of its Base

// The message view's colours for a palette (MessageDelegate paints with these).
struct MessageColors {
    QColor userBubble, userText;  // a user's message, on the right
    QColor replyBubble, replyText;  // a reply's card
    QColor noticeBubble, noticeBorder, noticeText;  // a notice (an error, a refused restore)
    QColor codeBackground, codeText, codeLabel;  // a code block and its language label
    QColor chipBackground, chipHoverBackground, chipText, chipDisabledText;  // per-message buttons
    QColor mutedText;  // "stopped", the folded reasoning
};
MessageColors messageColors(const QPalette& palette);

// Error text (a setting out of range), readable on the palette's Window and Base.
QColor errorTextColor(const QPalette& palette);

// Code tokens' colours (app/common/code_highlighter.h), readable on MessageColors::codeBackground.
struct SyntaxColors {
    QColor keyword, string, comment, number;
};
SyntaxColors syntaxColors(const QPalette& palette);

// The icon theme: Breeze (breeze-icon-theme, a package dependency) for the palette's lightness,
// when the platform names no theme (bare X sessions, offscreen) or a mode is forced, and as the
// fallback theme for names the platform's theme lacks. Called by applyAppearance.
void installIconTheme(const QPalette& palette, bool force);
// The theme's icon for name; where no theme has it, the style's standard icon fallback (a
// QStyle::StandardPixmap), or a null icon when fallback is -1: the caller then shows its text.
QIcon themeIcon(const QString& name, int fallback = -1);

}  // namespace hearth
