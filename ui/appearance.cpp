// Colours are chosen for contrast first (WCAG 2.1 relative luminance, 1.4.3 "Contrast
// (Minimum)"): normal text 4.5:1 on its background; disabled text at least 3:1, although
// WCAG exempts inactive controls, so that a disabled field stays legible. The message view's
// fills are opaque blends of the palette's Base with its Text or Highlight, so their contrast is
// a property of the palette that test_appearance can compute.
#include "ui/appearance.h"

#include <QApplication>
#include <QDir>
#include <QStyle>
#include <QStyleFactory>

namespace hearth {

namespace {

// a blended toward b by t (0..1), opaque.
QColor blend(const QColor& a, const QColor& b, double t) {
    const auto mix = [t](int x, int y) { return static_cast<int>(x + (y - x) * t + 0.5); };
    return QColor(mix(a.red(), b.red()), mix(a.green(), b.green()), mix(a.blue(), b.blue()));
}

struct Scheme {
    QColor window, windowText, base, alternateBase, text, button, buttonText, highlight, highlightedText, placeholder,
        link, linkVisited, toolTipBase, toolTipText, disabledText, light, midlight, mid, dark, shadow;
};

QPalette paletteOf(const Scheme& s) {
    QPalette p;
    p.setColor(QPalette::Window, s.window);
    p.setColor(QPalette::WindowText, s.windowText);
    p.setColor(QPalette::Base, s.base);
    p.setColor(QPalette::AlternateBase, s.alternateBase);
    p.setColor(QPalette::Text, s.text);
    p.setColor(QPalette::Button, s.button);
    p.setColor(QPalette::ButtonText, s.buttonText);
    p.setColor(QPalette::BrightText, s.highlightedText);
    p.setColor(QPalette::Highlight, s.highlight);
    p.setColor(QPalette::HighlightedText, s.highlightedText);
    p.setColor(QPalette::PlaceholderText, s.placeholder);
    p.setColor(QPalette::Link, s.link);
    p.setColor(QPalette::LinkVisited, s.linkVisited);
    p.setColor(QPalette::ToolTipBase, s.toolTipBase);
    p.setColor(QPalette::ToolTipText, s.toolTipText);
    p.setColor(QPalette::Light, s.light);
    p.setColor(QPalette::Midlight, s.midlight);
    p.setColor(QPalette::Mid, s.mid);
    p.setColor(QPalette::Dark, s.dark);
    p.setColor(QPalette::Shadow, s.shadow);
    for (auto role : {QPalette::WindowText, QPalette::Text, QPalette::ButtonText, QPalette::PlaceholderText})
        p.setColor(QPalette::Disabled, role, s.disabledText);
    // An inactive window keeps its selection readable (Fusion would grey it out).
    p.setColor(QPalette::Inactive, QPalette::Highlight, s.highlight);
    p.setColor(QPalette::Inactive, QPalette::HighlightedText, s.highlightedText);
    return p;
}

}  // namespace

QPalette lightPalette() {
    return paletteOf({.window = QColor(0xf3, 0xf4, 0xf6),
                      .windowText = QColor(0x1f, 0x23, 0x28),
                      .base = Qt::white,
                      .alternateBase = QColor(0xf6, 0xf7, 0xf9),
                      .text = QColor(0x1f, 0x23, 0x28),
                      .button = QColor(0xf8, 0xf9, 0xfa),
                      .buttonText = QColor(0x1f, 0x23, 0x28),
                      .highlight = QColor(0x1a, 0x5f, 0xb4),
                      .highlightedText = Qt::white,
                      .placeholder = QColor(0x5f, 0x66, 0x72),
                      .link = QColor(0x0a, 0x58, 0xca),
                      .linkVisited = QColor(0x6f, 0x42, 0xc1),
                      .toolTipBase = Qt::white,
                      .toolTipText = QColor(0x1f, 0x23, 0x28),
                      .disabledText = QColor(0x7a, 0x80, 0x8a),
                      .light = Qt::white,
                      .midlight = QColor(0xe3, 0xe5, 0xe8),
                      .mid = QColor(0xc4, 0xc8, 0xce),
                      .dark = QColor(0x9a, 0xa0, 0xa8),
                      .shadow = QColor(0x5c, 0x60, 0x66)});
}

QPalette darkPalette() {
    return paletteOf({.window = QColor(0x20, 0x21, 0x24),
                      .windowText = QColor(0xe8, 0xea, 0xed),
                      .base = QColor(0x1b, 0x1c, 0x1f),
                      .alternateBase = QColor(0x23, 0x24, 0x27),
                      .text = QColor(0xe8, 0xea, 0xed),
                      .button = QColor(0x2d, 0x2f, 0x33),
                      .buttonText = QColor(0xe8, 0xea, 0xed),
                      .highlight = QColor(0x2f, 0x6f, 0xcf),
                      .highlightedText = Qt::white,
                      .placeholder = QColor(0x9a, 0xa0, 0xa6),
                      .link = QColor(0x8a, 0xb4, 0xf8),
                      .linkVisited = QColor(0xc5, 0x8a, 0xf9),
                      .toolTipBase = QColor(0x2d, 0x2f, 0x33),
                      .toolTipText = QColor(0xe8, 0xea, 0xed),
                      .disabledText = QColor(0x80, 0x85, 0x8c),
                      .light = QColor(0x4a, 0x4d, 0x52),
                      .midlight = QColor(0x3a, 0x3c, 0x40),
                      .mid = QColor(0x45, 0x48, 0x4d),
                      .dark = QColor(0x14, 0x15, 0x17),
                      .shadow = Qt::black});
}

bool isDarkPalette(const QPalette& palette) { return palette.color(QPalette::Base).lightness() < 128; }

MessageColors messageColors(const QPalette& p) {
    const bool dark = isDarkPalette(p);
    const QColor base = p.color(QPalette::Base), text = p.color(QPalette::Text);
    const QColor highlight = p.color(QPalette::Active, QPalette::Highlight);
    MessageColors c;
    c.userBubble = blend(base, highlight, dark ? 0.32 : 0.12);
    c.userText = text;
    c.replyBubble = blend(base, text, dark ? 0.045 : 0.03);
    c.replyText = text;
    c.noticeBubble = blend(base, QColor(0xd0, 0x30, 0x30), dark ? 0.22 : 0.08);
    c.noticeBorder = dark ? QColor(0xe0, 0x6c, 0x6c) : QColor(0xc0, 0x3a, 0x3a);
    c.noticeText = text;
    c.codeBackground = blend(base, text, dark ? 0.09 : 0.065);
    c.codeText = text;
    c.codeLabel = p.color(QPalette::PlaceholderText);
    c.chipBackground = blend(base, text, dark ? 0.10 : 0.06);
    c.chipHoverBackground = blend(base, highlight, dark ? 0.45 : 0.18);
    c.chipText = text;
    c.chipDisabledText = p.color(QPalette::Disabled, QPalette::Text);
    c.mutedText = p.color(QPalette::PlaceholderText);
    return c;
}

QColor errorTextColor(const QPalette& palette) {
    return isDarkPalette(palette) ? QColor(0xff, 0x8a, 0x80) : QColor(0xb3, 0x26, 0x1e);
}

SyntaxColors syntaxColors(const QPalette& p) {
    if (isDarkPalette(p))
        return {QColor(0xd2, 0xa8, 0xff), QColor(0x7e, 0xe7, 0x87), QColor(0x9d, 0xa5, 0xae), QColor(0xff, 0xa6, 0x57)};
    return {QColor(0x6f, 0x42, 0xc1), QColor(0x11, 0x63, 0x29), QColor(0x57, 0x60, 0x6a), QColor(0x95, 0x38, 0x00)};
}

// The freedesktop icon folders (XDG Base Directory spec: $XDG_DATA_HOME, $XDG_DATA_DIRS, each
// with icons/), added where the platform plugin gives none (offscreen and minimal give no paths).
void addXdgIconPaths() {
    QStringList paths = QIcon::themeSearchPaths();
    QStringList data = qEnvironmentVariable("XDG_DATA_DIRS", QStringLiteral("/usr/local/share:/usr/share"))
                           .split(QLatin1Char(':'), Qt::SkipEmptyParts);
    data.prepend(qEnvironmentVariable("XDG_DATA_HOME", QDir::homePath() + QStringLiteral("/.local/share")));
    for (const QString& dir : data)
        if (!paths.contains(dir + QStringLiteral("/icons"))) paths << dir + QStringLiteral("/icons");
    QIcon::setThemeSearchPaths(paths);
}

void installIconTheme(const QPalette& palette, bool force) {
    static const QString platformTheme = QIcon::themeName();
    addXdgIconPaths();
    const QString breeze = isDarkPalette(palette) ? QStringLiteral("breeze-dark") : QStringLiteral("breeze");
    const bool platformHasOne = !platformTheme.isEmpty() && platformTheme != QLatin1String("hicolor");
    QIcon::setThemeName(force || !platformHasOne ? breeze : platformTheme);
    QIcon::setFallbackThemeName(breeze);
}

QIcon themeIcon(const QString& name, int fallback) {
    QIcon icon = QIcon::fromTheme(name);
    if (icon.isNull() && fallback >= 0)
        icon = QApplication::style()->standardIcon(static_cast<QStyle::StandardPixmap>(fallback));
    return icon;
}

void applyAppearance(QApplication& app, const QString& mode) {
    static const bool systemDark = isDarkPalette(app.palette());
    static const QString systemStyle = app.style()->name();
    const bool dark = mode.isEmpty() ? systemDark : mode == QLatin1String("dark");
    app.setStyle(QStyleFactory::create(mode.isEmpty() ? systemStyle : QStringLiteral("Fusion")));
    app.setPalette(dark ? darkPalette() : lightPalette());
    installIconTheme(app.palette(), !mode.isEmpty());
}

}  // namespace hearth
