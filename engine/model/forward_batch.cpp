// Laying out a batched forward pass and the per-item steps around the shared matmuls. Batch
// invariance (DESIGN.md) holds because every op over the concatenated rows is row-wise and the
// CPU matmuls give each row the same bits whatever the batch; attention and K/V stay per item.
#include "engine/model/forward_batch.h"

#include <algorithm>
#include <cstring>

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
    slots_.clear();
    nInPlace_.clear();
    runs_.clear();
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
        const auto row0 = static_cast<int64_t>(tokens_.size());
        tokens_.insert(tokens_.end(), item.tokens.begin(), item.tokens.end());
        const int32_t first = item.seq->nTokens + item.offset;
        int64_t inPlace = 0;
        for (size_t t = 0; t < item.tokens.size(); ++t) {
            const int32_t slot = first + static_cast<int32_t>(t);
            int32_t pos = slot;
            if (!item.parents.empty()) {
                const int32_t parent = item.parents[t];
                pos = parent < 0 ? first + parent + 1 : positions_[static_cast<size_t>(row0 + parent)] + 1;
            }
            // Rows at their slot form a prefix: a position never exceeds the slot.
            if (pos == slot && inPlace == static_cast<int64_t>(t)) ++inPlace;
            slots_.push_back(slot);
            positions_.push_back(pos);
        }
        nInPlace_.push_back(inPlace);
        firstRow_.push_back(static_cast<int64_t>(tokens_.size()));
        if (inPlace < std::ssize(item.tokens)) planTree(items_.size() - 1, item);
    }
    return {};
}

void ForwardBatch::planTree(size_t item, const ForwardItem& it) {
    const int64_t row0 = firstRow_[item], n = firstRow_[item + 1] - row0, inPlace = nInPlace_[item];
    const int32_t first = it.seq->nTokens + it.offset;
    for (int64_t t = inPlace; t < n; ++t) {
        const int32_t parent = it.parents[static_cast<size_t>(t)];
        if (!runs_.empty() && runs_.back().item == item && parent == t - 1 && runs_.back().row1 == row0 + t) {
            runs_.back().row1 = row0 + t + 1;
            continue;
        }
        runs_.push_back({item, row0 + t, row0 + t + 1, 0, {}});
    }
    // Each run's ancestors: from its last row up to the first one off the chain.
    for (TreeRun& run : runs_) {
        if (run.item != item) continue;
        run.ancestors.clear();
        int64_t t = run.row1 - 1 - row0;
        for (; t >= inPlace; t = it.parents[static_cast<size_t>(t)]) run.ancestors.push_back(row0 + t);
        std::reverse(run.ancestors.begin(), run.ancestors.end());
        run.firstOwn = first + static_cast<int32_t>(t) + 1;
    }
}

Result<void> ForwardBatch::upload(Backend& b, KvCache& cache, int nTableLayers) {
    const auto n = static_cast<size_t>(nRows());
    // The block tables: for a backend that reads only its own memory, every item's in every layer,
    // after the three int32 arrays (padded to a pointer's alignment).
    stagedTables_.clear();
    tableOffset_.clear();
    tableLayers_ = 0;
    tableBlocks_.clear();
    stagedViews_.clear();
    if (!b.operatesOnHostMemory()) {
        tableLayers_ = nTableLayers < 0 ? cache.layout().nLayers : std::min(nTableLayers, cache.layout().nLayers);
        for (const ForwardItem& item : items_)
            for (int l = 0; l < tableLayers_; ++l) {
                const PagedKvLayer kv = cache.layerView(*item.seq, l);
                const int padded = (kv.nBlocks + kTableBucket - 1) / kTableBucket * kTableBucket;
                tableOffset_.push_back(stagedTables_.size());
                tableBlocks_.push_back(padded);
                stagedViews_.push_back(kv);  // its table pointers set below, once stagedTables_ stops growing
                for (f16_t* const* table : {kv.kBlocks, kv.vBlocks}) {
                    stagedTables_.insert(stagedTables_.end(), table, table + kv.nBlocks);
                    stagedTables_.resize(stagedTables_.size() + static_cast<size_t>(padded - kv.nBlocks), nullptr);
                }
            }
    }
    const size_t intBytes = (3 * n * sizeof(int32_t) + alignof(f16_t*) - 1) / alignof(f16_t*) * alignof(f16_t*);
    const size_t tableBytes = stagedTables_.size() * sizeof(f16_t*);
    auto* dst = static_cast<uint8_t*>(inputs_.reserve(b, intBytes + tableBytes));
    if (dst == nullptr) return fail(ErrorCode::OutOfMemory, "no backend memory for the step's inputs");
    // One transfer: the arrays end to end on the host first.
    std::vector<int32_t>& all = staged_;
    all.assign(tokens_.begin(), tokens_.end());
    all.insert(all.end(), positions_.begin(), positions_.end());
    all.insert(all.end(), slots_.begin(), slots_.end());
    all.resize((intBytes + tableBytes) / sizeof(int32_t));
    if (tableBytes > 0)
        std::memcpy(reinterpret_cast<uint8_t*>(all.data()) + intBytes, stagedTables_.data(), tableBytes);
    b.upload(dst, all.data(), intBytes + tableBytes);
    onBackend_ = reinterpret_cast<const int32_t*>(dst);
    uploadedTo_ = b.id();
    tables_ = tableBytes > 0 ? reinterpret_cast<f16_t* const*>(dst + intBytes) : nullptr;
    for (size_t at = 0; at < stagedViews_.size(); ++at) {
        PagedKvLayer& kv = stagedViews_[at];
        kv.nBlocks = tableBlocks_[at];
        kv.kBlocks = stagedTables_.data() + tableOffset_[at];
        kv.vBlocks = kv.kBlocks + kv.nBlocks;
        kv.tablesOnBackend = tables_ + tableOffset_[at];
    }
    return {};
}

void ForwardBatch::attention(Backend& b, KvCache& cache, int layer, const AttentionShape& shape, const float* q,
                             const float* k, const float* v, float* out, const QkRope* rope) const {
    const int64_t qDim = int64_t{shape.nHeads} * shape.headDim, kvDim = int64_t{shape.nKvHeads} * shape.headDim;
    // The view upload() made with the padded tables it uploaded, or the cache's own: layerView
    // rebuilds the cache's pointer scratch on each call, so it is taken right before its use.
    const bool staged = tables_ != nullptr && layer < tableLayers_ && b.id() == uploadedTo_;
    auto view = [&](size_t i) {
        return staged ? stagedViews_[i * static_cast<size_t>(tableLayers_) + static_cast<size_t>(layer)]
                      : cache.layerView(*items_[i].seq, layer);
    };
    // Unstaged writes go one by one as the views are made, so the rows are made ready first.
    if (rope != nullptr && !staged) b.qkRope(*rope, positions(b), nRows());
    // Every item's K/V first, then the rows at their slots of all items and the token trees' runs
    // in one attentionMany (the backend shares them out to its threads at once). An item's
    // attention reads only its own sequence's positions, so the order changes nothing. The
    // cache's own tables are copied when a later layerView would overwrite them before
    // attentionMany. A tree run reads a view of its own: the shared blocks, then private copies of
    // the block it branches in and of its ancestors (a SmolLM2 tree step, its runs called one by
    // one after the chain's rows, took 0.5-1.3 ms longer than a chain step of as many rows).
    int nCalls = 0;
    for (size_t i = 0; i < items_.size(); ++i) nCalls += nInPlace_[i] > 0 ? 1 : 0;
    const bool copyTables = !staged && (nCalls > 1 || !runs_.empty());
    callViews_.clear();
    callTables_.clear();
    callTableAt_.clear();
    calls_.clear();
    // Views of the uploaded tables stay put, so their writes go in one kvWriteMany (one launch on
    // a GPU); the cache's own views are remade by the next layerView, so those write one by one.
    writes_.clear();
    for (size_t i = 0; i < items_.size(); ++i) {
        const int64_t row = firstRow_[i], n = firstRow_[i + 1] - row;
        const PagedKvLayer kv = view(i);
        if (staged)
            writes_.push_back({&stagedViews_[i * static_cast<size_t>(tableLayers_) + static_cast<size_t>(layer)],
                               k + row * kvDim, v + row * kvDim, slots(b) + row, n});
        else b.kvWrite(kv, k + row * kvDim, v + row * kvDim, slots(b) + row, n);
        const int64_t nInPlace = nInPlace_[i];
        if (nInPlace == 0) continue;
        callViews_.push_back(kv);
        callTableAt_.push_back(callTables_.size());
        if (copyTables) {
            callTables_.insert(callTables_.end(), kv.kBlocks, kv.kBlocks + kv.nBlocks);
            callTables_.insert(callTables_.end(), kv.vBlocks, kv.vBlocks + kv.nBlocks);
        }
        calls_.push_back({nullptr, q + row * qDim, positions(b) + row, nInPlace, out + row * qDim});
    }
    if (rope != nullptr && staged) b.qkRopeKvWrite(*rope, positions(b), nRows(), writes_);
    else b.kvWriteMany(writes_);
    for (size_t c = 0; c < calls_.size(); ++c) {
        PagedKvLayer& kv = callViews_[c];
        if (copyTables) {
            kv.kBlocks = callTables_.data() + callTableAt_[c];
            kv.vBlocks = kv.kBlocks + kv.nBlocks;
        }
        calls_[c].layer = &kv;
    }
    if (scratch_.size() < runs_.size()) scratch_.resize(runs_.size());
    for (size_t r = 0; r < runs_.size(); ++r) {
        const TreeRun& run = runs_[r];
        const PagedKvLayer kv = view(run.item);
        const int32_t end = positions_[static_cast<size_t>(run.row1 - 1)] + 1;
        Backend* memory = cache.memory(layer);  // where the blocks are (null: host memory)
        const PagedKvLayer& tree = scratch_[r].view(kv, run.firstOwn, end, memory);
        const int32_t blockStart = run.firstOwn / kv.blockSize * kv.blockSize;
        if (kv.kBlocks[blockStart / kv.blockSize] != nullptr)  // else out of every window here
            for (int32_t p = blockStart; p < run.firstOwn; ++p) copyKvPosition(kv, p, tree, p, memory);
        for (size_t a = 0; a < run.ancestors.size(); ++a)
            copyKvPosition(kv, slots_[static_cast<size_t>(run.ancestors[a])], tree,
                           run.firstOwn + static_cast<int32_t>(a), memory);
        calls_.push_back({&tree, q + run.row0 * qDim, positions(b) + run.row0, run.row1 - run.row0,
                          out + run.row0 * qDim});
    }
    if (!calls_.empty()) b.attentionMany(calls_, shape);
}

Result<void> ForwardBatch::reserveOutputs(Backend& b, const OutputHead& head) {
    const int64_t nEmbd = head.output.nCols;
    const auto nVocab = static_cast<size_t>(head.output.nRows);
    nOut_ = 0;
    nWanting_ = 0;
    nIdRows_ = 0;
    nTopRows_ = 0;
    topK_ = 0;
    nVocab_ = nVocab;
    normedRows_ = logitRows_ = nullptr;
    idRows_ = nullptr;
    topRows_ = nullptr;
    lseRows_ = nullptr;
    bool lse = false;
    for (size_t i = 0; i < items_.size(); ++i) {
        const ForwardItem& item = items_[i];
        nOut_ += static_cast<int64_t>(item.logits.size() / nVocab + item.ids.size());
        nIdRows_ += static_cast<int64_t>(item.ids.size());
        if (item.topK > 0) {
            nTopRows_ += static_cast<int64_t>(item.logits.size() / nVocab);
            topK_ = std::max(topK_, item.topK);
            lse = lse || !item.lse.empty();
        } else if (!item.logits.empty()) {
            ++nWanting_, only_ = i;
        }
    }
    if (nOut_ == 0) return {};
    normedRows_ = static_cast<float*>(normed_.reserve(b, static_cast<size_t>(nOut_ * nEmbd) * sizeof(float)));
    if (normedRows_ == nullptr) return fail(ErrorCode::OutOfMemory, "no backend memory for the output rows");
    if (nIdRows_ > 0) {
        idRows_ = static_cast<int32_t*>(ids_.reserve(b, static_cast<size_t>(nOut_) * sizeof(int32_t)));
        if (idRows_ == nullptr) return fail(ErrorCode::OutOfMemory, "no backend memory for the greedy ids");
    }
    if (nTopRows_ > 0) {
        const size_t entries = static_cast<size_t>(nOut_ * topK_);
        const size_t bytes =
            entries * sizeof(Backend::TopEntry) + (lse ? static_cast<size_t>(nOut_) * sizeof(float) : 0);
        topRows_ = static_cast<Backend::TopEntry*>(top_.reserve(b, bytes));
        if (topRows_ == nullptr) return fail(ErrorCode::OutOfMemory, "no backend memory for the top logits");
        if (lse) lseRows_ = reinterpret_cast<float*>(topRows_ + entries);
    }
    // The logits go straight into the item's rows.
    if (b.operatesOnHostMemory() && nWanting_ == 1 && nIdRows_ == 0 && nTopRows_ == 0) return {};
    logitRows_ = static_cast<float*>(logits_.reserve(b, static_cast<size_t>(nOut_) * nVocab * sizeof(float)));
    if (logitRows_ == nullptr) return fail(ErrorCode::OutOfMemory, "no backend memory for the logits");
    return {};
}

void ForwardBatch::outputRows(Backend& b, const OutputHead& head, const float* outputNorm, float rmsEps,
                              const float* x, float finalSoftcap) {
    if (nOut_ == 0) return;
    const int64_t nEmbd = head.output.nCols;
    const auto nVocab = static_cast<size_t>(head.output.nRows);
    int64_t outRow = 0;
    for (size_t i = 0; i < items_.size(); ++i) {
        const auto nWanted = static_cast<int64_t>(items_[i].logits.size() / nVocab + items_[i].ids.size());
        if (nWanted == 0) continue;
        const float* first = x + (firstRow_[i + 1] - nWanted) * nEmbd;
        b.rmsNorm(first, outputNorm, nWanted, nEmbd, rmsEps, normedRows_ + outRow * nEmbd);
        outRow += nWanted;
    }
    // The output matrix is usually the largest one: read it once for every wanted row.
    if (logitRows_ == nullptr) {  // host memory, one item: straight into its rows
        const std::span<float> logits = items_[only_].logits;
        b.matmul(head.output, normedRows_, nOut_, logits.data());
        if (finalSoftcap > 0) b.softcap(logits.data(), static_cast<int64_t>(logits.size()), finalSoftcap);
        return;
    }
    b.matmul(head.output, normedRows_, nOut_, logitRows_);
    if (finalSoftcap > 0) b.softcap(logitRows_, nOut_ * static_cast<int64_t>(nVocab), finalSoftcap);
    if (nIdRows_ > 0) b.argmaxRows(logitRows_, nOut_, static_cast<int64_t>(nVocab), idRows_);
    if (nTopRows_ > 0) b.topKRows(logitRows_, nOut_, static_cast<int64_t>(nVocab), topK_, topRows_, lseRows_);
}

void ForwardBatch::downloadLogits(Backend& b) {
    if (nOut_ == 0 || logitRows_ == nullptr) return;
    const bool host = b.operatesOnHostMemory();
    // Every output row's id and top logits, each in one download, then each item's from those.
    if (nIdRows_ > 0) {
        hostIds_.resize(static_cast<size_t>(nOut_));
        b.download(hostIds_.data(), idRows_, hostIds_.size() * sizeof(int32_t));
    }
    const size_t entries = static_cast<size_t>(nOut_ * topK_);
    if (nTopRows_ > 0) {  // the entries, then the log-sum-exps (half an entry each)
        const size_t lseBytes = lseRows_ != nullptr ? static_cast<size_t>(nOut_) * sizeof(float) : 0;
        hostTop_.resize(entries + (lseBytes + sizeof(Backend::TopEntry) - 1) / sizeof(Backend::TopEntry));
        b.download(hostTop_.data(), topRows_, entries * sizeof(Backend::TopEntry) + lseBytes);
    }
    const auto* hostLse = reinterpret_cast<const unsigned char*>(hostTop_.data() + entries);
    size_t row = 0;  // the item's first output row
    for (const ForwardItem& item : items_) {
        const size_t rows = item.ids.size() + item.logits.size() / nVocab_;
        if (!item.ids.empty()) std::copy_n(hostIds_.data() + row, item.ids.size(), item.ids.data());
        for (size_t r = 0; item.topK > 0 && r < rows; ++r) {
            const Backend::TopEntry* src = hostTop_.data() + (row + r) * static_cast<size_t>(topK_);
            std::copy_n(src, item.topK, item.top.data() + r * static_cast<size_t>(item.topK));
            if (!item.lse.empty()) std::memcpy(&item.lse[r], hostLse + (row + r) * sizeof(float), sizeof(float));
            if (src[0].id < 0)  // a NaN or an infinity: the row itself comes down
                b.download(item.logits.data() + r * nVocab_, logitRows_ + (row + r) * nVocab_, nVocab_ * sizeof(float));
        }
        row += rows;
    }
    if (nWanting_ == 0) return;
    size_t nValues = 0;
    for (const ForwardItem& item : items_) nValues += item.topK > 0 ? 0 : item.logits.size();
    if (nWanting_ == 1 && nIdRows_ == 0 && nTopRows_ == 0) {
        b.download(items_[only_].logits.data(), logitRows_, nValues * sizeof(float));
        return;
    }
    // Host memory: each item's rows copied where they go. A backend's own memory: one download of
    // every row, then each item's rows from that (rows of items that want ids or top logits are
    // passed over).
    const size_t allValues = static_cast<size_t>(nOut_) * nVocab_;
    const float* src = logitRows_;
    if (!host) {
        hostLogits_.resize(allValues);
        b.download(hostLogits_.data(), logitRows_, allValues * sizeof(float));
        src = hostLogits_.data();
    }
    for (const ForwardItem& item : items_) {
        if (item.topK == 0 && host) b.download(item.logits.data(), src, item.logits.size() * sizeof(float));
        else if (item.topK == 0) std::copy_n(src, item.logits.size(), item.logits.data());
        src += item.logits.size() + item.ids.size() * nVocab_;
    }
}

std::string ForwardBatch::stepKey() const {
    if (!runs_.empty()) return {};
    std::vector<uint64_t> words{static_cast<uint64_t>(nRows()), items_.size(), static_cast<uint64_t>(nOut_),
                                reinterpret_cast<uintptr_t>(onBackend_), reinterpret_cast<uintptr_t>(tables_),
                                reinterpret_cast<uintptr_t>(normedRows_), reinterpret_cast<uintptr_t>(logitRows_)};
    for (size_t i = 0; i < items_.size(); ++i)
        words.push_back(static_cast<uint64_t>(firstRow_[i + 1] - firstRow_[i])),
            words.push_back(items_[i].logits.size()), words.push_back(items_[i].ids.size()),
            words.push_back(static_cast<uint64_t>(items_[i].topK));
    words.push_back(reinterpret_cast<uintptr_t>(idRows_));
    words.push_back(reinterpret_cast<uintptr_t>(topRows_));
    words.push_back(reinterpret_cast<uintptr_t>(lseRows_));
    words.push_back(static_cast<uint64_t>(topK_));
    for (int blocks : tableBlocks_) words.push_back(static_cast<uint64_t>(blocks));
    return {reinterpret_cast<const char*>(words.data()), words.size() * sizeof(uint64_t)};
}

}  // namespace hearth
