// KV between an Engine and a KvBlockStore: restoring the longest stored prefix of a prompt (or
// letting the engine refuse, with its reason, what the conversation saved under another root)
// and saving a finished turn's full blocks.
#pragma once

#include <span>
#include <string>

#include "app/store/kv_block_store.h"
#include "engine/engine.h"

namespace hearth {

struct KvRestoreReport {
    int32_t restoredTokens = 0;  // prompt tokens whose K/V were copied in from the store
    int32_t acceptedTokens = 0;  // ... plus those already cached in the engine
    std::string refusal;  // the engine's reason, when it refused saved blocks
    KvRefusal refusalKind = KvRefusal::None;  // the same, as a value (KvImportResult::refusalKind)
    double ms = 0;  // reading and importing
    double readMs = 0;  // ... of which reading the blocks from the database
    double importMs = 0;  // ... and copying them into the engine's KV cache
};

// Precondition: engine.idle(). prompt: the whole next request's prompt (its last token is
// always computed, so at most prompt.size() - 1 tokens are restored).
Result<KvRestoreReport> restoreKv(Engine& engine, KvBlockStore& store, int64_t conversationId,
                                  std::span<const TokenId> prompt);
// Saves the engine's cached full blocks of tokens (ids whose K/V were computed) not yet
// stored, and marks all of them used by the conversation. Returns the blocks written.
Result<int32_t> saveKv(Engine& engine, KvBlockStore& store, int64_t conversationId, std::span<const TokenId> tokens);

}  // namespace hearth
