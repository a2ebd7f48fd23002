// A loaded model: hyperparameters read from GGUF metadata, tensors bound to the mapping, and
// the forward pass. Every architecture runs the one decoder (decoder.h); its file (arch_llama.cpp,
// arch_qwen.cpp, ...) reads what differs, chosen by a registry keyed on general.architecture.
// forwardBatch() runs several sequences' tokens through one pass (continuous batching) on KV its
// caller reserved, and advances nothing; forward() is the convenience that reserves and advances
// for callers without a scheduler.
// Thread-safety: forward() and forwardBatch() are called by the engine thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/error.h"
#include "engine/kv/kv_cache.h"
#include "kernels/backend.h"

namespace hearth {

class GgufFile;

// One sequence's share of a batched forward pass: tokens at positions seq->nTokens + offset,
// seq->nTokens + offset + 1, ...; logits [k, nVocab] receives the last k tokens' logits (k may
// be 0). offset is 0 but for the later pieces of an item that forwardBatch cuts over passes:
// their earlier tokens are written, not yet counted in seq->nTokens.
// parents (tree verification, engine/spec): empty for a chain; otherwise one entry per token,
// parents[t] < t the index of the token that t follows: its RoPE and attention position is its
// parent's plus one, and it attends to positions before the item and its own ancestors only (a
// negative index -j names the j-th token before the item, as a chain does with t - 1). Token t's
// K/V is still written at slot seq->nTokens + offset + t. Model::checkItem checks them.
// ids, instead of logits: receives the last k tokens' greedy choices (the first index of each
// row's largest logit, as the sampler's argmax), computed where the logits are, so that a device
// backend brings down k ids instead of k rows. An item wants logits or ids, not both.
// topK > 0, with logits: top [k, topK] receives each of the last k rows' topK first logits
// (Backend::topKRows), so that a device backend brings down those instead of the rows; logits
// then receives only the rows that hold a NaN or an infinity (their top[row * topK].id is -1).
// lse, with top (empty or [k]): receives each of those rows' log-sum-exp besides (the topKRows
// lse), for log-probabilities; unspecified for a row that holds a NaN or an infinity.
struct ForwardItem {
    KvSequence* seq = nullptr;
    std::span<const int32_t> tokens;
    std::span<float> logits;
    int32_t offset = 0;
    std::span<const int32_t> parents = {};
    std::span<int32_t> ids = {};
    std::span<Backend::TopEntry> top = {};
    int32_t topK = 0;
    std::span<float> lse = {};
};

struct ModelConfig {
    std::string architecture;  // general.architecture
    std::string name;  // general.name (may be empty)
    int nLayers = 0;
    int nEmbd = 0;
    int nHeads = 0;
    int nKvHeads = 0;
    int headDim = 0;
    int nFf = 0;
    int nVocab = 0;
    int contextLength = 0;
    int nRot = 0;  // rope.dimension_count
    float ropeFreqBase = 10000.0f;
    float rmsEps = 1e-5f;
    RopeStyle ropeStyle = RopeStyle::Pairwise;
    // [nRot / 2] divisors of each pair's RoPE angle (rope_freqs.weight: Llama 3.1 and later
    // precompute their "llama3" frequency scaling into it), or empty.
    std::vector<float> ropeFreqFactors;
    // Interleaved sliding-window attention (Gemma 3): slidingLayers[il] is true for a local
    // layer, which sees the last slidingWindow positions and uses RoPE base ropeFreqBaseSwa.
    // Empty / 0 when every layer is global.
    int32_t slidingWindow = 0;
    std::vector<bool> slidingLayers;  // [nLayers] or empty
    float ropeFreqBaseSwa = 10000.0f;
    bool tiedOutput = false;  // no output.weight: logits use token_embd
    // What the forward pass does beyond the plain Llama decoder, in words, for `hearth-cli info`
    // and the model picker ("Q/K/V biases, QK norm, ..."); empty for plain Llama.
    std::string features;
    uint64_t nParams = 0;  // elements of all tensors
};

// What loading needs to know beyond the file.
struct ModelLoadOptions {
    // The context the model will run at (0: its trained context). Phi-3's LongRoPE picks its
    // long or short RoPE factors by it, as llama.cpp does (long above the original context).
    int32_t contextLength = 0;
};

class Model {
public:
    // Reads the hyperparameters and binds every tensor the architecture needs, checking names,
    // shapes and types. The GgufFile must outlive the Model.
    // Errors: Unsupported (architecture), InvalidFormat (missing/out-of-range keys, tensors).
    static Result<std::unique_ptr<Model>> load(const GgufFile& file, const ModelLoadOptions& options = {});
    virtual ~Model() = default;

    const ModelConfig& config() const { return config_; }
    // The KV layout of this model. windowPools: the sliding-window layers (slidingLayers) keep
    // their K/V in a pool of their own that holds only the window (engine/kv/kv_cache.h); false
    // forces one pool of every position for every layer (the all-positions layout: tests, bench-kv).
    KvLayout kvLayout(int blockSize = 16, bool windowPools = true) const {
        KvLayout layout{config_.nLayers, config_.nKvHeads * config_.headDim, blockSize};
        if (windowPools && config_.slidingWindow > 0 && std::ssize(config_.slidingLayers) == config_.nLayers) {
            layout.window = config_.slidingWindow;
            layout.windowLayers = config_.slidingLayers;
        }
        return layout;
    }

    // The one place outside the scheduler where a sequence's step state changes, for callers
    // that own their sequences (beam search, a draft model, perplexity, tests): checks the items
    // as forwardBatch does, reserves each item's new positions, runs forwardBatch, then advances
    // each item's sequence past its tokens. Items have offset 0. Errors: forwardBatch's, and
    // OutOfMemory (KV cache); on error nothing is computed or advanced (reservations of earlier
    // items stay, as reserve() leaves them).
    Result<void> forward(Backend& backend, KvCache& cache, std::span<const ForwardItem> items);
    // forward() of one item: tokens at positions seq.nTokens, seq.nTokens + 1, ...
    // logits: [nVocab] for the last token, or empty when not wanted (e.g. a prefill chunk), or
    // [k, nVocab] for the last k tokens (k <= tokens.size(); a speculative verify), each row
    // bitwise what decoding that token alone would give on the CPU.
    Result<void> forward(Backend& backend, KvCache& cache, KvSequence& seq, std::span<const int32_t> tokens,
                         std::span<float> logits);

    // Executes one step of a plan: every item's tokens in one pass. The rows of all items go
    // together through the embeddings, norms, matmuls, RoPE and FFN; K/V writes and attention
    // run on each item's rows with its own block table; only the rows whose logits are wanted
    // reach the output head. Each item's logits are bitwise what forward() of that item alone
    // gives (the CPU kernels are batch-invariant). Items with no tokens are skipped.
    // Step state is the caller's: every item's new positions must be reserved already
    // (KvCache::reserved: Scheduler::schedule does it, forward() does it for its callers), and no
    // sequence is advanced (Scheduler::complete, forward() record the positions). All items are
    // checked (checkItem, no two on one sequence, the reservation) before anything is computed;
    // on error nothing is computed and, with several items, the message starts "item I: ".
    // Errors: InvalidArgument.
    virtual Result<void> forwardBatch(Backend& backend, KvCache& cache, std::span<const ForwardItem> items) = 0;
    // Lets the backend lay out every matrix for its kernels (Backend::packWeight) once, before
    // the first forward pass with it (a backend that computes in memory of its own copies every
    // matrix, the token embedding included, and the norm and bias vectors), and releases the file's pages of each matrix it copied, one
    // matrix at a time (memory never holds both copies of more than one). Matrices whose packed
    // rows are set already (packableWeights, from a disk cache) are left as they are. The model then runs
    // with that backend or any other, with the same results. progress(done, total) after each
    // matrix. Returns the bytes of the file's rows that were repacked (0: the backend keeps the
    // file's layout).
    virtual size_t packWeights(Backend& backend, const std::function<void(int done, int total)>& progress = {}) {
        (void)backend, (void)progress;
        return 0;
    }
    // Splits the layers between two backends (placement when a model does not fit a GPU):
    // forwardBatch on a backend that computes in memory of its own (the device) runs the token
    // embedding and layers [0, firstHostLayer) there, then brings the activations down once a
    // step and runs layers [firstHostLayer, nLayers) and the output head on host, a CPU backend;
    // on a backend over host memory it runs everything there as before. packWeights(device)
    // then copies only the device's matrices (and the token embedding), packWeights(host) only the
    // host's; the KV cache keeps the device layers' K and V in the device's memory
    // (KvCache::placeOn with the same firstHostLayer). Call before packWeights;
    // firstHostLayer >= nLayers or a null host: no split. Results are the same, bit for bit, as
    // when the same kernels run every layer on one backend.
    virtual void splitLayers(Backend* host, int firstHostLayer) { (void)host, (void)firstHostLayer; }
    // Whether a pass on b computes the logits in host memory (b's own, or a split model's host
    // layers and output head): then greedy ids or top logits (ForwardItem) save no transfer.
    virtual bool logitsOnHost(const Backend& b) const { return b.operatesOnHostMemory(); }
    // The matrices packWeights offers the backend, in the order it offers them, each with a name
    // that is the same for every load of one file ("output", "blk.3.attn_q"): a disk cache of
    // the backend's copies (engine/model/pack_cache.h) sets w.packed of some of them before
    // packWeights, which then leaves those alone. Valid as long as the model.
    struct PackableWeight {
        std::string name;
        WeightView* view = nullptr;
    };
    virtual std::vector<PackableWeight> packableWeights() { return {}; }
    // What forwardBatch checks of one item without touching the cache: a sequence, token ids
    // in the vocabulary, logits of whole rows for at most every token.
    Result<void> checkItem(const ForwardItem& item) const;

protected:
    static int64_t totalRows(std::span<const ForwardItem> items);
    // forwardBatch of items with more than rowsPerPass rows (Backend::rowsPerPass of the backends
    // that run the pass): all checked first, then cut into passes of at most that many rows, in
    // order (an item may span passes, its later pieces at an offset; the logits rows it wants go
    // with the pass that computes them). On the CPU every token's result is the same either way
    // (batch invariance).
    Result<void> forwardInPasses(Backend& backend, KvCache& cache, std::span<const ForwardItem> items,
                                 int64_t rowsPerPass);

    ModelConfig config_;
};

}  // namespace hearth
