// Runs a step's chunks through one Model::forwardBatch. Each chunk is checked and its KV
// reserved first, so that one bad chunk (a token outside the vocabulary, no memory) fails
// alone instead of failing the whole step's batch.
#include "engine/runner/runner.h"

#include "engine/str_cat.h"

namespace hearth {

std::optional<Error> Runner::prepareChunk(const PlannedChunk& chunk, KvSequence& kv, ChunkOutput& out,
                                          std::span<const ForwardItem> accepted) {
    if (kv.nTokens != chunk.start)
        return Error{ErrorCode::InvalidArgument,
                     strCat("sequence ", chunk.seq, " holds ", kv.nTokens, " positions; the plan starts at ", chunk.start)};
    if (chunk.sample && (chunk.logitRows < 1 || chunk.logitRows > std::ssize(chunk.tokens)))
        return Error{ErrorCode::InvalidArgument, strCat("sequence ", chunk.seq, ": ", chunk.logitRows,
                                                        " logit rows for ", chunk.tokens.size(), " tokens")};
    for (const ForwardItem& item : accepted)
        if (item.seq == &kv)
            return Error{ErrorCode::InvalidArgument, strCat("sequence ", chunk.seq, " is planned twice in one step")};
    if (chunk.sample)
        out.logits.resize(static_cast<size_t>(chunk.logitRows) * static_cast<size_t>(model_.config().nVocab));
    const ForwardItem item{&kv, chunk.tokens, out.logits};
    if (auto r = model_.checkItem(item); !r) return r.error();
    if (auto r = cache_.reserve(kv, kv.nTokens + static_cast<int32_t>(chunk.tokens.size())); !r) return r.error();
    return std::nullopt;
}

std::vector<ChunkOutput> Runner::run(const StepPlan& plan, Scheduler& scheduler) {
    std::vector<ChunkOutput> outputs(plan.chunks.size());
    std::vector<ForwardItem> items;
    std::vector<size_t> itemChunk;  // items[i] computes plan.chunks[itemChunk[i]]
    items.reserve(plan.chunks.size());
    for (size_t c = 0; c < plan.chunks.size(); ++c) {
        const PlannedChunk& chunk = plan.chunks[c];
        ChunkOutput& out = outputs[c];
        out.seq = chunk.seq;
        KvSequence& kv = scheduler.kvSequence(chunk.seq);
        if (auto error = prepareChunk(chunk, kv, out, items)) {
            out.error = std::move(error);
            out.logits.clear();
            continue;
        }
        items.push_back({&kv, chunk.tokens, out.logits});
        itemChunk.push_back(c);
    }
    if (items.empty()) return outputs;
    // Every item was checked and reserved above: an error here is the batch's, not one item's.
    if (auto r = model_.forwardBatch(backend_, cache_, items); !r)
        for (size_t c : itemChunk) {
            outputs[c].error = r.error();
            outputs[c].logits.clear();
        }
    return outputs;
}

}  // namespace hearth
