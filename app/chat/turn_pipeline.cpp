// The turn pipeline's steps. The engine counts restored tokens as part of its prefix hit
// (they are cached by the time the request is admitted), so the split into restored and
// cached is made here, once, for every front end.
#include "app/chat/turn_pipeline.h"

#include <QCoreApplication>

#include "app/chat/prompt_builder.h"
#include "app/common/error_text.h"

namespace hearth {

namespace {

constexpr int kMinRatedPrefill = 64;  // prompt tokens computed before a turn's prefill rate is trusted
constexpr auto kSaveEvery = std::chrono::seconds(1);

// Fills turn.restore, or says in turn.kvNote why nothing came from the store.
void restoreInto(Turn& turn, Engine& engine, KvBlockStore& store) {
    if (!engine.idle()) {  // importing needs the cache to itself
        turn.kvNote = QCoreApplication::translate("hearth::TurnPipeline", "another reply is running").toStdString();
        return;
    }
    auto r = restoreKv(engine, store, turn.conversationId, turn.prompt);
    if (!r) {
        turn.kvNote = describe(r.error()).toStdString();
        return;
    }
    turn.restore = *r;
    turn.kvNote = r->refusal;
}

}  // namespace

bool Turn::take(const EngineEvent& event) {
    text += event.text;
    if (event.kind == EngineEvent::Kind::Token) {
        tokens.push_back(event.token);
        return false;
    }
    finished = true;
    reason = event.reason;
    error = event.error;
    timings = event.timings;
    spec = event.spec;
    kvRestoredTokens = std::min(restore.restoredTokens, timings.prefixCacheHitTokens);
    timings.prefixCacheHitTokens -= kvRestoredTokens;
    return true;
}

GenerationStats Turn::stats() const {
    GenerationStats s;
    s.promptTokens = static_cast<int32_t>(prompt.size());
    s.generatedTokens = static_cast<int32_t>(tokens.size());
    s.prefixCacheHitTokens = timings.prefixCacheHitTokens;
    s.kvRestoredTokens = kvRestoredTokens;
    s.ttftMs = timings.ttftMs;
    s.prefillTokensPerSecond = timings.prefillTokensPerSecond();
    s.decodeTokensPerSecond = timings.decodeTokensPerSecond();
    s.finishReason = finishReasonName(reason);
    return s;
}

Result<Turn> startTurn(Engine& engine, KvBlockStore* store, TurnInput input) {
    auto built = input.rawText
        ? Result<BuiltPrompt>(BuiltPrompt{engine.rawPrompt(*input.rawText)})
        : buildPrompt(engine, input.messages, input.request.maxTokens, {.enableThinking = input.enableThinking});
    if (!built) return std::unexpected(built.error());
    Turn turn;
    turn.conversationId = input.conversationId;
    turn.prompt = std::move(built->tokens);
    if (!input.replyPrefix.empty()) {
        const std::vector<TokenId> prefix = engine.tokenizer().encode(input.replyPrefix, false, false);
        turn.prompt.insert(turn.prompt.end(), prefix.begin(), prefix.end());
    }
    turn.omittedTurns = built->omittedTurns;
    if (input.restoreKv && store && turn.conversationId != 0) restoreInto(turn, engine, *store);
    input.request.prompt = turn.prompt;
    auto id = engine.submit(std::move(input.request));
    if (!id) return std::unexpected(id.error());
    turn.id = *id;
    return turn;
}

Result<int32_t> saveTurnKv(Engine& engine, KvBlockStore* store, const Turn& turn) {
    if (!store || turn.conversationId == 0 || turn.prompt.empty()) return 0;
    std::vector<TokenId> computed = turn.prompt;
    if (!turn.tokens.empty()) computed.insert(computed.end(), turn.tokens.begin(), turn.tokens.end() - 1);
    return saveKv(engine, *store, turn.conversationId, computed);
}

double PrefillRate::savedSeconds(const Turn& turn) {
    const GenerateTimings& t = turn.timings;
    if (t.prefillTokens >= kMinRatedPrefill && t.prefillTokensPerSecond() > 0)
        tokensPerSecond_ = t.prefillTokensPerSecond();
    const double rate = tokensPerSecond_ > 0 ? tokensPerSecond_ : t.prefillTokensPerSecond();
    if (turn.kvRestoredTokens <= 0 || rate <= 0) return -1;
    return std::max(0.0, turn.kvRestoredTokens / rate - turn.restore.ms / 1000.0);
}

ReplyRecorder::ReplyRecorder(ConversationStore& store, int64_t messageId, std::string text)
    : store_(&store), messageId_(messageId), text_(std::move(text)), lastSave_(std::chrono::steady_clock::now()) {}

Result<void> ReplyRecorder::append(std::string_view text) {
    text_ += text;
    const auto now = std::chrono::steady_clock::now();
    if (now - lastSave_ < kSaveEvery) return {};
    lastSave_ = now;
    return store_->updateMessage(messageId_, text_, false);
}

Result<void> ReplyRecorder::finish(const GenerationStats& stats) {
    return store_->updateMessage(messageId_, text_, true, &stats);
}

}  // namespace hearth
