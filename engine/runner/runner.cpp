// Runs a step's chunks through one Model::forwardBatch. Each chunk is checked first, so that
// one bad chunk (a token outside the vocabulary, a missing reservation) fails alone instead of
// failing the whole step's batch; the KV was reserved by the scheduler, never here.
#include "engine/runner/runner.h"

#include <algorithm>

#include "engine/str_cat.h"

namespace hearth {

std::optional<Error> Runner::prepareChunk(const PlannedChunk& chunk, KvSequence& kv, ChunkOutput& out,
                                          std::span<const ForwardItem> accepted, RowsWanted wanted) {
    if (chunk.sample && (chunk.logitRows < 1 || chunk.logitRows > std::ssize(chunk.tokens)))
        return Error{
            ErrorCode::InvalidArgument,
            strCat("sequence ", chunk.seq, ": ", chunk.logitRows, " logit rows for ", chunk.tokens.size(), " tokens")};
    for (const ForwardItem& item : accepted)
        if (item.seq == &kv)
            return Error{ErrorCode::InvalidArgument, strCat("sequence ", chunk.seq, " is planned twice in one step")};
    const auto rows = static_cast<size_t>(chunk.logitRows);
    if (chunk.sample && wanted.ids) {
        out.ids.resize(rows);
    } else if (chunk.sample) {
        out.logits.resize(rows * static_cast<size_t>(model_.config().nVocab));
        out.topK = wanted.top;
        out.top.resize(rows * static_cast<size_t>(std::max(0, wanted.top)));
        if (wanted.top > 0 && wanted.lse) out.lse.resize(rows);
    }
    const std::vector<int32_t> parents = chunk.itemParents();
    if (auto r = model_.checkItem(item(kv, chunk, out, parents)); !r) return r.error();
    return std::nullopt;
}

ForwardItem Runner::item(KvSequence& kv, const PlannedChunk& chunk, ChunkOutput& out,
                         std::span<const int32_t> parents) {
    return {&kv, chunk.tokens, out.logits, 0, parents, out.ids, out.top, out.topK, out.lse};
}

std::vector<ChunkOutput> Runner::run(const StepPlan& plan, Scheduler& scheduler, std::span<const RowsWanted> wanted) {
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
        if (auto error = prepareChunk(chunk, kv, out, items, c < wanted.size() ? wanted[c] : RowsWanted{})) {
            out.error = std::move(error);
            out.clear();
            continue;
        }
        parents[c] = chunk.itemParents();
        items.push_back(item(kv, chunk, out, parents[c]));
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
        outputs[c].clear();
    }
    return outputs;
}

}  // namespace hearth
