// Maps ErrorCode to a short lead-in; the engine's message carries the specifics (field, offset).
#include "app/common/error_text.h"

namespace hearth {

QString describe(const Error& error) {
    QString lead;
    switch (error.code) {
    case ErrorCode::Io: lead = QStringLiteral("cannot read or write the file"); break;
    case ErrorCode::InvalidFormat: lead = QStringLiteral("the file is not a valid model"); break;
    case ErrorCode::Unsupported: lead = QStringLiteral("not supported"); break;
    case ErrorCode::InvalidArgument: lead = QStringLiteral("invalid setting"); break;
    case ErrorCode::OutOfMemory: lead = QStringLiteral("not enough memory"); break;
    case ErrorCode::Cancelled: lead = QStringLiteral("cancelled"); break;
    }
    // One line, whatever the file put in names or strings.
    QString detail = QString::fromUtf8(error.message.data(), static_cast<qsizetype>(error.message.size()));
    for (QChar& c : detail)
        if (c.category() == QChar::Other_Control) c = QLatin1Char(' ');
    return lead + QStringLiteral(": ") + detail;
}

}  // namespace hearth
