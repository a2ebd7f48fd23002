// Runs a step's chunks through one Model::forwardBatch. Each chunk is checked first, so that
// one bad chunk (a token outside the vocabulary, a missing reservation) fails alone instead of
// failing the whole step's batch; the KV was reserved by the scheduler, never here.
#include "engine/runner/runner.h"

#include "engine/str_cat.h"

namespace hearth {

std::optional<Error> Runner::prepareChunk(const PlannedChunk& chunk, KvSequence& kv, ChunkOutput& out,
                                          std::span<const ForwardItem> accepted, bool idsOnly) {
    if (chunk.sample && (chunk.logitRows < 1 || chunk.logitRows > std::ssize(chunk.tokens)))
        return Error{
            ErrorCode::InvalidArgument,
            strCat("sequence ", chunk.seq, ": ", chunk.logitRows, " logit rows for ", chunk.tokens.size(), " tokens")};
    for (const ForwardItem& item : accepted)
        if (item.seq == &kv)
            return Error{ErrorCode::InvalidArgument, strCat("sequence ", chunk.seq, " is planned twice in one step")};
    if (chunk.sample && idsOnly) out.ids.resize(static_cast<size_t>(chunk.logitRows));
    else if (chunk.sample)
        out.logits.resize(static_cast<size_t>(chunk.logitRows) * static_cast<size_t>(model_.config().nVocab));
    const std::vector<int32_t> parents = chunk.itemParents();
    if (auto r = model_.checkItem({&kv, chunk.tokens, out.logits, 0, parents, out.ids}); !r) return r.error();
    return std::nullopt;
}

std::vector<ChunkOutput> Runner::run(const StepPlan& plan, Scheduler& scheduler, std::span<const char> idsOnly) {
    std::vector<ChunkOutput> outputs(plan.chunks.size());
    std::vector<ForwardItem> items;
    std::vector<size_t> itemChunk;  // items[i] computes plan.chunks[itemChunk[i]]
    std::vector<std::vector<int32_t>> parents(plan.chunks.size());  // the items' trees (ForwardItem::parents)
    items.reserve(plan.chunks.size());
    for (size_t c = 0; c < plan.chunks.size(); ++c) {
        const PlannedChunk& chunk = plan.chunks[c];
        ChunkOutput& out = outputs[c];
        out.seq = chunk.seq;
        if (auto r = scheduler.checkPlanned(chunk); !r) {  // before the pass: the plan's reservation is there
            out.error = r.error();
            continue;
        }
        KvSequence& kv = scheduler.kvSequence(chunk.seq);
        if (auto error = prepareChunk(chunk, kv, out, items, c < idsOnly.size() && idsOnly[c])) {
            out.error = std::move(error);
            out.logits.clear();
            out.ids.clear();
            continue;
        }
        parents[c] = chunk.itemParents();
        items.push_back({&kv, chunk.tokens, out.logits, 0, parents[c], out.ids});
        itemChunk.push_back(c);
    }
    if (items.empty()) return outputs;
    // Every item was checked above: an error here is the batch's, not one item's.
    const Result<void> pass = model_.forwardBatch(backend_, cache_, items);
    for (size_t c : itemChunk) {
        // After the pass: the model reserved nothing and advanced nothing.
        const Result<void> r = pass ? scheduler.checkPlanned(plan.chunks[c]) : pass;
        if (r) continue;
        outputs[c].error = r.error();
        outputs[c].logits.clear();
        outputs[c].ids.clear();
    }
    return outputs;
}

}  // namespace hearth
