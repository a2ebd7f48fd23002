// Laying out a batched forward pass and the per-item steps around the shared matmuls. Batch
// invariance (DESIGN.md) holds because every op over the concatenated rows is row-wise and the
// CPU matmuls give each row the same bits whatever the batch; attention and K/V stay per item.
#include "engine/model/forward_batch.h"

#include <algorithm>

#include "engine/model/hparams.h"
#include "engine/str_cat.h"

namespace hearth {

Error ForwardBatch::itemError(const Error& e, size_t item, size_t nItems) {
    if (nItems == 1) return e;
    return Error{e.code, strCat("item ", item, ": ", e.message)};
}

Result<void> ForwardBatch::check(const Model& model, std::span<const ForwardItem> items) {
    for (size_t i = 0; i < items.size(); ++i) {
        if (auto r = model.checkItem(items[i]); !r) return std::unexpected(itemError(r.error(), i, items.size()));
        for (size_t j = 0; j < i; ++j)
            if (items[j].seq == items[i].seq)
                return fail(ErrorCode::InvalidArgument, strCat("items ", j, " and ", i, " run on the same sequence"));
    }
    return {};
}

Result<void> ForwardBatch::prepare(const Model& model, const KvCache& cache, std::span<const ForwardItem> items) {
    items_.clear();
    firstRow_.assign(1, 0);
    tokens_.clear();
    positions_.clear();
    if (auto r = check(model, items); !r) return r;
    // Asserted, not reserved: a reservation here would hide a plan that lacks one, and the
    // step's state has one owner (the scheduler, or Model::forward for its own callers).
    for (size_t i = 0; i < items.size(); ++i) {
        const ForwardItem& item = items[i];
        if (item.tokens.empty()) continue;
        const int32_t first = item.seq->nTokens + item.offset, end = first + static_cast<int32_t>(item.tokens.size());
        if (!cache.reserved(*item.seq, end))
            return std::unexpected(itemError(Error{ErrorCode::InvalidArgument,
                                                   strCat("KV positions [", first, ", ", end,
                                                          ") are not reserved; the caller "
                                                          "reserves them (Scheduler::schedule, Model::forward)")},
                                             i, items.size()));
    }
    for (const ForwardItem& item : items) {
        if (item.tokens.empty()) continue;
        items_.push_back(item);
        tokens_.insert(tokens_.end(), item.tokens.begin(), item.tokens.end());
        const int32_t first = item.seq->nTokens + item.offset;
        for (size_t t = 0; t < item.tokens.size(); ++t) positions_.push_back(first + static_cast<int32_t>(t));
        firstRow_.push_back(static_cast<int64_t>(tokens_.size()));
    }
    return {};
}

void ForwardBatch::attention(Backend& b, KvCache& cache, int layer, const AttentionShape& shape, const float* q,
                             const float* k, const float* v, float* out) const {
    const int64_t qDim = int64_t{shape.nHeads} * shape.headDim, kvDim = int64_t{shape.nKvHeads} * shape.headDim;
    for (size_t i = 0; i < items_.size(); ++i) {
        const int64_t row = firstRow_[i], n = firstRow_[i + 1] - row;
        // layerView rebuilds the cache's pointer scratch on each call: one view alive at a time,
        // taken right before its item's use.
        const PagedKvLayer kv = cache.layerView(*items_[i].seq, layer);
        b.kvWrite(kv, k + row * kvDim, v + row * kvDim, positions_.data() + row, n);
        b.attention(kv, shape, q + row * qDim, positions_.data() + row, n, out + row * qDim);
    }
}

void ForwardBatch::finish(Backend& b, const OutputHead& head, float rmsEps, const float* x) {
    const int64_t nEmbd = head.output.nCols;
    const auto nVocab = static_cast<size_t>(head.output.nRows);
    int64_t nOut = 0;
    int nWanting = 0;
    for (const ForwardItem& item : items_) {
        nOut += static_cast<int64_t>(item.logits.size() / nVocab);
        nWanting += item.logits.empty() ? 0 : 1;
    }
    if (nOut == 0) return;
    normed_.resize(static_cast<size_t>(nOut * nEmbd));
    int64_t outRow = 0;
    const ForwardItem* only = nullptr;
    for (size_t i = 0; i < items_.size(); ++i) {
        const auto nWanted = static_cast<int64_t>(items_[i].logits.size() / nVocab);
        if (nWanted == 0) continue;
        only = &items_[i];
        const float* first = x + (firstRow_[i + 1] - nWanted) * nEmbd;
        b.rmsNorm(first, head.outputNorm, nWanted, nEmbd, rmsEps, normed_.data() + outRow * nEmbd);
        outRow += nWanted;
    }
    // The output matrix is usually the largest one: read it once for every wanted row.
    if (nWanting == 1) return b.matmul(head.output, normed_.data(), nOut, only->logits.data());
    logits_.resize(static_cast<size_t>(nOut) * nVocab);
    b.matmul(head.output, normed_.data(), nOut, logits_.data());
    const float* src = logits_.data();
    for (const ForwardItem& item : items_) {
        std::copy_n(src, item.logits.size(), item.logits.data());
        src += item.logits.size();
    }
}

}  // namespace hearth
