// Sampler stages (one function each) and the chain that runs them in DESIGN.md's order.
#include "engine/sample/sampler.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "engine/str_cat.h"

namespace hearth {
namespace {

bool before(const TokenLogit& a, const TokenLogit& b) {
    return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
}

// Softmax probabilities of candidates in their order, in doubles.
std::vector<double> probabilities(std::span<const TokenLogit> cands) {
    std::vector<double> p(cands.size());
    if (cands.empty()) return p;
    double top = -std::numeric_limits<double>::infinity();
    for (const TokenLogit& c : cands) top = std::max(top, double(c.logit));
    double sum = 0.0;
    for (size_t i = 0; i < cands.size(); ++i)
        sum += p[i] = std::isfinite(top) ? std::exp(double(cands[i].logit) - top) : 1.0;
    for (double& x : p) x /= sum;
    return p;
}

// The candidate with this id: candidates still in vocabulary order are found by index.
TokenLogit* findCandidate(std::span<TokenLogit> cands, int32_t id) {
    if (id >= 0 && static_cast<size_t>(id) < cands.size() && cands[static_cast<size_t>(id)].id == id)
        return &cands[static_cast<size_t>(id)];
    const auto it = std::find_if(cands.begin(), cands.end(), [id](const TokenLogit& c) { return c.id == id; });
    return it == cands.end() ? nullptr : &*it;
}

Result<void> inRange(const char* name, double value, double lo, double hi, bool loOpen, const char* shown) {
    const bool ok = (loOpen ? value > lo : value >= lo) && value <= hi;  // false for NaN
    if (ok) return {};
    return fail(ErrorCode::InvalidArgument, strCat(name, " ", value, " is out of range ", shown));
}

Result<void> validateLogitBias(const std::vector<LogitBias>& biases, int32_t nVocab) {
    for (const LogitBias& b : biases) {
        if (b.id < 0 || (nVocab > 0 && b.id >= nVocab))
            return fail(ErrorCode::InvalidArgument,
                        nVocab > 0
                            ? strCat("logit bias: token id ", b.id, " is outside the vocabulary (0..", nVocab - 1, ")")
                            : strCat("logit bias: token id ", b.id, " must be >= 0"));
        const bool banned = std::isinf(b.bias) && b.bias < 0;
        if (!banned && !(b.bias >= -100.0f && b.bias <= 100.0f))
            return fail(
                ErrorCode::InvalidArgument,
                strCat("logit bias of token ", b.id, ": ", b.bias, " is out of range [-100..100] (or -inf to ban it)"));
    }
    return {};
}

}  // namespace

Result<void> validate(const SamplingParams& p, int32_t nVocab) {
    const Result<void> checks[] = {
        inRange("temperature", p.temperature, 0.0, 100.0, false, "[0..100]"),
        p.topK >= 0 ? Result<void>{}
                    : fail(ErrorCode::InvalidArgument, strCat("top-k ", p.topK, " must be >= 0 (0 = off)")),
        inRange("typical-p", p.typicalP, 0.0, 1.0, true, "(0..1] (1 = off)"),
        inRange("top-p", p.topP, 0.0, 1.0, true, "(0..1] (1 = off)"),
        inRange("min-p", p.minP, 0.0, 1.0, false, "[0..1] (0 = off)"),
        inRange("repeat penalty", p.repeatPenalty, 0.0, 10.0, true, "(0..10] (1 = off)"),
        p.repeatLastN >= -1 ? Result<void>{}
                            : fail(ErrorCode::InvalidArgument,
                                   strCat("repeat-last-n ", p.repeatLastN, " must be >= -1 (-1 = all, 0 = off)")),
        inRange("presence penalty", p.presencePenalty, -2.0, 2.0, false, "[-2..2] (0 = off)"),
        inRange("frequency penalty", p.frequencyPenalty, -2.0, 2.0, false, "[-2..2] (0 = off)"),
        validateLogitBias(p.logitBias, nVocab),
    };
    for (const Result<void>& r : checks)
        if (!r) return r;
    return {};
}

void applyLogitBias(std::span<TokenLogit> cands, std::span<const LogitBias> biases) {
    for (const LogitBias& b : biases)
        if (TokenLogit* c = findCandidate(cands, b.id)) c->logit += b.bias;
}

void applyPenalties(std::span<TokenLogit> cands, std::span<const int32_t> window, float repeat, float presence,
                    float frequency) {
    std::vector<int32_t> seen(window.begin(), window.end());
    std::sort(seen.begin(), seen.end());
    for (size_t i = 0; i < seen.size();) {
        size_t j = i;
        while (j < seen.size() && seen[j] == seen[i]) ++j;
        if (TokenLogit* c = findCandidate(cands, seen[i])) {
            c->logit = c->logit > 0.0f ? c->logit / repeat : c->logit * repeat;
            c->logit -= static_cast<float>(j - i) * frequency + presence;
        }
        i = j;
    }
}

namespace {

// All candidates in before()'s order when they come in id order and no logit is NaN: a stable
// LSD radix sort on the logits' bits (descending; -0 as +0, which before() ties), so equal
// logits keep their id order, as before() ranks them. before() is then a strict total order,
// so the result is the one any sort by it gives. A heap sort of Gemma 3's 262,144 candidates
// (top-k off) took 31 ms a token. False (cands untouched) where the radix sort does not apply.
bool radixSortAll(std::span<TokenLogit> cands, std::vector<TokenLogit>& scratch) {
    const size_t n = cands.size();
    for (size_t i = 0; i < n; ++i)
        if (cands[i].id != static_cast<int32_t>(i) || std::isnan(cands[i].logit)) return false;
    const auto key = [](float logit) {
        uint32_t u;
        const float f = logit == 0.0f ? 0.0f : logit;
        std::memcpy(&u, &f, sizeof u);
        const uint32_t ascending = (u & 0x80000000u) ? ~u : (u | 0x80000000u);
        return ~ascending;
    };
    // Three passes of 11, 11 and 10 bits, their counts taken in one read; a pass whose digit
    // is the same for every candidate moves nothing and is skipped.
    constexpr int kShift[3] = {0, 11, 22};
    constexpr uint32_t kMask[3] = {0x7FF, 0x7FF, 0x3FF};
    std::vector<size_t> start(3 * 2049, 0);
    for (const TokenLogit& c : cands) {
        const uint32_t x = key(c.logit);
        for (int p = 0; p < 3; ++p) ++start[static_cast<size_t>(p) * 2049 + ((x >> kShift[p]) & kMask[p]) + 1];
    }
    scratch.resize(n);
    std::span<TokenLogit> from = cands, to(scratch);
    for (int p = 0; p < 3; ++p) {
        size_t* s = start.data() + static_cast<size_t>(p) * 2049;
        const uint32_t first = (key(cands[0].logit) >> kShift[p]) & kMask[p];
        if (s[first + 1] == n) continue;  // one digit for all: already in order for this pass
        for (uint32_t d = 0; d <= kMask[p]; ++d) s[d + 1] += s[d];
        for (const TokenLogit& c : from) to[s[(key(c.logit) >> kShift[p]) & kMask[p]]++] = c;
        std::swap(from, to);
    }
    if (from.data() != cands.data()) std::copy(from.begin(), from.end(), cands.begin());
    return true;
}

}  // namespace

size_t sampleTopK(std::span<TokenLogit> cands, int32_t k) {
    const size_t n = (k <= 0 || static_cast<size_t>(k) >= cands.size()) ? cands.size() : static_cast<size_t>(k);
    if (n == cands.size() && n > 256) {
        thread_local std::vector<TokenLogit> scratch;
        if (radixSortAll(cands, scratch)) return n;
    }
    std::partial_sort(cands.begin(), cands.begin() + static_cast<std::ptrdiff_t>(n), cands.end(), before);
    return n;
}

size_t sampleTypicalP(std::span<TokenLogit> cands, float p) {
    // Locally typical sampling (Meister et al. 2022, arXiv 2202.00666): keep the tokens whose
    // surprisal -log p_i is closest to the entropy H, the fewest whose mass reaches p.
    if (p >= 1.0f || cands.size() < 2) return cands.size();
    const std::vector<double> probs = probabilities(cands);
    double entropy = 0.0;
    for (double x : probs)
        if (x > 0.0) entropy -= x * std::log(x);
    std::vector<size_t> order(cands.size());
    std::vector<double> distance(cands.size());
    for (size_t i = 0; i < cands.size(); ++i) {
        order[i] = i;
        distance[i] =
            probs[i] > 0.0 ? std::abs(-std::log(probs[i]) - entropy) : std::numeric_limits<double>::infinity();
    }
    // Stable: equal distances keep the candidates' (sorted) order.
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return distance[a] < distance[b]; });
    size_t n = 0;
    double cumulative = 0.0;
    while (n < order.size() && cumulative < p) cumulative += probs[order[n++]];
    std::vector<TokenLogit> kept(n);
    for (size_t i = 0; i < n; ++i) kept[i] = cands[order[i]];
    std::sort(kept.begin(), kept.end(), before);
    std::copy(kept.begin(), kept.end(), cands.begin());
    return n;
}

size_t sampleTopP(std::span<TokenLogit> cands, float p) {
    if (p >= 1.0f || cands.empty()) return cands.size();
    const std::vector<double> probs = probabilities(cands);
    double cumulative = 0.0;
    for (size_t i = 0; i < cands.size(); ++i) {
        cumulative += probs[i];
        if (cumulative >= p) return i + 1;  // keep the smallest prefix reaching p
    }
    return cands.size();
}

size_t sampleMinP(std::span<TokenLogit> cands, float minP) {
    if (minP <= 0.0f || cands.empty()) return cands.size();
    // p_i >= minP * p_max  <=>  logit_i >= logit_max + ln(minP)
    const float threshold = cands[0].logit + std::log(minP);
    size_t n = 1;
    while (n < cands.size() && cands[n].logit >= threshold) ++n;
    return n;
}

void applyTemperature(std::span<TokenLogit> cands, float temperature) {
    for (TokenLogit& c : cands) c.logit /= temperature;
}

size_t drawIndex(std::span<const TokenLogit> cands, double u) {
    const std::vector<double> probs = probabilities(cands);
    double cumulative = 0.0;
    size_t lastPositive = 0;
    for (size_t i = 0; i < probs.size(); ++i) {
        if (probs[i] <= 0.0) continue;
        cumulative += probs[i];
        lastPositive = i;
        if (u < cumulative) return i;
    }
    return lastPositive;  // u beyond a cumulative sum that rounding left just under 1
}

double uniform01(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

namespace {

// The largest of init and x[0, n) by "greater than" (NaNs passed over; init not a NaN), in 16
// lanes the compiler vectorises. Of -0 and +0 it may give either; callers compare with ==.
float maxFrom(const float* x, size_t n, float init) {
    constexpr size_t kLanes = 16;
    float lanes[kLanes];
    std::fill(std::begin(lanes), std::end(lanes), init);
    size_t i = 0;
    for (; i + kLanes <= n; i += kLanes)
        for (size_t j = 0; j < kLanes; ++j) lanes[j] = x[i + j] > lanes[j] ? x[i + j] : lanes[j];
    float best = init;
    for (float v : lanes) best = v > best ? v : best;
    for (; i < n; ++i) best = x[i] > best ? x[i] : best;
    return best;
}

}  // namespace

// The index the scan "best = i whenever logits[i] > logits[best]" ends on (strict: the lower id
// wins a tie), in two passes the compiler vectorizes: the largest value (a NaN is never
// greater, so NaNs are passed over, as in the scan), then the first index holding it (== treats
// -0 and +0 alike, and the scan keeps the first of them too). A NaN at index 0 is never beaten.
// The scan, one compare per id reloading logits[best], took 49 µs for SmolLM2's 49,152 ids and
// 261 µs for Gemma 3's 262,144 (2-3% of a decode step), and greedy speculative verification
// runs it for every row.
int32_t argmax(std::span<const float> logits) {
    const size_t n = logits.size();
    if (n == 0 || std::isnan(logits[0])) return 0;
    const float best = maxFrom(logits.data(), n, logits[0]);
    for (size_t k = 0; k < n; ++k)
        if (logits[k] == best) return static_cast<int32_t>(k);
    return 0;  // not reached: best is one of the values
}

int32_t argmax(std::span<const TokenLogit> cands) {
    const auto it = std::min_element(cands.begin(), cands.end(), before);
    return it == cands.end() ? -1 : it->id;
}

namespace {

// The k candidates that rank first by before(), from logits with a few ids' values replaced
// (patched, sorted by id): false where a NaN could make the order differ from sampleTopK's.
// A heap keeps the k best so far, worst at the front; blocks of 16 logits all below its worst
// are passed over with one vectorized compare (a logit equal to the worst is left to before()).
bool selectTopK(std::span<const float> logits, size_t k, std::span<const TokenLogit> patched,
                std::vector<TokenLogit>& out) {
    out.clear();
    out.reserve(k);
    for (const TokenLogit& p : patched)
        if (std::isnan(p.logit)) return false;
    const auto offer = [&](int32_t id, float logit) {
        const TokenLogit c{id, logit};
        if (out.size() < k) {
            out.push_back(c);
            std::push_heap(out.begin(), out.end(), before);
        } else if (before(c, out.front())) {
            std::pop_heap(out.begin(), out.end(), before);
            out.back() = c;
            std::push_heap(out.begin(), out.end(), before);
        }
    };
    size_t nextPatch = 0;
    const auto visit = [&](size_t i) {
        while (nextPatch < patched.size() && static_cast<size_t>(patched[nextPatch].id) < i) ++nextPatch;
        if (nextPatch < patched.size() && static_cast<size_t>(patched[nextPatch].id) == i) return;  // offered below
        offer(static_cast<int32_t>(i), logits[i]);
    };
    // Blocks of 16 as four 4-float vectors (GCC/Clang vector extensions: SSE2 here, any target).
    using F4 = float __attribute__((vector_size(16)));
    using I4 = int32_t __attribute__((vector_size(16)));
    constexpr size_t kBlock = 16;
    const size_t n = logits.size();
    size_t i = 0;
    for (; i + kBlock <= n; i += kBlock) {
        F4 a, b, c, d;
        std::memcpy(&a, logits.data() + i, sizeof a);
        std::memcpy(&b, logits.data() + i + 4, sizeof b);
        std::memcpy(&c, logits.data() + i + 8, sizeof c);
        std::memcpy(&d, logits.data() + i + 12, sizeof d);
        const float worst = out.size() < k ? -std::numeric_limits<float>::infinity() : out.front().logit;
        const F4 t = {worst, worst, worst, worst};
        // A lane is set where a logit may enter the heap or is NaN (unordered: != itself).
        const I4 hit = (a >= t) | (b >= t) | (c >= t) | (d >= t) | (a != a) | (b != b) | (c != c) | (d != d);
        uint64_t halves[2];
        std::memcpy(halves, &hit, sizeof halves);
        if ((halves[0] | halves[1]) == 0 && out.size() >= k) continue;
        for (size_t j = 0; j < kBlock; ++j) {
            if (std::isnan(logits[i + j])) return false;
            visit(i + j);
        }
    }
    for (; i < n; ++i) {
        if (std::isnan(logits[i])) return false;
        visit(i);
    }
    for (const TokenLogit& p : patched) offer(p.id, p.logit);
    std::sort(out.begin(), out.end(), before);
    return true;
}

}  // namespace

std::span<TokenLogit> topKCandidates(std::span<const float> logits, const SamplingParams& params,
                                     std::span<const int32_t> history, std::vector<TokenLogit>& storage) {
    const bool penalties = penaltiesActive(params);
    const std::span<const int32_t> window = penalties ? penaltyWindow(history, params.repeatLastN) : history.first(0);
    if (params.topK > 0 && static_cast<size_t>(params.topK) < logits.size()) {
        // The ids the biases and penalties touch, with their values after both, as the chain makes them.
        std::vector<TokenLogit> patched;
        for (const LogitBias& b : params.logitBias)
            if (b.id >= 0 && static_cast<size_t>(b.id) < logits.size()) patched.push_back({b.id, 0.0f});
        for (int32_t id : window)
            if (id >= 0 && static_cast<size_t>(id) < logits.size()) patched.push_back({id, 0.0f});
        std::sort(patched.begin(), patched.end(), [](const TokenLogit& a, const TokenLogit& b) { return a.id < b.id; });
        patched.erase(std::unique(patched.begin(), patched.end(),
                                  [](const TokenLogit& a, const TokenLogit& b) { return a.id == b.id; }),
                      patched.end());
        for (TokenLogit& p : patched) p.logit = logits[static_cast<size_t>(p.id)];
        applyLogitBias(patched, params.logitBias);
        if (penalties)
            applyPenalties(patched, window, params.repeatPenalty, params.presencePenalty, params.frequencyPenalty);
        if (selectTopK(logits, static_cast<size_t>(params.topK), patched, storage)) return storage;
    }
    const std::span<TokenLogit> c = biasedCandidates(logits, params, history, storage);
    return c.first(sampleTopK(c, params.topK));
}

namespace {

// The greedy choice under logit biases (no penalties) without copying the vocabulary: ids in
// increasing order, each biased id at its logit plus its biases (added in list order, as
// applyLogitBias does); strictly greater wins, so a tie goes to the lower id, as before().
int32_t argmaxWithBias(std::span<const float> logits, std::span<const LogitBias> biases,
                       std::vector<TokenLogit>& biased) {
    biased.clear();
    for (const LogitBias& b : biases) {
        if (b.id < 0 || static_cast<size_t>(b.id) >= logits.size()) continue;  // as findCandidate
        auto it = std::find_if(biased.begin(), biased.end(), [&](const TokenLogit& c) { return c.id == b.id; });
        if (it == biased.end()) it = biased.insert(biased.end(), {b.id, logits[static_cast<size_t>(b.id)]});
        it->logit += b.bias;
    }
    std::sort(biased.begin(), biased.end(), [](const TokenLogit& a, const TokenLogit& b) { return a.id < b.id; });
    if (logits.empty()) return -1;
    // As argmax() over the biased values: the largest (a NaN at id 0 wins, later NaNs never),
    // the runs between biased ids in vectorised lanes, then the first id holding it. (A scan
    // keeping each strictly greater value took about 49 us a row of 49,152, argmax 15.)
    const float first = !biased.empty() && biased.front().id == 0 ? biased.front().logit : logits[0];
    if (std::isnan(first)) return 0;
    float best = first;
    size_t i = 1;
    for (const TokenLogit& b : biased) {
        const auto id = static_cast<size_t>(b.id);
        if (id < i) continue;  // id 0, taken above
        best = maxFrom(logits.data() + i, id - i, best);
        best = b.logit > best ? b.logit : best;
        i = id + 1;
    }
    best = maxFrom(logits.data() + i, logits.size() - i, best);
    if (first == best) return 0;
    i = 1;
    for (const TokenLogit& b : biased) {
        const auto id = static_cast<size_t>(b.id);
        if (id < i) continue;
        for (; i < id; ++i)
            if (logits[i] == best) return static_cast<int32_t>(i);
        if (b.logit == best) return b.id;
        i = id + 1;
    }
    for (; i < logits.size(); ++i)
        if (logits[i] == best) return static_cast<int32_t>(i);
    return 0;  // not reached: best is one of the values
}

}  // namespace

Sampler::Sampler(const SamplingParams& params) : params_(params), rng_(params.seed) {}

void Sampler::observe(std::span<const int32_t> tokens) {
    for (int32_t t : tokens) append(t);
}

void Sampler::append(int32_t token) {
    history_.push_back(token);
    // Keep the window, dropping the old part in amortised O(1).
    const auto n = static_cast<size_t>(params_.repeatLastN);
    if (params_.repeatLastN >= 0 && history_.size() > 2 * n + 64)
        history_.erase(history_.begin(), history_.end() - static_cast<std::ptrdiff_t>(n));
}

std::span<const int32_t> penaltyWindow(std::span<const int32_t> history, int32_t repeatLastN) {
    if (repeatLastN < 0) return history;
    return history.last(std::min(history.size(), static_cast<size_t>(repeatLastN)));
}

bool penaltiesActive(const SamplingParams& params) {
    return params.repeatLastN != 0 &&
        (params.repeatPenalty != 1.0f || params.presencePenalty != 0.0f || params.frequencyPenalty != 0.0f);
}

bool Sampler::plainArgmax() const {
    return params_.temperature <= 0.0f && params_.logitBias.empty() && !penaltiesActive(params_);
}

int32_t Sampler::sample(std::span<const float> logits) {
    const bool greedy = params_.temperature <= 0.0f;
    int32_t token;
    if (plainArgmax()) {
        token = argmax(logits);
    } else if (greedy && !penaltiesActive(params_)) {
        token = argmaxWithBias(logits, params_.logitBias, biased_);
    } else if (greedy) {  // with penalties
        token = argmax(std::span<const TokenLogit>(biasedCandidates(logits, params_, history_, cands_)));
    } else {
        token = draw(topKCandidates(logits, params_, history_, cands_));
    }
    append(token);
    return token;
}

int32_t Sampler::draw(std::span<TokenLogit> c) {
    c = c.first(sampleTypicalP(c, params_.typicalP));
    c = c.first(sampleTopP(c, params_.topP));
    c = c.first(sampleMinP(c, params_.minP));
    applyTemperature(c, params_.temperature);
    return c[drawIndex(c, uniform01(rng_))].id;
}

int32_t candidatesNeeded(const SamplingParams& params, std::span<const int32_t> history, int32_t nVocab,
                         int32_t maxCandidates, int32_t nMore) {
    const bool greedy = params.temperature <= 0.0f;
    if (!greedy && params.topK <= 0) return 0;
    // A biased or penalised id whose logit only goes down cannot pass one of the row's first k +
    // (touched ids) raw logits: each untouched id ranked before it in the end was ranked before
    // it in the row. A logit that may go up could come from anywhere in the row.
    const bool penalties = penaltiesActive(params);
    if (penalties && (params.repeatPenalty < 1.0f || params.presencePenalty < 0.0f || params.frequencyPenalty < 0.0f))
        return 0;
    std::vector<int32_t> touched;
    for (const LogitBias& b : params.logitBias) {
        if (!(b.bias <= 0.0f)) return 0;
        touched.push_back(b.id);
    }
    if (penalties)
        for (int32_t id : penaltyWindow(history, params.repeatLastN)) touched.push_back(id);
    std::sort(touched.begin(), touched.end());
    const auto nTouched = std::unique(touched.begin(), touched.end()) - touched.begin();
    const int64_t k = (greedy ? 1 : params.topK) + static_cast<int64_t>(nTouched) + (penalties ? nMore : 0);
    return k <= maxCandidates && k < nVocab ? static_cast<int32_t>(k) : 0;
}

namespace {

std::span<TokenLogit> biasAndPenalise(std::span<TokenLogit> c, const SamplingParams& params,
                                      std::span<const int32_t> history) {
    applyLogitBias(c, params.logitBias);
    if (penaltiesActive(params))
        applyPenalties(c, penaltyWindow(history, params.repeatLastN), params.repeatPenalty, params.presencePenalty,
                       params.frequencyPenalty);
    return c;
}

}  // namespace

std::span<TokenLogit> biasFirstLogits(std::span<const TokenLogit> first, const SamplingParams& params,
                                      std::span<const int32_t> history, std::vector<TokenLogit>& storage) {
    storage.assign(first.begin(), first.end());
    return biasAndPenalise(storage, params, history);
}

std::span<TokenLogit> biasedCandidates(std::span<const float> logits, const SamplingParams& params,
                                       std::span<const int32_t> history, std::vector<TokenLogit>& storage) {
    storage.resize(logits.size());
    for (size_t i = 0; i < logits.size(); ++i) storage[i] = {static_cast<int32_t>(i), logits[i]};
    return biasAndPenalise(storage, params, history);
}

int32_t Sampler::candidatesNeeded(int32_t nVocab, int32_t maxCandidates) const {
    return hearth::candidatesNeeded(params_, history_, nVocab, maxCandidates);
}

int32_t Sampler::sampleTop(std::span<const TokenLogit> top) {
    const std::span<TokenLogit> c = biasFirstLogits(top, params_, history_, cands_);
    const int32_t token = params_.temperature <= 0.0f ? argmax(std::span<const TokenLogit>(c))
                                                      : draw(c.first(sampleTopK(c, params_.topK)));
    append(token);
    return token;
}

}  // namespace hearth
