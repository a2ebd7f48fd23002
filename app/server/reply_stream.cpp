// The engine side converts each event once (token text through the tokenizer, the finish
// reason in OpenAI's words) and the client side only formats; the mutex is held for a copy.
#include "app/server/reply_stream.h"

namespace hearth::server {
namespace {

// OpenAI has two reasons: "stop" (a natural end or a stop string) and "length" (a limit).
const char* openAiReason(FinishReason r) {
    switch (r) {
    case FinishReason::Eos:
    case FinishReason::Stop:
    case FinishReason::Cancelled: return "stop";
    default: return "length";  // Length, Context, Timeout
    }
}

TokenLogprob logprobOf(const Engine& engine, const EngineEvent& ev) {
    TokenLogprob lp{engine.tokenizer().tokenBytes(ev.token), ev.logprob, {}};
    for (const auto& [id, value] : ev.topLogits) lp.top.emplace_back(engine.tokenizer().tokenBytes(id), value);
    return lp;
}

}  // namespace

ReplyStream::ReplyStream(std::function<void()> onDone) : onDone_(std::move(onDone)) {}

SinkReply ReplyStream::sinkReply(std::shared_ptr<ReplyStream> self, TurnInput input) {
    SinkReply r;
    logprobs_ = input.request.logprobs;
    r.input = std::move(input);
    r.started = [self](const Turn& turn) { self->started(turn); };
    r.event = [self](const Engine& engine, const EngineEvent& ev) { self->event(engine, ev); };
    r.failed = [self](const Error& error) { self->failed(error); };
    return r;
}

void ReplyStream::started(const Turn& turn) {
    std::lock_guard lock(mutex_);
    start_ = turn.id;
    usage_.promptTokens = static_cast<int32_t>(turn.prompt.size());
    ready_.notify_all();
}

void ReplyStream::event(const Engine& engine, const EngineEvent& ev) {
    StreamItem item;
    item.text = ev.text;
    const bool token = ev.kind == EngineEvent::Kind::Token;
    const bool endToken = token && engine.tokenizer().isEndOfGeneration(ev.token);
    if (token && !endToken && logprobs_) item.logprob = logprobOf(engine, ev);
    if (!token) {
        item.finish = true;
        item.finishReason = openAiReason(ev.reason);
        item.error = ev.error;
    }
    {
        std::lock_guard lock(mutex_);
        if (token && !endToken) ++usage_.completionTokens;
        if (!token) usage_.cachedTokens = ev.timings.prefixCacheHitTokens;
        items_.push_back(std::move(item));
        ready_.notify_all();
    }
    if (!token) done();
}

std::expected<RequestId, Error> ReplyStream::waitStarted() {
    std::unique_lock lock(mutex_);
    ready_.wait(lock, [this] { return start_.has_value(); });
    return *start_;
}

std::vector<StreamItem> ReplyStream::take(std::chrono::milliseconds wait) {
    std::unique_lock lock(mutex_);
    ready_.wait_for(lock, wait, [this] { return !items_.empty(); });
    std::vector<StreamItem> out(std::make_move_iterator(items_.begin()), std::make_move_iterator(items_.end()));
    items_.clear();
    return out;
}

Usage ReplyStream::usage() const {
    std::lock_guard lock(mutex_);
    return usage_;
}

void ReplyStream::failed(const Error& error) {
    {
        std::lock_guard lock(mutex_);
        if (!start_) start_ = std::unexpected(error);
        else items_.push_back(StreamItem{.finish = true, .finishReason = "stop", .error = error});
        ready_.notify_all();
    }
    done();
}

void ReplyStream::done() {
    if (onDone_) std::exchange(onDone_, nullptr)();
}

AdmissionGate::Admit AdmissionGate::enter() {
    std::unique_lock lock(mutex_);
    if (closed_) return Admit::Closed;
    if (running_ >= slots_) {
        if (waiting_ >= queue_) return Admit::Full;
        ++waiting_;
        freed_.wait(lock, [this] { return closed_ || running_ < slots_; });
        --waiting_;
        if (closed_) return Admit::Closed;
    }
    ++running_;
    return Admit::Now;
}

void AdmissionGate::leave() {
    std::lock_guard lock(mutex_);
    --running_;
    freed_.notify_one();
}

void AdmissionGate::close() {
    std::lock_guard lock(mutex_);
    closed_ = true;
    freed_.notify_all();
}

int AdmissionGate::running() const {
    std::lock_guard lock(mutex_);
    return running_;
}

int AdmissionGate::waiting() const {
    std::lock_guard lock(mutex_);
    return waiting_;
}

}  // namespace hearth::server
