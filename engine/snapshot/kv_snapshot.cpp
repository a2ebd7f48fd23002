// Export and checked import of KV blocks; the checks are the safety of KV persistence:
// root, chain key, tokens, size and checksum, each refusal with its reason.
#include "engine/snapshot/kv_snapshot.h"

#include <algorithm>
#include <optional>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "engine/str_cat.h"
#include "engine/util/sha256.h"

namespace hearth {
namespace {

std::string shortHex(const std::string& hex) { return hex.size() > 12 ? hex.substr(0, 12) + ".." : hex; }

}  // namespace

std::string describeRootMismatch(const KvRootInfo& saved, const KvRootInfo& current) {
    std::string why;
    auto add = [&](const std::string& part) { why += why.empty() ? part : "; " + part; };
    if (saved.fingerprint != current.fingerprint)
        add(strCat("the model file differs (saved with fingerprint ", shortHex(saved.fingerprint), ", this one is ",
                   shortHex(current.fingerprint), ")"));
    if (saved.layout != current.layout)
        add(strCat("the KV layout differs (saved: ", saved.layout, "; now: ", current.layout, ")"));
    if (saved.backend != current.backend)
        add(strCat("the backend differs (saved: ", saved.backend, "; now: ", current.backend, ")"));
    if (saved.numericsVersion != current.numericsVersion)
        add(strCat("the numerics version differs (saved: ", saved.numericsVersion, "; now: ", current.numericsVersion,
                   ")"));
    if (why.empty() && saved.key != current.key) why = "the chain root key differs";
    return why;
}

KvRefusal rootMismatchKind(const KvRootInfo& saved, const KvRootInfo& current) {
    if (saved.fingerprint != current.fingerprint) return KvRefusal::ModelFile;
    if (saved.layout != current.layout) return KvRefusal::Layout;
    if (saved.backend != current.backend) return KvRefusal::Backend;
    if (saved.numericsVersion != current.numericsVersion) return KvRefusal::Numerics;
    return KvRefusal::Block;
}

uint64_t kvChecksum(std::span<const uint8_t> data) { return XXH3_64bits(data.data(), data.size()); }

bool isKvTail(const KvBlockRecord& r, int32_t blockSize) {
    return !r.tokens.empty() && std::ssize(r.tokens) < blockSize;
}

BlockKey kvTailKey(const BlockKey& parent, std::span<const int32_t> tokens) {
    Sha256 h;
    h.update(std::string_view("hearth kv tail"));
    h.update(parent);
    for (int32_t t : tokens) {
        const auto u = static_cast<uint32_t>(t);
        const uint8_t le[4] = {static_cast<uint8_t>(u), static_cast<uint8_t>(u >> 8), static_cast<uint8_t>(u >> 16),
                               static_cast<uint8_t>(u >> 24)};
        h.update(std::span<const uint8_t>(le, 4));
    }
    return h.finish();
}

std::vector<BlockKey> kvChainKeys(const KvChainRoot& root, int32_t blockSize, std::span<const int32_t> tokens) {
    std::vector<BlockKey> keys;
    BlockKey key = root.key;
    const auto bs = static_cast<size_t>(blockSize);
    for (size_t start = 0; start + bs <= tokens.size(); start += bs) {
        key = chainKey(key, tokens.subspan(start, bs));
        keys.push_back(key);
    }
    return keys;
}

namespace {

// The tail record of tokens after nFull full blocks (parent: the last one's key), when holder
// holds all of tokens and fewer than a block of them follow; empty key when not.
std::optional<KvBlockRecord> tailRecord(const KvCache& cache, std::span<const int32_t> tokens, size_t nFull,
                                        const BlockKey& parent, const KvSequence* holder,
                                        std::span<const int32_t> holderTokens) {
    const auto bs = static_cast<size_t>(cache.layout().blockSize);
    const size_t start = nFull * bs;
    if (!holder || tokens.size() <= start || tokens.size() - start >= bs) return std::nullopt;
    if (holder->nTokens < std::ssize(tokens) || holderTokens.size() < tokens.size() ||
        holder->blockTable.size() <= nFull || !std::equal(tokens.begin(), tokens.end(), holderTokens.begin()))
        return std::nullopt;
    KvBlockRecord r;
    r.tokens.assign(tokens.begin() + static_cast<std::ptrdiff_t>(start), tokens.end());
    r.data = cache.packedRows(*holder, nFull, static_cast<int32_t>(r.tokens.size()));
    if (r.data.empty()) return std::nullopt;
    r.parent = parent;
    r.key = kvTailKey(parent, r.tokens);
    r.position = static_cast<int32_t>(start);
    r.checksum = kvChecksum(r.data);
    return r;
}

}  // namespace

std::vector<KvBlockRecord> exportKvBlocks(const KvCache& cache, std::span<const int32_t> tokens,
                                          const std::function<bool(const BlockKey&)>& skip, const KvSequence* holder,
                                          std::span<const int32_t> holderTokens) {
    const int32_t bs = cache.layout().blockSize;
    const CachedPrefix prefix = cache.pool().longestCachedPrefix(cache.root().key, tokens);
    std::vector<KvBlockRecord> out;
    for (size_t i = 0; i < prefix.blocks.size(); ++i) {
        if (skip && skip(prefix.keys[i])) continue;
        const std::vector<uint8_t> bytes = cache.blockBytes(prefix.blocks[i]);
        if (bytes.empty()) return out;
        KvBlockRecord r;
        r.data.assign(bytes.begin(), bytes.end());
        // The window group's block too where it is still cached (the last window of a held or
        // parked sequence): a restore needs it to go on from the end, never those before it.
        if (const BlockId w = cache.nGroups() > 1 ? cache.pool(1).find(prefix.keys[i]) : -1; w >= 0) {
            const std::vector<uint8_t> windowBytes = cache.blockBytes(w, 1);
            r.data.insert(r.data.end(), windowBytes.begin(), windowBytes.end());
        }
        r.key = prefix.keys[i];
        r.parent = i == 0 ? cache.root().key : prefix.keys[i - 1];
        r.position = static_cast<int32_t>(i) * bs;
        const auto start = tokens.begin() + static_cast<std::ptrdiff_t>(i) * bs;
        r.tokens.assign(start, start + bs);
        r.checksum = kvChecksum(r.data);
        out.push_back(std::move(r));
    }
    const BlockKey& parent = prefix.keys.empty() ? cache.root().key : prefix.keys.back();
    if (auto tail = tailRecord(cache, tokens, prefix.blocks.size(), parent, holder, holderTokens))
        if (!skip || !skip(tail->key)) out.push_back(std::move(*tail));
    return out;
}

namespace {

// Why record r cannot be block i of tokens' chain from parent; empty when it can.
std::string checkRecord(const KvCache& cache, const KvBlockRecord& r, size_t i, const BlockKey& parent,
                        std::span<const int32_t> tokens) {
    const auto bs = static_cast<size_t>(cache.layout().blockSize);
    const std::string where = strCat("KV block ", i, " (tokens ", i * bs, "..", (i + 1) * bs - 1, ")");
    if (r.position != static_cast<int32_t>(i * bs) || r.parent != parent)
        return strCat(where, ": it does not continue the chain (position or parent key)");
    if (r.tokens.size() != bs || (i + 1) * bs > tokens.size() ||
        !std::equal(r.tokens.begin(), r.tokens.end(), tokens.begin() + static_cast<std::ptrdiff_t>(i * bs)))
        return strCat(where, ": its token ids differ from the conversation's");
    if (chainKey(parent, r.tokens) != r.key) return strCat(where, ": its key is not SHA-256(parent, tokens)");
    if (r.data.size() != cache.bytesPerBlock() && r.data.size() != cache.bytesPerBlock(0))
        return strCat(where, ": it has ", r.data.size(), " bytes, this cache's blocks ", cache.bytesPerBlock());
    if (kvChecksum(r.data) != r.checksum) return strCat(where, ": checksum mismatch (the saved bytes are damaged)");
    return {};
}

// Why a tail record cannot follow block i-1 of tokens' chain (parent); empty when it can.
// rows: how many of its rows continue tokens.
std::string checkTail(const KvCache& cache, const KvBlockRecord& r, size_t i, const BlockKey& parent,
                      std::span<const int32_t> tokens, int32_t& rows) {
    const auto bs = static_cast<size_t>(cache.layout().blockSize);
    const std::string where = strCat("the partial KV block at token ", i * bs);
    if (r.position != static_cast<int32_t>(i * bs) || r.parent != parent)
        return strCat(where, ": it does not continue the chain (position or parent key)");
    if (kvTailKey(parent, r.tokens) != r.key) return strCat(where, ": its key is not SHA-256(tail, parent, tokens)");
    const auto n = static_cast<int32_t>(r.tokens.size());
    if (r.data.size() != cache.tailBytes(n))
        return strCat(where, ": it has ", r.data.size(), " bytes, this cache's ", n, " rows ", cache.tailBytes(n));
    if (kvChecksum(r.data) != r.checksum) return strCat(where, ": checksum mismatch (the saved bytes are damaged)");
    const std::span<const int32_t> rest = tokens.size() > i * bs ? tokens.subspan(i * bs) : std::span<const int32_t>();
    const auto common =
        std::mismatch(r.tokens.begin(), r.tokens.end(), rest.begin(), rest.end()).first - r.tokens.begin();
    rows = static_cast<int32_t>(common);
    return {};
}

}  // namespace

KvImportResult importKvBlocks(KvCache& cache, const KvRootInfo& current, const KvRootInfo& saved,
                              std::span<const KvBlockRecord> records, std::span<const int32_t> tokens,
                              int32_t reserveBlocks) {
    KvImportResult result;
    if (records.empty()) return result;
    if (saved.key != cache.root().key || current.key != cache.root().key) {
        result.refusal = strCat("saved KV refused: ", describeRootMismatch(saved, current));
        result.refusalKind = rootMismatchKind(saved, current);
        return result;
    }
    const int32_t budget = cache.nFreeBlocks() - reserveBlocks;
    BlockKey parent = cache.root().key;
    for (size_t i = 0; i < records.size(); ++i) {
        if (isKvTail(records[i], cache.layout().blockSize)) {
            int32_t rows = 0;
            std::string why = checkTail(cache, records[i], i, parent, tokens, rows);
            if (!why.empty()) {
                result.refusal = "saved KV refused from " + why;
                result.refusalKind = KvRefusal::Block;
            } else if (rows > 0) result.tailRecord = static_cast<int32_t>(i), result.tailRows = rows;
            break;
        }
        if (std::string why = checkRecord(cache, records[i], i, parent, tokens); !why.empty()) {
            result.refusal = "saved KV refused from " + why;
            result.refusalKind = KvRefusal::Block;
            break;
        }
        if (result.nImported >= budget) break;
        auto imported = cache.importBlock(records[i].key, records[i].data);
        if (!imported) {
            result.refusal = "saved KV not restored: " + imported.error().message;
            result.refusalKind = KvRefusal::Block;
            break;
        }
        result.nImported += *imported ? 1 : 0;
        ++result.nBlocks;
        result.nTokens += cache.layout().blockSize;
        parent = records[i].key;
    }
    // With a window group the blocks are usable only up to the last point whose window was saved.
    const CachedPrefix usable =
        cache.cachedPrefix(KvSequence{}, tokens.first(static_cast<size_t>(result.nTokens))).full;
    if (std::ssize(usable.blocks) < result.nBlocks) {
        if (result.refusal.empty()) {
            result.refusal = strCat("saved KV covers the sliding window's positions only up to token ",
                                    std::ssize(usable.blocks) * cache.layout().blockSize, " of ", result.nTokens,
                                    "; the rest is recomputed");
            result.refusalKind = KvRefusal::Block;
        }
        result.nBlocks = static_cast<int32_t>(usable.blocks.size());
        result.nTokens = result.nBlocks * cache.layout().blockSize;
        result.tailRecord = -1;
        result.tailRows = 0;
    }
    return result;
}

Result<KvSequence> restoreKvTail(KvCache& cache, std::span<const int32_t> tokens, int32_t nFullBlocks,
                                 const KvBlockRecord& tail, int32_t nRows) {
    const int32_t bs = cache.layout().blockSize;
    const int32_t nFull = nFullBlocks * bs;
    if (nRows <= 0 || std::ssize(tokens) < nFull)
        return fail(ErrorCode::InvalidArgument, "no partial KV block to restore");
    KvSequence seq;
    auto plan = cache.plan(seq, nFull, tokens.first(static_cast<size_t>(nFull)));
    if (!plan) return std::unexpected(plan.error());
    if (plan->nCachedTokens != nFull)
        return fail(ErrorCode::InvalidArgument, "the full KV blocks before the partial one are not cached");
    if (auto c = cache.commit(seq, *plan); !c) return std::unexpected(c.error());
    Result<void> written = cache.reserve(seq, nFull + nRows);
    if (written)
        written =
            cache.writeRows(seq, seq.blockTable.size() - 1, tail.data, static_cast<int32_t>(tail.tokens.size()), nRows);
    if (!written) {
        cache.release(seq);
        return std::unexpected(written.error());
    }
    seq.nTokens = nFull + nRows;
    return seq;
}

}  // namespace hearth
