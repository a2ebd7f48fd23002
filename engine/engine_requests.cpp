// Requests in flight: each step expires timed-out and cancelled requests, lets the scheduler
// plan (speculating requests propose drafts as their sampling chunk is planned), runs the
// plan, samples or verifies, and turns each output token into events and stop decisions.
#include "engine/engine_requests.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace hearth {
namespace {

double msBetween(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
}

// The n highest logits, descending; ties: lower id first (the order of the first logits a
// backend gives, Backend::firstValues).
std::vector<std::pair<TokenId, float>> topLogits(std::span<const float> logits, int32_t n) {
    const auto k = static_cast<int32_t>(std::min<size_t>(static_cast<size_t>(n), logits.size()));
    std::vector<Backend::TopEntry> scratch, first(static_cast<size_t>(k));
    Backend::firstValues(logits.data(), static_cast<int64_t>(logits.size()), k, scratch, first.data());
    std::vector<std::pair<TokenId, float>> out;
    out.reserve(first.size());
    for (const Backend::TopEntry& e : first) out.emplace_back(e.id, e.value);
    return out;
}

// A row's first logits as the sampler's candidates.
std::vector<TokenLogit> topLogitsOf(std::span<const Backend::TopEntry> top) {
    std::vector<TokenLogit> out(top.size());
    for (size_t i = 0; i < top.size(); ++i) out[i] = {top[i].id, top[i].value};
    return out;
}

}  // namespace

EngineRequests::EngineRequests(Model& model, Backend& backend, KvCache& cache, const Tokenizer& tokenizer,
                               int32_t contextLength, SchedulerConfig config)
    : tokenizer_(tokenizer),
      contextLength_(contextLength),
      nVocab_(model.config().nVocab),
      scheduler_(cache, config),
      runner_(model, backend, cache),
      specSessions_(tokenizer, nVocab_, backend, contextLength),
      // Tree rows attend through host-memory block tables (ForwardBatch): CPU backends only.
      treesAllowed_(backend.name().starts_with("CPU")),
      logitsOnHost_(model.logitsOnHost(backend)) {}

EngineRequests::~EngineRequests() = default;

Result<RequestId> EngineRequests::submit(GenerateRequest request) {
    auto r = std::make_unique<Request>(Request{.request = request,
                                               .sampler = Sampler(request.sampling),
                                               .stop = StopMatcher(request.stop),
                                               .submitted = Clock::now()});
    if (request.spec.drafter != SpecDrafter::Off) {
        auto session = specSessions_.take(request.spec);
        if (!session) return std::unexpected(session.error());
        r->spec = std::make_unique<SpecRequest>(std::move(*session), request.sampling, request.prompt,
                                                request.maxTokens, contextLength_);
        r->spec->allowTrees(treesAllowed_);
    }
    r->sampler.observe(request.prompt);  // the penalties look back over the prompt too
    if (request.timeoutMs > 0) r->deadline = r->submitted + std::chrono::milliseconds(request.timeoutMs);
    const RequestId id = scheduler_.add(std::move(request.prompt));
    requests_[id] = std::move(r);
    return id;
}

void EngineRequests::cancel(RequestId id, FinishReason reason) {
    if (auto it = requests_.find(id); it != requests_.end() && !it->second->cancelWith) it->second->cancelWith = reason;
}

void EngineRequests::expire(std::vector<EngineEvent>& events) {
    const auto now = Clock::now();
    std::vector<std::pair<RequestId, FinishReason>> done;
    std::vector<std::pair<RequestId, Error>> failed;
    for (const auto& [id, r] : requests_) {
        if (r->failWith) failed.emplace_back(id, *r->failWith);
        else if (r->cancelWith) done.emplace_back(id, *r->cancelWith);
        else if (r->deadline && now >= *r->deadline) done.emplace_back(id, FinishReason::Timeout);
    }
    for (const auto& [id, reason] : done) finish(id, reason, events);
    for (const auto& [id, error] : failed) finish(id, FinishReason::Error, events, error);
}

std::vector<EngineEvent> EngineRequests::step() {
    std::vector<EngineEvent> events;
    const auto stepStart = Clock::now();
    expire(events);
    const StepPlan plan = scheduler_.schedule(
        [this](SeqId id, std::span<const int32_t> context, int32_t room) { return propose(id, context, room); });
    for (SeqId id : plan.failed)
        finish(id, FinishReason::Error, events, Error{ErrorCode::OutOfMemory, "the KV cache cannot hold this request"});
    if (plan.chunks.empty()) return events;
    // On a backend with memory of its own, a request whose choice needs only a row's first logits
    // brings down those instead of the row: a plain greedy request its id, another its top
    // candidates (Sampler::candidatesNeeded), at least as many as the top logits it reports, and
    // with log-probabilities the rows' log-sum-exps besides.
    std::vector<RowsWanted> wanted(plan.chunks.size());
    if (!logitsOnHost_)
        for (size_t c = 0; c < plan.chunks.size(); ++c) {
            const auto it = requests_.find(plan.chunks[c].seq);
            if (it == requests_.end()) continue;
            const Request& r = *it->second;
            const bool reports = r.request.nTopLogits > 0 || r.request.logprobs;
            if (!r.spec && !reports && r.sampler.plainArgmax()) {
                wanted[c].ids = true;
                continue;
            }
            const int32_t needed = r.spec
                ? r.spec->candidatesNeeded(nVocab_, Backend::kMaxTopK, plan.chunks[c].nDrafts())
                : r.sampler.candidatesNeeded(nVocab_, Backend::kMaxTopK);
            const int32_t k = std::max(needed, r.request.nTopLogits);
            if (needed == 0 || k > Backend::kMaxTopK || k >= nVocab_) continue;  // the whole rows
            wanted[c].top = k;
            wanted[c].lse = r.request.logprobs;
        }
    std::vector<ChunkOutput> outputs = runner_.run(plan, scheduler_, wanted);
    sampleOutputs(plan, outputs, events, stepStart);
    return events;
}

PlannedDrafts EngineRequests::propose(RequestId id, std::span<const int32_t> context, int32_t room) {
    auto it = requests_.find(id);
    if (it == requests_.end() || !it->second->spec || it->second->failWith) return {};
    auto drafts = it->second->spec->propose(context, room);
    if (drafts) {
        if (drafts->isChain()) return PlannedDrafts(std::move(drafts->tokens));
        return PlannedDrafts(std::move(drafts->tokens), std::move(drafts->parents));
    }
    it->second->failWith = drafts.error();
    return {};
}

void EngineRequests::sampleOutputs(const StepPlan& plan, std::vector<ChunkOutput>& outputs,
                                   std::vector<EngineEvent>& events, Clock::time_point stepStart) {
    StepResult result;
    std::vector<std::vector<RowReport>> reports;  // per sampled, per token
    const double stepMs = msBetween(stepStart, Clock::now());
    for (size_t i = 0; i < outputs.size(); ++i) {
        ChunkOutput& out = outputs[i];
        if (out.error) {
            finish(out.seq, FinishReason::Error, events, out.error);
            continue;
        }
        if (!out.ids.empty()) {  // a plain greedy request: its id, chosen where the logits are
            Request& r = *requests_.at(out.seq);
            r.sampler.accept(out.ids[0]);
            reports.emplace_back().emplace_back();
            result.sampled.push_back({out.seq, out.ids[0]});
            continue;
        }
        if (out.logits.empty()) continue;
        Request& r = *requests_.at(out.seq);
        result.sampled.push_back(sampleChunk(r, plan.chunks[i], out, stepMs, reports.emplace_back()));
    }
    scheduler_.complete(plan, result);
    // Token by token: an end, a stop string or the length limit inside an accepted run cuts it
    // there (finish() removes the request; its remaining tokens are dropped).
    for (size_t i = 0; i < result.sampled.size(); ++i) {
        const SampledToken& s = result.sampled[i];
        const size_t n = s.accepted.size() + 1;
        for (size_t j = 0; j < n && requests_.contains(s.seq); ++j) {
            Request& r = *requests_.at(s.seq);
            if (j == 0 && r.nGenerated == 0) r.nFirstStep = static_cast<int32_t>(n);
            onToken(s.seq, j < s.accepted.size() ? s.accepted[j] : s.token, std::move(reports[i][j]), events);
        }
    }
}

SampledToken EngineRequests::sampleChunk(Request& r, const PlannedChunk& chunk, const ChunkOutput& out, double stepMs,
                                         std::vector<RowReport>& reports) {
    const std::span<const float> logits = out.logits;
    const auto nVocab = static_cast<size_t>(nVocab_);
    const auto row = [&](size_t i) { return logits.subspan(i * nVocab, nVocab); };
    // The rows' first logits where they came down instead of the rows (RowsWanted::top), else
    // the rows.
    const std::vector<TokenLogit> first = topLogitsOf(out.top);
    const TargetRows rows{logits, nVocab_, first, out.topK};
    // Row i chose token: its top logits, or with request.logprobs its log-softmax values — from
    // the row, or from its first logits and log-sum-exp where those came down instead.
    const auto report = [&](size_t i, TokenId token) {
        RowReport rep;
        const int32_t nTop = r.request.nTopLogits;
        if (nTop <= 0 && !r.request.logprobs) return rep;
        const std::span<const TokenLogit> firstLogits = rows.row(i).firstLogits;
        if (firstLogits.empty()) {
            if (nTop > 0) rep.top = topLogits(row(i), nTop);
            if (!r.request.logprobs) return rep;
            const float lse = logSumExp(row(i).data(), static_cast<int64_t>(nVocab));
            for (auto& [id, value] : rep.top) value -= lse;
            rep.logprob = row(i)[static_cast<size_t>(token)] - lse;
            return rep;
        }
        // At least nTop entries, in topLogits' order (Backend::topKRows).
        for (int32_t j = 0; j < nTop; ++j)
            rep.top.emplace_back(firstLogits[static_cast<size_t>(j)].id, firstLogits[static_cast<size_t>(j)].logit);
        if (!r.request.logprobs) return rep;
        const float lse = out.lse[i];
        for (auto& [id, value] : rep.top) value -= lse;
        // The choice is always one of the row's first logits: the chain chooses among them
        // (candidatesNeeded), and a kept draft had to be one of the chain's candidates.
        const auto chosen =
            std::find_if(firstLogits.begin(), firstLogits.end(), [&](const TokenLogit& e) { return e.id == token; });
        rep.logprob = chosen != firstLogits.end() ? chosen->logit - lse : -std::numeric_limits<float>::infinity();
        return rep;
    };
    if (!r.spec) {
        const TargetRow row0 = rows.row(0);
        const TokenId token =
            row0.firstLogits.empty() ? r.sampler.sample(row0.logits) : r.sampler.sampleTop(row0.firstLogits);
        reports.push_back(report(0, token));
        return {chunk.seq, token};
    }
    const int32_t nDrafts = chunk.nDrafts();
    const bool prefill = std::ssize(chunk.tokens) - nDrafts > 1;
    const VerifyOutcome o = r.spec->verify(rows, nDrafts, scheduler_.tokens(chunk.seq), prefill, stepMs);
    for (size_t i = 0; i < o.tokens.size(); ++i)
        reports.push_back(report(o.rows.empty() ? i : static_cast<size_t>(o.rows[i]), o.tokens[i]));
    return {chunk.seq, o.tokens.back(), std::vector<int32_t>(o.tokens.begin(), o.tokens.end() - 1), o.nodes};
}

std::optional<FinishReason> EngineRequests::stopReason(const Request& r, TokenId token, bool stopString) const {
    if (stopString) return FinishReason::Stop;
    if (tokenizer_.isEndOfGeneration(token)) return FinishReason::Eos;
    // The next token would need position prompt + generated, which the context does not have.
    // (Counted, not read from the scheduler: a verify step appends several tokens at once.)
    if (std::ssize(r.request.prompt) + r.nGenerated >= contextLength_) return FinishReason::Context;
    if (r.nGenerated >= r.request.maxTokens) return FinishReason::Length;
    if (r.deadline && Clock::now() >= *r.deadline) return FinishReason::Timeout;
    return std::nullopt;
}

void EngineRequests::onToken(RequestId id, TokenId token, RowReport report, std::vector<EngineEvent>& events) {
    Request& r = *requests_.at(id);
    if (r.request.maxTokens <= 0) {  // nothing to generate: the prompt was only read
        finish(id, FinishReason::Length, events);
        return;
    }
    if (r.nGenerated++ == 0) r.firstToken = Clock::now();
    const bool eog = tokenizer_.isEndOfGeneration(token);
    const StopMatcher::Output shown = r.stop.push(eog ? r.utf8.flush() : r.utf8.push(tokenizer_.tokenBytes(token)));
    EngineEvent e;
    e.kind = EngineEvent::Kind::Token;
    e.request = id;
    e.token = token;
    e.text = shown.text;
    e.topLogits = std::move(report.top);
    e.logprob = report.logprob;
    events.push_back(std::move(e));
    if (const auto reason = stopReason(r, token, shown.stopped)) finish(id, *reason, events);
}

void EngineRequests::finish(RequestId id, FinishReason reason, std::vector<EngineEvent>& events,
                            std::optional<Error> error) {
    auto it = requests_.find(id);
    if (it == requests_.end()) return;
    Request& r = *it->second;
    const auto now = Clock::now();
    EngineEvent e;
    e.kind = EngineEvent::Kind::Finish;
    e.request = id;
    e.reason = reason;
    e.error = std::move(error);
    e.text = r.stop.push(r.utf8.flush()).text + r.stop.flush();
    GenerateTimings& t = e.timings;
    if (scheduler_.contains(id)) t.prefixCacheHitTokens = scheduler_.prefixHitTokens(id);
    t.prefillTokens = static_cast<int32_t>(r.request.prompt.size()) - t.prefixCacheHitTokens;
    const auto prefillEnd = r.nGenerated > 0 ? r.firstToken : now;
    t.prefillMs = t.ttftMs = msBetween(r.submitted, prefillEnd);
    t.decodeTokens = std::max(0, r.nGenerated - std::max(1, r.nFirstStep));
    t.decodeMs = r.nGenerated > 0 ? msBetween(r.firstToken, now) : 0.0;
    if (r.spec) {
        e.spec = r.spec->stats();
        specSessions_.put(r.spec->release());
    }
    scheduler_.finish(id, reason != FinishReason::Error);
    requests_.erase(it);
    events.push_back(std::move(e));
}

}  // namespace hearth
