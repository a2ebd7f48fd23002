// What the hearth-cli commands that use a conversation store share: the store options
// (--db, --conversation, --no-kv-restore, --disk-budget-mb), opening the store with a clear
// way forward when the file is damaged, and loading the engine with the cached fingerprint.
#pragma once

#include <memory>

#include "app/cli/cli_common.h"
#include "app/store/conversation_store.h"

namespace hearth::cli {

QList<QCommandLineOption> storeOptions();
// Opens path (empty: --db); on failure prints the message (naming the file and the way forward)
// and returns null.
std::unique_ptr<ConversationStore> openStoreOrReport(const QCommandLineParser& p, const QString& path = {});
// loadEngine() with the model fingerprint from the store's cache.
Result<std::unique_ptr<Engine>> loadEngineWithStore(const QCommandLineParser& p, ConversationStore& store);

int runStoredGenerate(const QCommandLineParser& p);  // generate --db (cli_store_generate.cpp)

}  // namespace hearth::cli
