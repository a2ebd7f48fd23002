// EngineRequests: the engine's requests in flight — per-request sampling, speculation, UTF-8
// and stop state, the scheduler and the runner — behind Engine::submit/step/cancel. Internal
// to engine/ (and to tests that drive it with their own speculation sessions).
// Thread-safety: engine thread only.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>

#include "engine/engine.h"
#include "engine/runner/runner.h"
#include "engine/spec/spec_request.h"
#include "engine/spec/spec_session.h"
#include "engine/stop/stop_matcher.h"

namespace hearth {

class EngineRequests {
public:
    // All references must outlive this object.
    EngineRequests(Model& model, Backend& backend, KvCache& cache, const Tokenizer& tokenizer, int32_t contextLength,
                   SchedulerConfig config);
    ~EngineRequests();

    // Precondition: request validated (non-empty prompt shorter than the context, sampling).
    // Errors: those of SpecSessionPool::take when request.spec is on (a draft model that does
    // not load or has another vocabulary, draft lengths out of range).
    Result<RequestId> submit(GenerateRequest request);
    std::vector<EngineEvent> step();
    // Finishes the request with `reason` at the next step().
    void cancel(RequestId id, FinishReason reason);
    bool idle() const { return requests_.empty(); }
    const Scheduler& scheduler() const { return scheduler_; }
    Scheduler& scheduler() { return scheduler_; }
    // Sessions that speculating requests take up (tests put in ones with a changed drafter or
    // verifier, and keep a pointer to adjust its policy while it is idle).
    SpecSessionPool& specSessions() { return specSessions_; }

private:
    using Clock = std::chrono::steady_clock;
    struct Request {
        // Built with named fields (engine_requests.cpp); every member has a default.
        GenerateRequest request{};
        Sampler sampler;
        Utf8Stream utf8{};
        StopMatcher stop;
        int32_t nGenerated = 0;
        Clock::time_point submitted{}, firstToken{};
        std::optional<Clock::time_point> deadline{};
        std::optional<FinishReason> cancelWith{};
        std::optional<Error> failWith{};  // the drafter failed: finish with Error next step
        std::unique_ptr<SpecRequest> spec{};  // request.spec on
        int32_t nFirstStep = 0;  // tokens of the step that gave the first one
    };

    // What a Token event reports about the logits row that chose its token.
    struct RowReport {
        std::vector<std::pair<TokenId, float>> top;  // logits, or log-probabilities with request.logprobs
        float logprob = 0;  // the chosen token's, with request.logprobs
    };

    void expire(std::vector<EngineEvent>& events);
    PlannedDrafts propose(RequestId id, std::span<const int32_t> context, int32_t room);
    void sampleOutputs(const StepPlan& plan, std::vector<ChunkOutput>& outputs, std::vector<EngineEvent>& events,
                       Clock::time_point stepStart);
    // The chunk's tokens and the rows' top logits: one token plainly, or the verifier's; each
    // from the rows' first logits where only those came down (TargetRows).
    SampledToken sampleChunk(Request& r, const PlannedChunk& chunk, const ChunkOutput& out, double stepMs,
                             std::vector<RowReport>& reports);
    void onToken(RequestId id, TokenId token, RowReport report, std::vector<EngineEvent>& events);
    std::optional<FinishReason> stopReason(const Request& r, TokenId token, bool stopString) const;
    void finish(RequestId id, FinishReason reason, std::vector<EngineEvent>& events, std::optional<Error> error = {});

    const Tokenizer& tokenizer_;
    int32_t contextLength_;
    int32_t nVocab_;
    Scheduler scheduler_;
    Runner runner_;
    SpecSessionPool specSessions_;
    bool treesAllowed_ = false;
    bool logitsOnHost_ = true;  // the backend computes in host memory: no greedy ids or top logits (ForwardItem)
    std::map<RequestId, std::unique_ptr<Request>> requests_;
};

}  // namespace hearth
