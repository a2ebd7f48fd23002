// KV persistence, engine side: export a sequence's full blocks (keys, tokens, every layer's
// bytes, checksum) and its trailing partial block, and import saved ones only if root, chain,
// tokens, size and checksum all match; otherwise refuse with a reason (the engine recomputes).
// With a window group (engine/kv/kv_cache.h) a full block's data is the full-attention group's
// bytes, followed by the window group's where that block was still in the window when saved
// (the last window of the conversation): all a restore needs to go on from the end, exactly.
// Such layouts describe themselves as kv-layout/v2, so blocks saved under v1 are refused.
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
    std::string fingerprint;  // the model file's XXH3-128, hex
    std::string layout;  // describe(KvLayout) and the RoPE parameters
    std::string backend;
    uint32_t numericsVersion = 0;
};
// Why saved blocks were refused, for the words a user reads (the refusal string is for people
// debugging): what the first difference of the roots was, or a block that did not fit.
enum class KvRefusal {
    None,
    ModelFile,  // the model file differs (another model, or the same name with other bytes)
    Layout,  // the KV layout differs (context, KV type, RoPE, ...)
    Backend,  // saved on another backend (CPU vs CUDA): never carried over
    Numerics,  // saved by a Hearth with other numerics
    Block,  // a block's chain, tokens, size or checksum did not match, or it could not be restored
};
// The first of ModelFile, Layout, Backend, Numerics that differs; Block when only the keys do.
KvRefusal rootMismatchKind(const KvRootInfo& saved, const KvRootInfo& current);

// Empty when equal; else which parts differ, e.g. "the model file differs (fingerprint a1.. vs 7f..)".
std::string describeRootMismatch(const KvRootInfo& saved, const KvRootInfo& current);

// A full block, or a sequence's trailing partial block (a "tail": fewer than blockSize tokens,
// key = kvTailKey(parent, tokens), data = KvCache::tailBytes(tokens.size())). A tail is never
// entered into the cache's shared index: restored, it becomes the last block of one sequence.
struct KvBlockRecord {
    BlockKey key{};
    BlockKey parent{};  // the previous block's key, or the root's
    int32_t position = 0;  // index of its first token in the sequence
    std::vector<int32_t> tokens;  // blockSize ids
    std::vector<uint8_t> data;  // KvCache::bytesPerBlock() bytes, or bytesPerBlock(0): no window group's
    uint64_t checksum = 0;  // kvChecksum(data)
};
uint64_t kvChecksum(std::span<const uint8_t> data);  // XXH3-64
bool isKvTail(const KvBlockRecord& r, int32_t blockSize);  // 0 < tokens.size() < blockSize
// SHA-256("hearth kv tail" || parent || token ids as LE int32): never equal to a full block's key.
BlockKey kvTailKey(const BlockKey& parent, std::span<const int32_t> tokens);

// Keys of the whole blocks of tokens chained from root (what a store looks rows up by).
std::vector<BlockKey> kvChainKeys(const KvChainRoot& root, int32_t blockSize, std::span<const int32_t> tokens);

// The indexed blocks holding a prefix of tokens, in order, as records; blocks for which
// skip(key) is true are left out (data not copied) — a store passes the keys it already has.
// When `holder` (a sequence whose positions hold parkedTokens) holds all of tokens, the rows of
// tokens past the last indexed full block follow as a tail record (if fewer than a block).
std::vector<KvBlockRecord> exportKvBlocks(const KvCache& cache, std::span<const int32_t> tokens,
                                          const std::function<bool(const BlockKey&)>& skip = {},
                                          const KvSequence* holder = nullptr,
                                          std::span<const int32_t> holderTokens = {});

struct KvImportResult {
    int32_t nBlocks = 0;  // blocks accepted (imported, or already in the cache)
    int32_t nTokens = 0;  // prefix of tokens they cover
    int32_t nImported = 0;  // blocks copied in (not already cached)
    std::string refusal;  // why the first refused block was refused; empty when none was
    KvRefusal refusalKind = KvRefusal::None;  // the same, as a value
    // A tail record accepted after the nBlocks full ones: its index in records and how many of
    // its rows continue tokens (its tokens' common prefix with them). Never counted in nBlocks
    // or nTokens. importKvBlocks leaves it out of the cache; Engine::importKv restores it
    // (restoreKvTail) and keeps tailRows as the rows copied in (0 when it held them already or
    // could not restore them, then with a refusal).
    int32_t tailRecord = -1;
    int32_t tailRows = 0;
};

// Imports the records saved under `saved` that continue the chain over tokens from its
// start, in order, stopping at the first record that does not fit (refusal says why). At most
// cache.nFreeBlocks() - reserveBlocks blocks are taken, so the request has room to run. With a
// window group, nBlocks and nTokens stop at the last block whose window blocks are cached
// (KvCache::cachedPrefix), and the tail is then left out (refusal says so).
KvImportResult importKvBlocks(KvCache& cache, const KvRootInfo& current, const KvRootInfo& saved,
                              std::span<const KvBlockRecord> records, std::span<const int32_t> tokens,
                              int32_t reserveBlocks = 0);

// A sequence holding tokens' first nFullBlocks blocks (indexed in the cache: shared) and then
// the first nRows rows of the tail record, for the scheduler to park. Errors: OutOfMemory,
// InvalidArgument (the full blocks are not all cached, the record's size).
Result<KvSequence> restoreKvTail(KvCache& cache, std::span<const int32_t> tokens, int32_t nFullBlocks,
                                 const KvBlockRecord& tail, int32_t nRows);

}  // namespace hearth
