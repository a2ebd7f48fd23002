// describe() keeps the Qt-free CLI core's words (app/cli_core/core_common.h), so that hearth-cli
// says the same on every build. The summaries are translated in the context hearth::ErrorText.
#include "app/common/error_text.h"

#include <QCoreApplication>
#include <QLocale>

#include "app/cli_core/core_common.h"

namespace hearth {
namespace {

QString tr(const char* text, int n = -1) { return QCoreApplication::translate("hearth::ErrorText", text, nullptr, n); }

}  // namespace

QString describe(const Error& error) { return QString::fromStdString(cli::core::describeError(error)); }

QString userSummary(const Error& error) {
    if (error.cause == ErrorCause::FileCutOff) return tr("This file is incomplete — download it again.");
    switch (error.code) {
    case ErrorCode::Io: return tr("The file cannot be read. Check that it is still there and that you may read it.");
    case ErrorCode::InvalidFormat: return tr("This file is not a model Hearth can read; it may be damaged.");
    case ErrorCode::Unsupported: return tr("Hearth does not support this model yet.");
    case ErrorCode::InvalidArgument: return tr("A setting is outside what this model allows.");
    case ErrorCode::OutOfMemory:
        return tr("There is not enough memory for this. Try a shorter context or a smaller model.");
    case ErrorCode::Cancelled: return tr("Cancelled.");
    case ErrorCode::Device: return tr("The GPU failed. Choose the CPU in the settings, or restart Hearth.");
    }
    return describe(error);
}

QString kvRefusalSummary(KvRefusal refusal, int recomputedTokens) {
    const QString n = QLocale().toString(recomputedTokens);
    switch (refusal) {
    case KvRefusal::None: return {};
    case KvRefusal::ModelFile:
        return tr("Saved state was made with another model file; the conversation was read again (%1 tokens)").arg(n);
    case KvRefusal::Layout:
        return tr("Saved state was made with other model settings; the conversation was read again (%1 tokens)").arg(n);
    case KvRefusal::Backend:
        return tr("Saved state was made on another processor (CPU or GPU); the conversation was read again (%1 tokens)")
            .arg(n);
    case KvRefusal::Numerics:
        return tr("Saved state was made by another Hearth version; the conversation was read again (%1 tokens)").arg(n);
    case KvRefusal::Block:
        return tr("Part of the saved state could not be used; the conversation was read again (%1 tokens)").arg(n);
    }
    return {};
}

}  // namespace hearth
