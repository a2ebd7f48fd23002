// Model locations, the same rule as packaging/scripts/common.sh.
#include "app/paths.h"

#include <QDir>
#include <QtGlobal>

namespace hearth {

QString modelsDir() {
    if (const QString dir = qEnvironmentVariable("HEARTH_MODELS_DIR"); !dir.isEmpty()) return dir;
    QString cache = qEnvironmentVariable("XDG_CACHE_HOME");
    if (cache.isEmpty()) cache = QDir::homePath() + "/.cache";
    return cache + "/hearth/models";
}

QString defaultModelPath() { return modelsDir() + "/SmolLM2-135M-Instruct.Q4_1.gguf"; }

}  // namespace hearth
