// Reading a file the user attaches into text: plain text, Markdown and source code as UTF-8
// (or UTF-16 with its byte-order mark), PDFs through `pdftotext` (poppler-utils) in a child
// process. Anything else - a binary file, a damaged or encrypted PDF, one with no text, an
// unreadable or huge file - is an error value saying so; nothing crashes and nothing is kept.
#pragma once

#include <QString>
#include <string>

#include "engine/error.h"

namespace hearth {

struct DocumentText {
    QString name;  // the file name, without its folder
    QString kind;  // "pdf", "markdown", "code" or "text"
    std::string text;  // UTF-8
};

inline constexpr qint64 kMaxDocumentBytes = qint64{32} << 20;  // 32 MiB: larger files are refused

// Errors: Io (cannot be read, too large, pdftotext missing or failing) and InvalidFormat (not
// text, no text in it), each message naming the file. Thread: any (the PDF path blocks for
// up to 60 s while pdftotext runs).
Result<DocumentText> readDocument(const QString& path);

// The text of the PDF at path, through pdftotext. Errors: as readDocument's.
Result<std::string> pdfText(const QString& path);

}  // namespace hearth
