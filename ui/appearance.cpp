// The dark palette follows Fusion's conventions (window #2b2b2b, base #1e1e1e, blue highlight).
#include "ui/appearance.h"

#include <QApplication>
#include <QPalette>
#include <QStyle>
#include <QStyleFactory>

namespace hearth {

namespace {

QPalette darkPalette() {
    QPalette p;
    const QColor window(43, 43, 43), base(30, 30, 30), text(230, 230, 230), dim(140, 140, 140);
    p.setColor(QPalette::Window, window);
    p.setColor(QPalette::WindowText, text);
    p.setColor(QPalette::Base, base);
    p.setColor(QPalette::AlternateBase, window);
    p.setColor(QPalette::ToolTipBase, window);
    p.setColor(QPalette::ToolTipText, text);
    p.setColor(QPalette::Text, text);
    p.setColor(QPalette::PlaceholderText, dim);
    p.setColor(QPalette::Button, QColor(53, 53, 53));
    p.setColor(QPalette::ButtonText, text);
    p.setColor(QPalette::BrightText, Qt::red);
    p.setColor(QPalette::Highlight, QColor(42, 130, 218));
    p.setColor(QPalette::HighlightedText, Qt::white);
    p.setColor(QPalette::Link, QColor(90, 160, 240));
    for (auto role : {QPalette::WindowText, QPalette::Text, QPalette::ButtonText})
        p.setColor(QPalette::Disabled, role, dim);
    return p;
}

}  // namespace

void applyAppearance(QApplication& app, const QString& mode) {
    static const QPalette systemPalette = app.palette();
    static const QString systemStyle = app.style()->name();
    if (mode.isEmpty()) {
        app.setStyle(QStyleFactory::create(systemStyle));
        app.setPalette(systemPalette);
        return;
    }
    app.setStyle(QStyleFactory::create(QStringLiteral("Fusion")));
    app.setPalette(mode == QLatin1String("dark") ? darkPalette() : app.style()->standardPalette());
}

}  // namespace hearth
