// restoreKv and saveKv: lookups by chain key, the refusal path, and append-only saves.
#include "app/store/stored_kv.h"

#include <algorithm>
#include <chrono>
#include <optional>

namespace hearth {
namespace {

// The stored tail (partial last block) continuing chain's last block (or the root) that shares
// the longest run of tokens with the prompt there; nullopt when none shares any.
Result<std::optional<KvBlockRecord>> bestTail(const Engine& engine, const KvBlockStore& store,
                                              const SavedKvChain& chain, std::span<const TokenId> tokens) {
    const BlockKey& parent = chain.records.empty() ? engine.kvRoot().key : chain.records.back().key;
    if (!chain.records.empty() && chain.root.key != engine.kvRoot().key) return std::optional<KvBlockRecord>();
    const size_t start = chain.records.size() * static_cast<size_t>(engine.kvBlockSize());
    if (start >= tokens.size()) return std::optional<KvBlockRecord>();
    auto tails = store.tails(parent, engine.kvBlockSize());
    if (!tails) return std::unexpected(tails.error());
    const std::span<const TokenId> rest = tokens.subspan(start);
    std::optional<KvBlockRecord> best;
    std::ptrdiff_t bestLen = 0;
    for (KvBlockRecord& r : tails->records) {
        const auto n =
            std::mismatch(r.tokens.begin(), r.tokens.end(), rest.begin(), rest.end()).first - r.tokens.begin();
        if (n > bestLen) bestLen = n, best = std::move(r);
    }
    return best;
}

}  // namespace

Result<KvRestoreReport> restoreKv(Engine& engine, KvBlockStore& store, int64_t conversationId,
                                  std::span<const TokenId> prompt) {
    const auto t0 = std::chrono::steady_clock::now();
    KvRestoreReport report;
    const std::span<const TokenId> cacheable = prompt.empty() ? prompt : prompt.first(prompt.size() - 1);
    auto chain = store.load(engine.kvChainKeys(cacheable));
    if (!chain) return std::unexpected(chain.error());
    if (auto tail = bestTail(engine, store, *chain, cacheable); !tail) {
        return std::unexpected(tail.error());
    } else if (*tail) {
        if (chain->records.empty()) chain->root = engine.kvRoot();
        chain->records.push_back(std::move(**tail));
    }
    if (chain->records.empty()) {
        // Nothing saved under this engine's root: if the conversation saved blocks under
        // another one (another model file, layout, backend), the engine says why it refuses them.
        chain = store.foreignChain(conversationId, engine.kvRoot().key);
        if (!chain) return std::unexpected(chain.error());
    }
    const auto t1 = std::chrono::steady_clock::now();
    const KvImportResult imported = engine.importKv(chain->root, chain->records, cacheable);
    const auto t2 = std::chrono::steady_clock::now();
    report.restoredTokens = imported.nImported * engine.kvBlockSize() + imported.tailRows;
    report.acceptedTokens = imported.nTokens + imported.tailRows;
    report.refusal = imported.refusal;
    report.refusalKind = imported.refusalKind;
    if (imported.nBlocks > 0 || imported.tailRows > 0)
        if (auto r = store.markUsed(conversationId); !r) return std::unexpected(r.error());
    const auto ms = [](auto from, auto to) { return std::chrono::duration<double, std::milli>(to - from).count(); };
    report.readMs = ms(t0, t1);
    report.importMs = ms(t1, t2);
    report.ms = ms(t0, std::chrono::steady_clock::now());
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
    const size_t tailStart = keys.size() * static_cast<size_t>(engine.kvBlockSize());
    if (tailStart < tokens.size())  // the partial last block's key, linked when it is stored
        keys.push_back(kvTailKey(keys.empty() ? engine.kvRoot().key : keys.back(), tokens.subspan(tailStart)));
    return store.save(conversationId, engine.kvRoot(), records, keys);
}

}  // namespace hearth
