// Maps ErrorCode to a short lead-in; the engine's message carries the specifics (field, offset).
// The words are the Qt-free CLI core's (app/cli_core/core_common.h), so that hearth-cli says
// the same on every build.
#include "app/common/error_text.h"

#include "app/cli_core/core_common.h"

namespace hearth {

QString describe(const Error& error) { return QString::fromStdString(cli::core::describeError(error)); }

}  // namespace hearth
