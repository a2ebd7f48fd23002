// Where Hearth finds its models: ${XDG_CACHE_HOME:-~/.cache}/hearth/models, where
// packaging/scripts/fetch-models.sh puts them (HEARTH_MODELS_DIR overrides).
#pragma once

#include <QString>

namespace hearth {

QString modelsDir();
QString defaultModelPath();  // the default chat model, SmolLM2-135M-Instruct Q4_1

}  // namespace hearth
