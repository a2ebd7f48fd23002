// Qt's catalogues live in QLibraryInfo's translations folder (/usr/share/qt6/translations on
// Debian 12); qtbase holds the words of Qt Widgets' own dialogs and buttons.
#include "ui/interface_language.h"

#include <QCoreApplication>
#include <QLibraryInfo>

namespace hearth {

InterfaceLanguage::InterfaceLanguage(const QString& language)
    : locale_(language.isEmpty() ? QLocale::system() : QLocale(language)), previousLocale_(QLocale()) {
    QLocale::setDefault(locale_);  // dates and numbers in the interface's language too
    const QString separator = QStringLiteral("_");
    if (hearth_.load(locale_, QStringLiteral("hearth"), separator, QStringLiteral(":/i18n")))
        hearthInstalled_ = QCoreApplication::installTranslator(&hearth_);
    if (qt_.load(locale_, QStringLiteral("qtbase"), separator, QLibraryInfo::path(QLibraryInfo::TranslationsPath)))
        qtInstalled_ = QCoreApplication::installTranslator(&qt_);
}

InterfaceLanguage::~InterfaceLanguage() {
    if (qtInstalled_) QCoreApplication::removeTranslator(&qt_);
    if (hearthInstalled_) QCoreApplication::removeTranslator(&hearth_);
    QLocale::setDefault(previousLocale_);
}

}  // namespace hearth
