// KV persistence, engine side: export a sequence's full blocks (keys, tokens, every layer's
// bytes, checksum) and import saved ones as cached blocks only if root, chain, tokens, size and
// checksum all match; otherwise refuse with a reason (the engine then recomputes).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "engine/kv/kv_cache.h"

namespace hearth {

// What a chain root was derived from, kept next to saved blocks so that a refusal can say why.
struct KvRootInfo {
    BlockKey key{};
    std::string fingerprint;   // the model file's XXH3-128, hex
    std::string layout;        // describe(KvLayout) and the RoPE parameters
    std::string backend;
    uint32_t numericsVersion = 0;
};
// Empty when equal; else which parts differ, e.g. "the model file differs (fingerprint a1.. vs 7f..)".
std::string describeRootMismatch(const KvRootInfo& saved, const KvRootInfo& current);

struct KvBlockRecord {
    BlockKey key{};
    BlockKey parent{};             // the previous block's key, or the root's
    int32_t position = 0;          // index of its first token in the sequence
    std::vector<int32_t> tokens;   // blockSize ids
    std::vector<uint8_t> data;     // KvCache::bytesPerBlock() bytes
    uint64_t checksum = 0;         // kvChecksum(data)
};
uint64_t kvChecksum(std::span<const uint8_t> data);  // XXH3-64

// Keys of the whole blocks of tokens chained from root (what a store looks rows up by).
std::vector<BlockKey> kvChainKeys(const KvChainRoot& root, int32_t blockSize, std::span<const int32_t> tokens);

// The indexed blocks holding a prefix of tokens, in order, as records; blocks for which
// skip(key) is true are left out (data not copied) — a store passes the keys it already has.
std::vector<KvBlockRecord> exportKvBlocks(const KvCache& cache, std::span<const int32_t> tokens,
                                          const std::function<bool(const BlockKey&)>& skip = {});

struct KvImportResult {
    int32_t nBlocks = 0;        // blocks accepted (imported, or already in the cache)
    int32_t nTokens = 0;        // prefix of tokens they cover
    int32_t nImported = 0;      // blocks copied in (not already cached)
    std::string refusal;        // why the first refused block was refused; empty when none was
};

// Imports the records saved under `saved` that continue the chain over tokens from its
// start, in order, stopping at the first record that does not fit (refusal says why). At most
// cache.nFreeBlocks() - reserveBlocks blocks are taken, so the request has room to run.
KvImportResult importKvBlocks(KvCache& cache, const KvRootInfo& current, const KvRootInfo& saved,
                              std::span<const KvBlockRecord> records, std::span<const int32_t> tokens,
                              int32_t reserveBlocks = 0);

}  // namespace hearth
