// Hearth's file locations (paths.h). The Generic* locations, with "hearth" appended, so that
// hearth and hearth-cli (different application names) share one set of folders.
#include "app/common/paths.h"

#include <QStandardPaths>
#include <QtGlobal>

namespace hearth {

QString modelsDir() {
    if (const QString dir = qEnvironmentVariable("HEARTH_MODELS_DIR"); !dir.isEmpty()) return dir;
    return QStandardPaths::writableLocation(QStandardPaths::GenericCacheLocation) + "/hearth/models";
}

QString defaultModelPath() { return modelsDir() + "/SmolLM2-135M-Instruct.Q4_1.gguf"; }

QString dataDir() { return QStandardPaths::writableLocation(QStandardPaths::GenericDataLocation) + "/hearth"; }

QString defaultDatabasePath() { return dataDir() + "/conversations.sqlite"; }

}  // namespace hearth
