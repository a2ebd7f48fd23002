// One chat turn, written once for every front end (the window's engine worker, hearth-cli
// generate/chat --db, the local server): the prompt trimmed to the context, the conversation's
// saved KV restored, the request submitted, its events gathered, the statistics (restored,
// cached, computed) and the KV saved within the disk budget; and the recording of the reply in
// its message row at least once a second.
//
// Threads: startTurn, Turn::take and saveTurnKv run on the thread that owns the Engine (and
// the KvBlockStore's connection); ReplyRecorder on the thread that owns its ConversationStore.
// Stepping the engine is the caller's: hearth-cli loops on Engine::step(), the window's worker
// steps once per queued event so that stop and new requests interleave.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "app/store/conversation_store.h"
#include "app/store/stored_kv.h"
#include "engine/engine.h"

namespace hearth {

struct TurnInput {
    std::vector<ChatMessage> messages = {};  // oldest first, ending with the user's message; system ones always stay
    GenerateRequest request = {};  // sampling, limits, stop strings, speculation; its prompt is replaced
    int64_t conversationId = 0;  // whose saved KV is restored and to which it is saved (0: none)
    bool restoreKv = true;  // false: compute the whole prompt (--no-kv-restore, chat's later turns)
    bool enableThinking = true;  // let a thinking model reason (RenderOptions; formats without the switch ignore it)
    // A completion (the local server's /v1/completions): this text as it is, BOS as the
    // vocabulary asks, instead of the messages; never trimmed (too long is an error).
    std::optional<std::string> rawText = std::nullopt;
    // A reply to continue (hearth-cli chat's /more after the token limit): the messages end with
    // the user's message as usual and the prompt goes on with this text after the generation
    // prompt, so that the model writes what comes next. Empty: a new reply.
    std::string replyPrefix = {};
};

// A reply in flight, then finished.
struct Turn {
    RequestId id = 0;
    int64_t conversationId = 0;
    std::vector<TokenId> prompt;  // as submitted: the conversation trimmed to the context
    int omittedTurns = 0;  // oldest non-system messages left out so that it fits
    KvRestoreReport restore;
    std::string kvNote;  // why nothing was restored: a refusal, a store error, a busy engine
    std::vector<TokenId> tokens;  // generated
    std::string text;
    // Set by the Finish event:
    bool finished = false;
    FinishReason reason = FinishReason::Length;
    std::optional<Error> error;  // reason Error
    GenerateTimings timings;  // prefixCacheHitTokens excludes kvRestoredTokens
    int32_t kvRestoredTokens = 0;  // prompt tokens whose K/V came from the store
    SpecStats spec;

    // Adds an event of this turn's request (its text, its token or its end). True at the end.
    bool take(const EngineEvent& event);
    // What the reply's message row records once the turn has finished.
    GenerationStats stats() const;
};

// Trims the messages to the context with room for the reply (buildPrompt), restores the
// longest saved prefix when asked and store is not null, and submits. A restore that fails or
// is refused is a note (Turn::kvNote), never a failed turn: the engine computes instead.
// Errors: the last message (or rawText) does not fit the context; the engine refused the request.
Result<Turn> startTurn(Engine& engine, KvBlockStore* store, TurnInput input);

// Saves the K/V a finished turn computed (its prompt and every generated token but the last,
// whose K/V was never computed) within the store's disk budget. Returns the blocks written;
// 0 without a store or a conversation.
Result<int32_t> saveTurnKv(Engine& engine, KvBlockStore* store, const Turn& turn);

// The prefill rate of the latest turn that computed enough prompt tokens to measure it, and
// from it the time a restore saved.
class PrefillRate {
public:
    // Seconds the turn's restore saved (its tokens at the measured rate, less the restore
    // itself); < 0 when nothing was restored or no rate is known. Updates the rate.
    double savedSeconds(const Turn& turn);

private:
    double tokensPerSecond_ = 0;
};

// Records a streamed reply in its (incomplete) message row at most once a second, so that a
// crash loses at most the last second, and whole, complete, with its statistics at the end.
class ReplyRecorder {
public:
    // text: what the message already holds (a continued reply); appended text goes after it.
    ReplyRecorder(ConversationStore& store, int64_t messageId, std::string text = {});
    Result<void> append(std::string_view text);
    Result<void> finish(const GenerationStats& stats);
    int64_t messageId() const { return messageId_; }
    const std::string& text() const { return text_; }

private:
    ConversationStore* store_;
    int64_t messageId_;
    std::string text_;
    std::chrono::steady_clock::time_point lastSave_;
};

}  // namespace hearth
