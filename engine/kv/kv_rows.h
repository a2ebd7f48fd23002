// Copying one position's K and V rows between paged KV layers (PagedKvLayer's layouts: F16 in
// either K order and either V order, Q8_0), and a layer of private blocks holding a sequence's positions in another
// order: what tree verification (engine/spec) uses to let a drafted token attend to its
// ancestors as if they were a chain, and to move the accepted path's rows into place.
// Thread-safety: a value used by one thread.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "kernels/backend.h"

namespace hearth {

// K and V of position `from` in src into position `to` of dst (the same type and rowStride;
// any block sizes, K and V orders). The blocks read and written must be allocated; from may equal to only
// when src and dst are different layers. memory: the backend whose memory holds both layers'
// blocks (KvCache::memory), which then moves the bytes (Backend::copy); null: host memory.
void copyKvPosition(const PagedKvLayer& src, int32_t from, const PagedKvLayer& dst, int32_t to,
                    Backend* memory = nullptr);

class KvCache;
struct KvSequence;

// Tree verification's accepted path: node nodes[k]'s K/V, written at slot firstDraft +
// nodes[k], moves to firstDraft + k, in every layer (nodes: a root-to-node path of a DraftTree,
// so nodes[k] >= k). The caller then rolls the sequence back past the path.
void keepKvPath(KvCache& cache, const KvSequence& seq, int32_t firstDraft, std::span<const int32_t> nodes);

// Blocks of its own behind a block table that starts as a copy of another layer's: positions
// before firstOwn read the original blocks, those from firstOwn's block on read private ones
// (zeroed memory, filled by the caller with copyKvPosition).
class KvScratchLayer {
public:
    // layer's blocks [0, firstOwn / blockSize) are shared; private blocks cover positions up to
    // end (exclusive), in memory's memory (null: the host's). Reuses memory between calls.
    const PagedKvLayer& view(const PagedKvLayer& layer, int32_t firstOwn, int32_t end, Backend* memory = nullptr);

private:
    std::vector<std::unique_ptr<BackendBuffer>> blocks_;  // [2 * n]: K then V of each private block
    size_t blockBytes_ = 0;
    uint64_t owner_ = 0;  // the Backend::id of the blocks' memory (0: the host's)
    std::vector<f16_t*> k_, v_;
    PagedKvLayer view_;
};

}  // namespace hearth
