// What passes between the engine thread and a server client's HTTP thread: one reply's items
// (text, log-probabilities, the end), and the gate that keeps at most --parallel server
// requests in the engine with a bounded queue behind them.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <expected>
#include <memory>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "app/chat/turn_pipeline.h"
#include "app/engine_host/engine_host.h"

namespace hearth::server {

struct TokenLogprob {
    std::string token;  // the token's bytes (may be part of a UTF-8 character)
    float logprob = 0;  // log-softmax of the raw logits
    std::vector<std::pair<std::string, float>> top;  // the most likely tokens, most likely first
};

// One event of a reply, converted on the engine thread (token text needs the tokenizer).
struct StreamItem {
    std::string text = {};  // the text it releases (stop strings never appear)
    std::optional<TokenLogprob> logprob = {};  // with logprobs; never for an end-of-generation token
    bool finish = false;  // the last item
    std::string finishReason = {};  // finish: "stop" or "length"
    std::optional<Error> error = {};  // finish: the engine failed or dropped the reply
};

struct Usage {
    int32_t promptTokens = 0, completionTokens = 0, cachedTokens = 0;
};

// Filled on the engine thread (the SinkReply callbacks), drained on the client's thread.
class ReplyStream {
public:
    // onDone runs once, on the engine thread, when the engine has let go of the request
    // (finished, failed, or never submitted): the server frees its slot there.
    explicit ReplyStream(std::function<void()> onDone);

    // The SinkReply whose callbacks feed this stream (it keeps the stream alive).
    SinkReply sinkReply(std::shared_ptr<ReplyStream> self, TurnInput input);

    // Client thread. Blocks until the engine took the request (its id) or refused it.
    std::expected<RequestId, Error> waitStarted();
    // Items ready, waiting at most `wait` for the first; empty after the time or at the end.
    std::vector<StreamItem> take(std::chrono::milliseconds wait);
    Usage usage() const;  // complete once the finishing item was taken

private:
    void started(const Turn& turn);
    void event(const Engine& engine, const EngineEvent& ev);
    void failed(const Error& error);
    void done();

    mutable std::mutex mutex_;
    std::condition_variable ready_;
    std::optional<std::expected<RequestId, Error>> start_;
    std::deque<StreamItem> items_;
    Usage usage_;
    std::function<void()> onDone_;
    bool logprobs_ = false;  // set before the engine sees the request
};

// At most nSlots requests in the engine; up to nQueue more wait for a slot; beyond that a
// request is turned away (429). Thread-safe.
class AdmissionGate {
public:
    AdmissionGate(int nSlots, int nQueue) : slots_(nSlots), queue_(nQueue) {}  // not "slots": a Qt macro
    enum class Admit { Now, Full, Closed };
    // Blocks while the slots are taken and the request has a place in the queue.
    Admit enter();
    void leave();  // a slot is free again
    void close();  // waiting and later requests get Closed (shutting down)
    int running() const;
    int waiting() const;

private:
    mutable std::mutex mutex_;
    std::condition_variable freed_;
    const int slots_, queue_;
    int running_ = 0, waiting_ = 0;
    bool closed_ = false;
};

}  // namespace hearth::server
