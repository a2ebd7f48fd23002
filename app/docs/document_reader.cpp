// PDFs go through pdftotext rather than a PDF library in the process: a malformed PDF can
// crash or hang a parser, and in a child process that costs the attachment, not the window
// (killed after 60 s). Text files must be valid UTF-8 (or UTF-16 with a BOM) and hold no NUL:
// a guess at another encoding would put mojibake into the prompt.
#include "app/docs/document_reader.h"

#include <QCoreApplication>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QStandardPaths>
#include <QStringDecoder>

#include "engine/str_cat.h"

namespace hearth {

namespace {

// why: a QT_TRANSLATE_NOOP text of context hearth::Documents, shown in the user's language.
std::unexpected<Error> refuse(ErrorCode code, const QFileInfo& file, const char* why) {
    const QString said = QCoreApplication::translate("hearth::Documents", why);
    return fail(code, strCat(file.fileName().toStdString(), ": ", said.toStdString()));
}

QString kindOf(const QFileInfo& file) {
    const QString suffix = file.suffix().toLower();
    if (suffix == QLatin1String("pdf")) return QStringLiteral("pdf");
    if (suffix == QLatin1String("md") || suffix == QLatin1String("markdown")) return QStringLiteral("markdown");
    static const QStringList code{"c",   "cc",   "cpp", "cxx",   "h",     "hpp", "py",  "js",   "ts",  "java",
                                  "rs",  "go",   "rb",  "sh",    "cs",    "kt",  "sql", "json", "xml", "yaml",
                                  "yml", "toml", "qml", "cmake", "swift", "php", "lua", "html", "css"};
    return code.contains(suffix) ? QStringLiteral("code") : QStringLiteral("text");
}

// UTF-8 (BOM dropped) or UTF-16 with a BOM; nullopt for anything else.
std::optional<std::string> decodeText(const QByteArray& bytes) {
    if (bytes.startsWith("\xFF\xFE") || bytes.startsWith("\xFE\xFF")) {
        QStringDecoder utf16(QStringDecoder::Utf16, QStringDecoder::Flag::Stateless);
        const QString text = utf16.decode(bytes);
        if (utf16.hasError() || text.contains(QChar(0))) return std::nullopt;
        return text.toStdString();
    }
    if (bytes.contains('\0')) return std::nullopt;
    QStringDecoder utf8(QStringDecoder::Utf8, QStringDecoder::Flag::Stateless);
    const QString text = utf8.decode(bytes);
    if (utf8.hasError()) return std::nullopt;
    const QByteArray body = bytes.startsWith("\xEF\xBB\xBF") ? bytes.mid(3) : bytes;
    return body.toStdString();
}

// Keeps tab, line ends and printable characters: a PDF's form feeds between pages and other
// control characters mean nothing to a model.
std::string withoutControls(std::string text) {
    std::string out;
    out.reserve(text.size());
    for (const char c : text) {
        const auto u = static_cast<unsigned char>(c);
        if (c == '\f') out += "\n\n";
        else if (u >= 0x20 || c == '\n' || c == '\t') out += c;
        else if (c == '\r') continue;
    }
    return out;
}

// PDFs often set "fi", "fl", "ff" as one ligature glyph, which pdftotext gives back as U+FB00..
// U+FB06: spelled out, so that a question with "figures" finds "ﬁgures".
std::string withoutLigatures(std::string text) {
    if (text.find("\xEF\xAC") == std::string::npos) return text;  // the UTF-8 lead of U+FB00..U+FB3F
    QString q = QString::fromStdString(text);
    for (char16_t c = 0xFB00; c <= 0xFB06; ++c)
        q.replace(QChar(c), QString(QChar(c)).normalized(QString::NormalizationForm_KC));
    return q.toStdString();
}

bool blank(const std::string& text) { return text.find_first_not_of(" \t\n") == std::string::npos; }

}  // namespace

Result<std::string> pdfText(const QString& path) {
    const QFileInfo file(path);
    const QString tool = QStandardPaths::findExecutable(QStringLiteral("pdftotext"));
    if (tool.isEmpty())
        return refuse(ErrorCode::Io, file,
                      QT_TRANSLATE_NOOP("hearth::Documents",
                                        "PDF text needs pdftotext, which is not installed (Debian and Ubuntu: "
                                        "sudo apt install poppler-utils)"));
    QProcess p;
    p.start(tool, {QStringLiteral("-enc"), QStringLiteral("UTF-8"), QStringLiteral("-q"), path, QStringLiteral("-")});
    if (!p.waitForStarted(10'000))
        return refuse(ErrorCode::Io, file, QT_TRANSLATE_NOOP("hearth::Documents", "pdftotext did not start"));
    p.closeWriteChannel();
    if (!p.waitForFinished(60'000)) {
        p.kill();
        p.waitForFinished(5'000);
        return refuse(
            ErrorCode::Io, file,
            QT_TRANSLATE_NOOP("hearth::Documents", "reading the PDF took more than a minute; it was stopped"));
    }
    if (p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0)
        return refuse(
            ErrorCode::InvalidFormat, file,
            QT_TRANSLATE_NOOP("hearth::Documents", "this PDF cannot be read (damaged, encrypted or not a PDF)"));
    auto text = decodeText(p.readAllStandardOutput());
    if (!text)
        return refuse(ErrorCode::InvalidFormat, file,
                      QT_TRANSLATE_NOOP("hearth::Documents", "the PDF's text is not valid UTF-8"));
    return withoutControls(withoutLigatures(std::move(*text)));
}

Result<DocumentText> readDocument(const QString& path) {
    const QFileInfo file(path);
    if (!file.exists())
        return refuse(ErrorCode::Io, file, QT_TRANSLATE_NOOP("hearth::Documents", "the file does not exist"));
    if (!file.isFile()) return refuse(ErrorCode::Io, file, QT_TRANSLATE_NOOP("hearth::Documents", "not a file"));
    if (file.size() > kMaxDocumentBytes)
        return refuse(ErrorCode::Io, file, QT_TRANSLATE_NOOP("hearth::Documents", "the file is larger than 32 MiB"));
    DocumentText doc{.name = file.fileName(), .kind = kindOf(file), .text = {}};
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return fail(ErrorCode::Io, strCat(file.fileName().toStdString(), ": ", f.errorString().toStdString()));
    const QByteArray bytes = f.readAll();
    if (f.error() != QFileDevice::NoError)
        return fail(ErrorCode::Io, strCat(file.fileName().toStdString(), ": ", f.errorString().toStdString()));
    if (doc.kind == QLatin1String("pdf") || bytes.startsWith("%PDF-")) {
        doc.kind = QStringLiteral("pdf");
        auto text = pdfText(path);
        if (!text) return std::unexpected(text.error());
        doc.text = std::move(*text);
    } else {
        auto text = decodeText(bytes);
        if (!text)
            return refuse(ErrorCode::InvalidFormat, file,
                          QT_TRANSLATE_NOOP("hearth::Documents",
                                            "not a text file (binary data or an encoding other than UTF-8); "
                                            "attach text, Markdown, source code or PDF files"));
        doc.text = withoutControls(std::move(*text));
    }
    if (blank(doc.text))
        return refuse(ErrorCode::InvalidFormat, file, QT_TRANSLATE_NOOP("hearth::Documents", "there is no text in it"));
    return doc;
}

}  // namespace hearth
