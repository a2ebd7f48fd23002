// EngineRequests: the engine's requests in flight — per-request sampling, UTF-8 and stop
// state, the scheduler and the runner — behind Engine::submit/step/cancel. Internal to engine/.
// Thread-safety: engine thread only.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>

#include "engine/engine.h"
#include "engine/runner/runner.h"
#include "engine/stop/stop_matcher.h"

namespace hearth {

class EngineRequests {
public:
    // All references must outlive this object.
    EngineRequests(Model& model, Backend& backend, KvCache& cache, const Tokenizer& tokenizer,
                   int32_t contextLength, SchedulerConfig config);
    ~EngineRequests();

    // Precondition: request validated (non-empty prompt shorter than the context, sampling).
    RequestId submit(GenerateRequest request);
    std::vector<EngineEvent> step();
    // Finishes the request with `reason` at the next step().
    void cancel(RequestId id, FinishReason reason);
    bool idle() const { return requests_.empty(); }
    const Scheduler& scheduler() const { return scheduler_; }
    Scheduler& scheduler() { return scheduler_; }

private:
    using Clock = std::chrono::steady_clock;
    struct Request {
        GenerateRequest request;
        Sampler sampler;
        Utf8Stream utf8;
        StopMatcher stop;
        int32_t nGenerated = 0;
        Clock::time_point submitted, firstToken;
        std::optional<Clock::time_point> deadline;
        std::optional<FinishReason> cancelWith;
    };

    void expire(std::vector<EngineEvent>& events);
    void sampleOutputs(const StepPlan& plan, std::vector<ChunkOutput>& outputs, std::vector<EngineEvent>& events);
    void onToken(RequestId id, TokenId token, std::vector<std::pair<TokenId, float>> top,
                 std::vector<EngineEvent>& events);
    std::optional<FinishReason> stopReason(RequestId id, const Request& r, TokenId token, bool stopString) const;
    void finish(RequestId id, FinishReason reason, std::vector<EngineEvent>& events, std::optional<Error> error = {});

    const Tokenizer& tokenizer_;
    int32_t contextLength_;
    Scheduler scheduler_;
    Runner runner_;
    std::map<RequestId, std::unique_ptr<Request>> requests_;
};

}  // namespace hearth
