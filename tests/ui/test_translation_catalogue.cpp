// The Simplified Chinese catalogue (translations/hearth_zh_CN.ts) is complete (issue 27): every
// message has a finished translation that is not the English source, unless all its words are
// names or units (chinese_words.h); and the catalogue holds every tr() string of the sources
// lupdate scans (update_translations' own project, run on a copy), so a string added to the
// code without its Chinese fails here too.
#include <QFile>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QXmlStreamReader>
#include <QtTest>

#include "tests/support/test_env.h"
#include "tests/ui/chinese_words.h"

using namespace hearth::test;

namespace {

struct CatalogueMessage {
    QString context, source, translation;
    QString type;  // "", "unfinished", "vanished", "obsolete"
};

QList<CatalogueMessage> readCatalogue(const QString& path, QString* error) {
    QList<CatalogueMessage> out;
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) {
        *error = "cannot read " + path;
        return out;
    }
    QXmlStreamReader xml(&f);
    QString context;
    CatalogueMessage m;
    while (!xml.atEnd()) {
        xml.readNext();
        if (!xml.isStartElement()) continue;
        const auto name = xml.name();
        if (name == QLatin1String("name")) context = xml.readElementText();
        else if (name == QLatin1String("message"))
            m = CatalogueMessage{.context = context, .source = {}, .translation = {}, .type = {}};
        else if (name == QLatin1String("source")) m.source = xml.readElementText();
        else if (name == QLatin1String("translation")) {
            m.type = xml.attributes().value("type").toString();
            // Plural messages hold numerusform children; their texts joined are the translation.
            QString text;
            while (!(xml.isEndElement() && xml.name() == QLatin1String("translation")) && !xml.atEnd()) {
                xml.readNext();
                if (xml.isCharacters()) text += xml.text();
            }
            m.translation = text.trimmed();
            out << m;
        }
    }
    if (xml.hasError()) *error = path + ": " + xml.errorString();
    return out;
}

// The values of `set(lupdate_NAME "a;b;c")` in the project file qt_add_translations wrote.
QStringList projectList(const QString& project, const QString& name) {
    const QRegularExpression re("set\\(lupdate_" + name + " \"([^\"]*)\"\\)");
    const auto m = re.match(project);
    return m.hasMatch() ? m.captured(1).split(';', Qt::SkipEmptyParts) : QStringList();
}

QString jsonArray(const QStringList& items) {
    QStringList quoted;
    for (const QString& i : items) quoted << '"' + i + '"';
    return '[' + quoted.join(", ") + ']';
}

}  // namespace

class TestTranslationCatalogue : public QObject {
    Q_OBJECT
private slots:
    void everyMessageIsTranslated();
    void theCatalogueHoldsEveryStringOfTheSources();
    void theWordRuleSeesEnglish();
};

static QString cataloguePath() { return sourceDir() + "/translations/hearth_zh_CN.ts"; }

void TestTranslationCatalogue::everyMessageIsTranslated() {
    QString error;
    const QList<CatalogueMessage> messages = readCatalogue(cataloguePath(), &error);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    QVERIFY(messages.size() > 100);
    QStringList bad;
    for (const CatalogueMessage& m : messages) {
        if (m.type == QLatin1String("vanished") || m.type == QLatin1String("obsolete")) continue;  // not compiled
        const QString where = m.context + ": \"" + m.source.left(70) + '"';
        if (m.type == QLatin1String("unfinished")) bad << "unfinished " + where;
        else if (m.translation.isEmpty()) bad << "empty " + where;
        else if (m.translation == m.source && !englishWords(m.source).isEmpty()) bad << "same as English " + where;
        else if (const QStringList words = englishWords(m.translation); !words.isEmpty())
            bad << "English words " + words.join(',') + " in " + where;
    }
    for (const QString& b : bad) qWarning("%s", qPrintable(b));
    QVERIFY2(bad.isEmpty(), qPrintable(QString::number(bad.size()) + " messages (above)"));
}

void TestTranslationCatalogue::theCatalogueHoldsEveryStringOfTheSources() {
    QFile projectFile(HEARTH_LUPDATE_PROJECT);
    QVERIFY2(projectFile.open(QIODevice::ReadOnly), HEARTH_LUPDATE_PROJECT);
    const QString project = QString::fromUtf8(projectFile.readAll());
    const QStringList sources = projectList(project, "sources"), includes = projectList(project, "include_paths");
    QVERIFY(sources.size() > 10);
    QTemporaryDir dir;
    const QString copy = dir.filePath("hearth_zh_CN.ts");
    QVERIFY(QFile::copy(cataloguePath(), copy));
    QFile json(dir.filePath("project.json"));
    QVERIFY(json.open(QIODevice::WriteOnly));
    const QString projectDir = sourceDir() + "/ui/CMakeLists.txt";  // locations relative to the real file
    json.write(QStringLiteral("{\"projectFile\": \"%1\", \"includePaths\": %2, \"sources\": %3, \"translations\": %4}")
                   .arg(projectDir, jsonArray(includes), jsonArray(sources), jsonArray({copy}))
                   .toUtf8());
    json.close();
    QProcess lupdate;
    lupdate.setProcessChannelMode(QProcess::MergedChannels);
    lupdate.start(HEARTH_LUPDATE, {"-silent", "-no-obsolete", "-project", json.fileName()});
    QVERIFY(lupdate.waitForFinished(120000));
    QVERIFY2(lupdate.exitCode() == 0, lupdate.readAll().constData());
    QString error;
    QStringList missing;
    for (const CatalogueMessage& m : readCatalogue(copy, &error))
        if (m.type == QLatin1String("unfinished") && m.translation.isEmpty())
            missing << m.context + ": \"" + m.source.left(70) + '"';
    QVERIFY2(error.isEmpty(), qPrintable(error));
    for (const QString& m : missing) qWarning("not in the catalogue: %s", qPrintable(m));
    QVERIFY2(missing.isEmpty(),
             qPrintable(QString::number(missing.size()) +
                        " strings of the sources are not in the catalogue (above): run the "
                        "update_translations target, then translate them"));
}

// The rule itself: English is found, names, units, paths and patterns are not.
void TestTranslationCatalogue::theWordRuleSeesEnglish() {
    QCOMPARE(englishWords("Cancel"), QStringList{"Cancel"});
    QCOMPARE(englishWords("取消 Loading the model…"), (QStringList{"Loading", "the", "model"}));
    QVERIFY(englishWords("SmolLM2 · 135 M · Q4_1 · 94.0 MB · 12.5 tok/s · KV 1,024", nameWords("SmolLM2")).isEmpty());
    QVERIFY(englishWords("<b>模型</b> /home/user/models/stories260K.gguf (*.gguf) https://example.org/x").isEmpty());
    QVERIFY(englishWords("&Hearth · CPU/AVX2 · Top-p · GGUF 模型 (*.gguf);;所有文件 (*)").isEmpty());
    QCOMPARE(englishWords("上下文 context 0 / 8,192"), QStringList{"context"});
    QCOMPARE(englishWords("http://box:8000（vLLM、SGLang 或 other） /tmp/a/b、more"), (QStringList{"other", "more"}));
}

QTEST_GUILESS_MAIN(TestTranslationCatalogue)
#include "test_translation_catalogue.moc"
