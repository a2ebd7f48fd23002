// Where Hearth keeps its files, from QStandardPaths (never the install folder): models in the
// platform's cache folder (Linux: ${XDG_CACHE_HOME:-~/.cache}/hearth/models, where
// packaging/scripts/fetch-models.sh puts them; HEARTH_MODELS_DIR overrides), data such as the
// conversation database in its data folder. Settings: QSettings("Hearth", "Hearth").
#pragma once

#include <QString>

namespace hearth {

QString modelsDir();
QString defaultModelPath();  // the default chat model, SmolLM2-135M-Instruct Q4_1
// Linux: ${XDG_DATA_HOME:-~/.local/share}/hearth; Windows: %LOCALAPPDATA%/hearth. Not created.
QString dataDir();
// The conversation database the window and hearth-cli chat use unless told otherwise:
// dataDir()/conversations.sqlite.
QString defaultDatabasePath();

}  // namespace hearth
