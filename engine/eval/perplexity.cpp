// Perplexity over chunks of token ids: a prefill of each chunk's unscored head, then the scored
// positions in batches with every row's logits, the log-softmax taken in double precision.
#include "engine/eval/perplexity.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "engine/str_cat.h"

namespace hearth {
namespace {

// -log softmax(logits)[target], in double precision.
double negativeLogLikelihood(std::span<const float> logits, int32_t target) {
    const float top = *std::max_element(logits.begin(), logits.end());
    double sum = 0.0;
    for (float v : logits) sum += std::exp(static_cast<double>(v) - top);
    return std::log(sum) + top - static_cast<double>(logits[static_cast<size_t>(target)]);
}

// Scored positions run through forward() this many at a time, with every row's logits.
constexpr size_t kScoredBatch = 32;

Result<double> chunkNll(Model& model, Backend& backend, std::span<const int32_t> chunk, int firstScored) {
    KvCache cache(model.kvLayout(), static_cast<int32_t>(chunk.size()));
    KvSequence seq;
    const size_t nVocab = static_cast<size_t>(model.config().nVocab);
    std::vector<float> logits(nVocab * kScoredBatch);
    const std::span<float> lastRow(logits.data(), nVocab);
    if (auto r = model.forward(backend, cache, seq, chunk.first(static_cast<size_t>(firstScored)), lastRow); !r)
        return std::unexpected(r.error());
    double nll = negativeLogLikelihood(lastRow, chunk[static_cast<size_t>(firstScored)]);
    // Token i + 1 is scored by the logits of token i; the kernels are batch-invariant, so these
    // rows equal one-token-at-a-time decoding bit for bit.
    for (size_t i = static_cast<size_t>(firstScored); i + 1 < chunk.size(); i += kScoredBatch) {
        const size_t n = std::min(kScoredBatch, chunk.size() - 1 - i);
        const std::span<float> rows(logits.data(), n * nVocab);
        if (auto r = model.forward(backend, cache, seq, chunk.subspan(i, n), rows); !r)
            return std::unexpected(r.error());
        for (size_t k = 0; k < n; ++k) nll += negativeLogLikelihood(rows.subspan(k * nVocab, nVocab), chunk[i + k + 1]);
    }
    return nll;
}

}  // namespace

double PerplexityResult::totalNll() const { return std::accumulate(chunkNll.begin(), chunkNll.end(), 0.0); }

int64_t PerplexityResult::nScored() const {
    return std::accumulate(chunkScored.begin(), chunkScored.end(), int64_t{0});
}

double PerplexityResult::perplexity() const {
    return nScored() > 0 ? std::exp(totalNll() / static_cast<double>(nScored())) : 0.0;
}

Result<PerplexityResult> perplexity(Model& model, Backend& backend, std::span<const std::vector<int32_t>> chunks,
                                    int firstScored) {
    PerplexityResult result;
    for (const std::vector<int32_t>& chunk : chunks) {
        if (firstScored < 1 || static_cast<size_t>(firstScored) >= chunk.size())
            return fail(
                ErrorCode::InvalidArgument,
                strCat("perplexity: first scored position ", firstScored, " outside a chunk of ", chunk.size()));
        for (int32_t id : chunk)
            if (id < 0 || id >= model.config().nVocab)
                return fail(ErrorCode::InvalidArgument, strCat("perplexity: token id ", id, " outside the vocabulary"));
        auto nll = chunkNll(model, backend, chunk, firstScored);
        if (!nll) return std::unexpected(nll.error());
        result.chunkNll.push_back(*nll);
        result.chunkScored.push_back(static_cast<int64_t>(chunk.size()) - firstScored);
    }
    return result;
}

}  // namespace hearth
