// Export and checked import of KV blocks; the checks are the safety of KV persistence:
// root, chain key, tokens, size and checksum, each refusal with its reason.
#include "engine/snapshot/kv_snapshot.h"

#include <algorithm>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "engine/str_cat.h"

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
    if (saved.layout != current.layout) add(strCat("the KV layout differs (saved: ", saved.layout, "; now: ", current.layout, ")"));
    if (saved.backend != current.backend) add(strCat("the backend differs (saved: ", saved.backend, "; now: ", current.backend, ")"));
    if (saved.numericsVersion != current.numericsVersion)
        add(strCat("the numerics version differs (saved: ", saved.numericsVersion, "; now: ", current.numericsVersion, ")"));
    if (why.empty() && saved.key != current.key) why = "the chain root key differs";
    return why;
}

uint64_t kvChecksum(std::span<const uint8_t> data) { return XXH3_64bits(data.data(), data.size()); }

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

std::vector<KvBlockRecord> exportKvBlocks(const KvCache& cache, std::span<const int32_t> tokens,
                                          const std::function<bool(const BlockKey&)>& skip) {
    const int32_t bs = cache.layout().blockSize;
    const CachedPrefix prefix = cache.pool().longestCachedPrefix(cache.root().key, tokens);
    std::vector<KvBlockRecord> out;
    for (size_t i = 0; i < prefix.blocks.size(); ++i) {
        if (skip && skip(prefix.keys[i])) continue;
        const std::span<const uint8_t> bytes = cache.blockBytes(prefix.blocks[i]);
        if (bytes.empty()) break;
        KvBlockRecord r;
        r.key = prefix.keys[i];
        r.parent = i == 0 ? cache.root().key : prefix.keys[i - 1];
        r.position = static_cast<int32_t>(i) * bs;
        const auto start = tokens.begin() + static_cast<std::ptrdiff_t>(i) * bs;
        r.tokens.assign(start, start + bs);
        r.data.assign(bytes.begin(), bytes.end());
        r.checksum = kvChecksum(r.data);
        out.push_back(std::move(r));
    }
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
    if (r.data.size() != cache.bytesPerBlock())
        return strCat(where, ": it has ", r.data.size(), " bytes, this cache's blocks ", cache.bytesPerBlock());
    if (kvChecksum(r.data) != r.checksum) return strCat(where, ": checksum mismatch (the saved bytes are damaged)");
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
        return result;
    }
    const int32_t budget = cache.nFreeBlocks() - reserveBlocks;
    BlockKey parent = cache.root().key;
    for (size_t i = 0; i < records.size(); ++i) {
        if (std::string why = checkRecord(cache, records[i], i, parent, tokens); !why.empty()) {
            result.refusal = "saved KV refused from " + why;
            break;
        }
        if (result.nImported >= budget) break;
        auto imported = cache.importBlock(records[i].key, records[i].data);
        if (!imported) {
            result.refusal = "saved KV not restored: " + imported.error().message;
            break;
        }
        result.nImported += *imported ? 1 : 0;
        ++result.nBlocks;
        result.nTokens += cache.layout().blockSize;
        parent = records[i].key;
    }
    return result;
}

}  // namespace hearth
