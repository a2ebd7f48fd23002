// Runs each planned chunk through Model::forward. KvCache::layerView rebuilds its pointer
// scratch on every call inside forward(), so alternating sequences within a step is safe:
// no view outlives the forward() call that made it.
#include "engine/runner/runner.h"

#include "engine/str_cat.h"

namespace hearth {

std::vector<ChunkOutput> Runner::run(const StepPlan& plan, Scheduler& scheduler) {
    std::vector<ChunkOutput> outputs;
    outputs.reserve(plan.chunks.size());
    for (const PlannedChunk& chunk : plan.chunks) {
        ChunkOutput& out = outputs.emplace_back();
        out.seq = chunk.seq;
        KvSequence& kv = scheduler.kvSequence(chunk.seq);
        if (kv.nTokens != chunk.start) {
            out.error = Error{ErrorCode::InvalidArgument, strCat("sequence ", chunk.seq, " holds ", kv.nTokens,
                                                          " positions; the plan starts at ", chunk.start)};
            continue;
        }
        if (chunk.sample) out.logits.resize(static_cast<size_t>(model_.config().nVocab));
        if (auto r = model_.forward(backend_, cache_, kv, chunk.tokens, out.logits); !r) out.error = r.error();
    }
    return outputs;
}

}  // namespace hearth
