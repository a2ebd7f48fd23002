// The interface's language: Hearth's own catalogue (embedded as :/i18n/hearth_<locale>.qm) and
// Qt's (qtbase_<locale>.qm from Debian's qt6-translations-l10n: the standard buttons OK/Cancel,
// the file dialog, the text fields' context menu), installed on the application for as long as
// the object lives, and QLocale's default (dates, numbers). GUI thread only; one per process (gui_main.cpp's, or a test's).
#pragma once

#include <QLocale>
#include <QTranslator>

namespace hearth {

class InterfaceLanguage {
public:
    // language: the settings' choice ("en", "zh_CN"); empty: the system's. English needs no
    // catalogue of Hearth's; a missing Qt catalogue leaves Qt's own words in English.
    explicit InterfaceLanguage(const QString& language);
    ~InterfaceLanguage();
    InterfaceLanguage(const InterfaceLanguage&) = delete;
    InterfaceLanguage& operator=(const InterfaceLanguage&) = delete;

    QLocale locale() const { return locale_; }
    bool hasHearthCatalogue() const { return hearthInstalled_; }
    bool hasQtCatalogue() const { return qtInstalled_; }  // false: the package is not installed

private:
    QLocale locale_, previousLocale_;
    QTranslator hearth_, qt_;
    bool hearthInstalled_ = false, qtInstalled_ = false;
};

}  // namespace hearth
