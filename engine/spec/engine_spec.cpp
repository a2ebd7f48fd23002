// Engine::generate() with speculative decoding: the request's stop rules (end of generation,
// stop strings, length, context, time limit) and text stream around runSpeculative, with the
// engine's SpecSession made or reused for the request's options.
#include <algorithm>
#include <chrono>

#include "engine/engine.h"
#include "engine/spec/spec_runner.h"
#include "engine/stop/stop_matcher.h"

namespace hearth {
namespace {

using Clock = std::chrono::steady_clock;

double msBetween(Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
}

// Turns output tokens into text for the callback and decides when the reply ends, as the
// step API does (EngineRequests::onToken / stopReason).
class ReplyStream {
public:
    ReplyStream(const GenerateRequest& request, const Tokenizer& vocab, int32_t contextLength, const TokenCallback& onToken)
        : request_(request), vocab_(vocab), contextLength_(contextLength), onToken_(onToken), stop_(request.stop) {}

    // False when the reply ends with this token (result.finishReason says why).
    bool push(int32_t token, GenerateResult& result) {
        if (result.tokens.empty()) firstToken_ = Clock::now();
        result.tokens.push_back(token);
        const bool eog = vocab_.isEndOfGeneration(token);
        const StopMatcher::Output shown = stop_.push(eog ? utf8_.flush() : utf8_.push(vocab_.tokenBytes(token)));
        const bool more = onToken_(token, shown.text);
        const auto n = std::ssize(result.tokens);
        if (shown.stopped || !more) result.finishReason = FinishReason::Stop;
        else if (eog) result.finishReason = FinishReason::Eos;
        else if (std::ssize(request_.prompt) + n >= contextLength_) result.finishReason = FinishReason::Context;
        else if (n >= request_.maxTokens) result.finishReason = FinishReason::Length;
        else if (request_.timeoutMs > 0 && msBetween(submitted_, Clock::now()) >= double(request_.timeoutMs))
            result.finishReason = FinishReason::Timeout;
        else return true;
        return false;
    }

    // Held-back text to the callback, and the timings. Every output token comes from a decode
    // step here (the first step computes the prompt's last token with the first draft), so
    // decode counts them all, from the end of the prefill.
    void finish(GenerateResult& result) {
        if (const std::string left = stop_.push(utf8_.flush()).text + stop_.flush(); !left.empty()) onToken_(-1, left);
        const auto now = Clock::now();
        GenerateTimings& t = result.timings;
        t.prefillTokens = static_cast<int32_t>(request_.prompt.size());
        t.prefillMs = msBetween(submitted_, runStart_) + result.spec.prefillMs;
        t.ttftMs = msBetween(submitted_, result.tokens.empty() ? now : firstToken_);
        t.decodeTokens = static_cast<int32_t>(result.tokens.size());
        t.decodeMs = std::max(0.0, msBetween(runStart_, now) - result.spec.prefillMs);
    }
    void runStarts() { runStart_ = Clock::now(); }

private:
    const GenerateRequest& request_;
    const Tokenizer& vocab_;
    int32_t contextLength_;
    const TokenCallback& onToken_;
    Utf8Stream utf8_;
    StopMatcher stop_;
    Clock::time_point submitted_ = Clock::now(), runStart_ = submitted_, firstToken_;
};

}  // namespace

Result<GenerateResult> Engine::generateSpeculative(const GenerateRequest& request, const TokenCallback& onToken) {
    ReplyStream stream(request, *tokenizer_, contextLength_, onToken);
    if (auto r = validatePrompt(request.prompt); !r) return std::unexpected(r.error());
    if (auto r = validate(request.sampling, config().nVocab); !r) return std::unexpected(r.error());
    if (request.timeoutMs < 0) return fail(ErrorCode::InvalidArgument, "the time limit must be >= 0 ms");
    if (!idle()) return fail(ErrorCode::InvalidArgument, "speculative decoding needs an engine with no request in flight");
    if (!spec_ || spec_->options != request.spec) {
        spec_.reset();
        auto s = SpecSession::create(request.spec, *tokenizer_, config().nVocab, *backend_, contextLength_);
        if (!s) return std::unexpected(s.error());
        spec_ = std::move(*s);
    }
    GenerateResult result;
    SpecSampler sampler(request.sampling);
    sampler.observe(request.prompt);
    const SpecRunInput input{request.prompt, request.maxTokens, contextLength_};
    stream.runStarts();
    auto stats = runSpeculative(*model_, *backend_, *cache_, input, sampler, *spec_,
                                [&](int32_t token) { return stream.push(token, result); });
    if (!stats) return std::unexpected(stats.error());
    result.spec = *stats;
    stream.finish(result);
    return result;
}

}  // namespace hearth
