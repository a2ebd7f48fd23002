// ForwardBatch: the rows of one batched forward pass (Model::forwardBatch) — every item's tokens
// end to end, with their positions — and the per-item steps every architecture shares: checks
// (the caller's KV reservation included), K/V write and attention on each item's slice, the
// output head. It executes a plan: it reserves no KV and advances no sequence.
// Thread-safety: owned by one Model, engine thread only.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "engine/error.h"
#include "engine/kv/kv_rows.h"
#include "engine/model/model.h"

namespace hearth {

struct OutputHead;

class ForwardBatch {
public:
    // Checks every item (check()) and that its caller reserved KV for its new positions
    // (KvCache::reserved), then lays out the rows of the items with tokens. On error nothing else
    // happens; with several items the message starts "item I: ".
    Result<void> prepare(const Model& model, const KvCache& cache, std::span<const ForwardItem> items);
    // Model::checkItem of every item, and no two items on one sequence. Errors as prepare()'s.
    static Result<void> check(const Model& model, std::span<const ForwardItem> items);
    // e, naming item `item` of nItems when there are several.
    static Error itemError(const Error& e, size_t item, size_t nItems);

    int64_t nRows() const { return static_cast<int64_t>(tokens_.size()); }
    // The step's inputs into b's memory (Backend::operatesOnHostMemory): token ids, positions
    // and KV slots in one upload; for a backend with memory of its own also every item's block
    // tables in layers [0, nTableLayers) of cache (all when negative; PagedKvLayer::
    // tablesOnBackend), in the same transfer. After prepare(), before tokens() and positions().
    // Errors: OutOfMemory.
    Result<void> upload(Backend& b, KvCache& cache, int nTableLayers = -1);
    const int32_t* tokens() const { return onBackend_; }  // [nRows], in the backend's memory
    // RoPE and attention positions: the KV slots, but for a tree's rows (ForwardItem::parents)
    // their parent's position plus one. Where b reads them: the uploaded ones, or the host's
    // copy for another backend over host memory (the CPU's layers of a split model).
    const int32_t* positions(const Backend& b) const { return inputsFor(b) + nRows(); }  // [nRows]

    // Per item: stores its rows of k and v ([nRows, nKvHeads*headDim]) into its sequence's
    // layer, then attends its rows of q ([nRows, nHeads*headDim]) into the same rows of out.
    // A tree's rows that are not where a chain would put them attend, run by run of a branch,
    // through a layer whose blocks from their first ancestor off the chain on are private copies
    // holding the ancestors at their positions: each row is reduced over the same K/V, in the
    // same pieces and order, as decoding its path one token at a time. rope (where given, its q
    // and k are q and k): the rows are made ready first, through Backend::qkRopeKvWrite where
    // the K/V writes can go in one call (so a backend may write each K head as it rotates it).
    void attention(Backend& b, KvCache& cache, int layer, const AttentionShape& shape, const float* q, const float* k,
                   const float* v, float* out, const QkRope* rope = nullptr) const;

    // After the last layer, in three parts so that the operators between upload() and the
    // download can be one submission (Backend::beginStep): reserveOutputs before the step's
    // first operator (the output rows' buffers in b's memory; errors: OutOfMemory), outputRows
    // after the last layer — the last logits.size() / nVocab (or ids.size()) rows of each item of
    // x ([nRows, nEmbd], in b's memory), normalised with outputNorm (head's, where b reads it),
    // through one output matmul over all such rows, then the soft-cap (finalSoftcap > 0), then
    // where ids are wanted every row's argmax (Backend::argmaxRows), where top logits are wanted
    // every row's (Backend::topKRows, with their log-sum-exps where an item wants those) — and
    // downloadLogits after the step, into the items' host rows in one download (ids and top
    // logits with their log-sum-exps in one more each, or alone; a row of an item wanting top
    // logits only where it holds a NaN or an infinity). Sequences are
    // not advanced: whoever reserved records the positions (Scheduler::complete, Model::forward).
    Result<void> reserveOutputs(Backend& b, const OutputHead& head);
    void outputRows(Backend& b, const OutputHead& head, const float* outputNorm, float rmsEps, const float* x,
                    float finalSoftcap);
    void downloadLogits(Backend& b);

    // For a backend with memory of its own: what the step's operator calls from upload() to
    // outputRows() depend on besides that memory's contents and the model (rows per item, logits
    // rows, block tables' lengths, the addresses of the inputs, tables and output rows), as bytes
    // for Backend::beginStep; empty when the step must run call by call (a token tree's rows copy
    // K/V through host-held tables). After reserveOutputs().
    std::string stepKey() const;

private:
    // A run of tree rows [row0, row1) of item `item`, each the parent of the next, attending
    // through a layer in which positions [firstOwn, ...) hold the last row's ancestors:
    // ancestors[k] is the item row at position firstOwn + k (-1: in place in the real layer).
    struct TreeRun {
        size_t item = 0;
        int64_t row0 = 0, row1 = 0;
        int32_t firstOwn = 0;
        std::vector<int64_t> ancestors;
    };
    void planTree(size_t item, const ForwardItem& it);
    const int32_t* slots(const Backend& b) const { return inputsFor(b) + 2 * nRows(); }  // [nRows]
    const int32_t* inputsFor(const Backend& b) const {
        return b.id() == uploadedTo_ || !b.operatesOnHostMemory() ? onBackend_ : staged_.data();
    }

    std::vector<ForwardItem> items_;  // the items with tokens, in order
    std::vector<int64_t> firstRow_;  // [items_.size() + 1]: item i owns rows [firstRow_[i], firstRow_[i + 1])
    std::vector<int32_t> tokens_, positions_, slots_;
    std::vector<int64_t> nInPlace_;  // per item: its leading rows at position == slot
    std::vector<TreeRun> runs_;
    mutable std::vector<KvScratchLayer> scratch_;  // one per tree run: a layer's runs go in one attentionMany
    // attention()'s per-layer scratch: the items' views and, for views of the cache's own (whose
    // pointer tables one layerView call overwrites the next), copies of their tables.
    mutable std::vector<PagedKvLayer> callViews_;
    mutable std::vector<f16_t*> callTables_;
    mutable std::vector<size_t> callTableAt_;
    mutable std::vector<Backend::AttentionCall> calls_;
    mutable std::vector<Backend::KvWriteCall> writes_;
    // In the backend's memory: [tokens, positions, slots] of every row (upload), the rows
    // wanting logits normalised [n, nEmbd] and their logits [n, nVocab].
    BackendScratch inputs_, normed_, logits_, ids_, top_;
    const int32_t* onBackend_ = nullptr;  // inputs_'s
    uint64_t uploadedTo_ = 0;  // the Backend::id of their memory
    // The block tables in inputs_ (a backend with memory of its own, else null): item i's in
    // layer l at tables_ + tableOffset_[i * nLayers + l], K then V, each tableBlocks_[i * nLayers
    // + l] long: the table padded with null entries to a multiple of kTableBucket blocks, so that
    // a sequence's steps share one key (stepKey) while it grows within a bucket. stagedTables_:
    // the same on the host.
    static constexpr int kTableBucket = 16;
    f16_t* const* tables_ = nullptr;
    std::vector<size_t> tableOffset_;
    std::vector<int> tableBlocks_;
    int tableLayers_ = 0;
    std::vector<f16_t*> stagedTables_;
    // The layers' views with those tables (host arrays into stagedTables_), made once by upload().
    std::vector<PagedKvLayer> stagedViews_;
    // reserveOutputs: the wanted logits rows, the items wanting whole rows, the only one when one
    // does (an index into items_), and the output rows in the backend's memory.
    int64_t nOut_ = 0;
    int nWanting_ = 0;
    size_t only_ = 0;
    float* normedRows_ = nullptr;
    float* logitRows_ = nullptr;
    std::vector<int32_t> staged_;  // the inputs on the host, end to end
    int64_t nIdRows_ = 0;  // output rows whose items want ids (ForwardItem::ids)
    size_t nVocab_ = 0;
    int32_t* idRows_ = nullptr;  // [nOut_] in the backend's memory: every output row's argmax
    std::vector<int32_t> hostIds_;
    int64_t nTopRows_ = 0;  // output rows whose items want top logits (ForwardItem::topK)
    int32_t topK_ = 0;  // the most any of them wants
    Backend::TopEntry* topRows_ = nullptr;  // [nOut_, topK_] in the backend's memory (Backend::topKRows)
    float* lseRows_ = nullptr;  // [nOut_] right after topRows_, where an item wants log-sum-exps
    std::vector<Backend::TopEntry> hostTop_;  // topRows_ and lseRows_ downloaded together
    std::vector<float> hostLogits_;  // every wanted row, downloaded at once (a backend in memory of its own)
};

}  // namespace hearth
