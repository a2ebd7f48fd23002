// restoreKv and saveKv: lookups by chain key, the refusal path, and append-only saves.
#include "app/store/stored_kv.h"

#include <chrono>

namespace hearth {

Result<KvRestoreReport> restoreKv(Engine& engine, KvBlockStore& store, int64_t conversationId,
                                  std::span<const TokenId> prompt) {
    const auto t0 = std::chrono::steady_clock::now();
    KvRestoreReport report;
    const std::span<const TokenId> cacheable = prompt.empty() ? prompt : prompt.first(prompt.size() - 1);
    auto chain = store.load(engine.kvChainKeys(cacheable));
    if (!chain) return std::unexpected(chain.error());
    if (chain->records.empty()) {
        // Nothing saved under this engine's root: if the conversation saved blocks under
        // another one (another model file, layout, backend), the engine says why it refuses them.
        chain = store.foreignChain(conversationId, engine.kvRoot().key);
        if (!chain) return std::unexpected(chain.error());
    }
    const KvImportResult imported = engine.importKv(chain->root, chain->records, cacheable);
    report.restoredTokens = imported.nImported * engine.kvBlockSize();
    report.acceptedTokens = imported.nTokens;
    report.refusal = imported.refusal;
    if (imported.nBlocks > 0)
        if (auto r = store.markUsed(conversationId); !r) return std::unexpected(r.error());
    report.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return report;
}

Result<int32_t> saveKv(Engine& engine, KvBlockStore& store, int64_t conversationId, std::span<const TokenId> tokens) {
    Result<void> lookup;
    std::vector<KvBlockRecord> records = engine.exportKv(tokens, [&](const BlockKey& key) {
        auto has = store.has(key);
        if (!has) lookup = std::unexpected(has.error());
        return has && *has;
    });
    if (!lookup) return std::unexpected(lookup.error());
    std::vector<BlockKey> keys = engine.kvChainKeys(tokens);
    return store.save(conversationId, engine.kvRoot(), records, keys);
}

}  // namespace hearth
