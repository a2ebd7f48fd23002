// Row copies through PagedKvLayer's documented layout only (kernels/backend.h).
#include "engine/kv/kv_rows.h"

#include <cstring>
#include <new>

#include "engine/kv/kv_cache.h"

namespace hearth {

namespace {

uint8_t* rowAt(f16_t* const* blocks, const PagedKvLayer& layer, int32_t p) {
    return reinterpret_cast<uint8_t*>(blocks[p / layer.blockSize]) +
        static_cast<size_t>(p % layer.blockSize) * kvRowBytes(layer);
}

}  // namespace

void copyKvPosition(const PagedKvLayer& src, int32_t from, const PagedKvLayer& dst, int32_t to, Backend* memory) {
    const auto moveBytes = [memory](void* d, const void* s, size_t n) {
        if (memory != nullptr) memory->copy(d, s, n);
        else std::memmove(d, s, n);
    };
    const size_t bytes = kvRowBytes(src);
    const bool f16 = src.type == DType::F16;
    if (f16 && memory == nullptr && src.vHeadDim > 0 && src.vHeadDim == dst.vHeadDim && src.kDimMajor &&
        dst.kDimMajor) {
        // Host memory in the CPU's own layout: each head's V row is one run, K a strided column
        // (an element per block row). Element by element through kvKElement/kvVElement and a call
        // per element, a tree run's copies took 20 us a layer on SmolLM2.
        for (int c = 0; c < src.rowStride; c += src.vHeadDim)
            std::memcpy(kvVElement(dst, to, c), kvVElement(src, from, c), static_cast<size_t>(src.vHeadDim) * sizeof(f16_t));
        const f16_t* k = kvKElement(src, from, 0);
        f16_t* out = kvKElement(dst, to, 0);
        for (int c = 0; c < src.rowStride; ++c) out[static_cast<int64_t>(c) * dst.blockSize] = k[static_cast<int64_t>(c) * src.blockSize];
        return;
    }
    if (!f16 || (src.vHeadDim == 0 && dst.vHeadDim == 0)) {
        moveBytes(rowAt(dst.vBlocks, dst, to), rowAt(src.vBlocks, src, from), bytes);
    } else {
        for (int c = 0; c < src.rowStride; ++c) moveBytes(kvVElement(dst, to, c), kvVElement(src, from, c), 2);
    }
    if (!f16 || (!src.kDimMajor && !dst.kDimMajor)) {
        moveBytes(rowAt(dst.kBlocks, dst, to), rowAt(src.kBlocks, src, from), bytes);
        return;
    }
    for (int c = 0; c < src.rowStride; ++c) moveBytes(kvKElement(dst, to, c), kvKElement(src, from, c), 2);
}

// Sources lie at or past their destination and past every earlier destination, so copying in
// path order overwrites nothing still to be read.
void keepKvPath(KvCache& cache, const KvSequence& seq, int32_t firstDraft, std::span<const int32_t> nodes) {
    bool inPlace = true;
    for (size_t k = 0; k < nodes.size(); ++k) inPlace = inPlace && nodes[k] == static_cast<int32_t>(k);
    if (inPlace) return;
    for (int layer = 0; layer < cache.layout().nLayers; ++layer) {
        const PagedKvLayer view = cache.layerView(seq, layer);
        for (size_t k = 0; k < nodes.size(); ++k)
            if (nodes[k] != static_cast<int32_t>(k))
                copyKvPosition(view, firstDraft + nodes[k], view, firstDraft + static_cast<int32_t>(k),
                               cache.memory(layer));
    }
}

const PagedKvLayer& KvScratchLayer::view(const PagedKvLayer& layer, int32_t firstOwn, int32_t end, Backend* memory) {
    const int32_t bs = layer.blockSize;
    const int32_t b0 = firstOwn / bs, b1 = (end + bs - 1) / bs;
    const size_t bytes = static_cast<size_t>(bs) * kvRowBytes(layer);
    const uint64_t owner = memory != nullptr ? memory->id() : 0;
    if (bytes != blockBytes_ || owner != owner_) blocks_.clear(), blockBytes_ = bytes, owner_ = owner;
    const auto nOwn = static_cast<size_t>(b1 - b0);
    const std::vector<uint8_t> zeros(memory != nullptr && blocks_.size() < 2 * nOwn ? bytes : 0);
    while (blocks_.size() < 2 * nOwn) {
        std::unique_ptr<BackendBuffer> block = memory != nullptr ? memory->allocate(bytes) : allocateHostBuffer(bytes);
        if (!block) throw std::bad_alloc();
        if (memory != nullptr) memory->upload(block->data(), zeros.data(), bytes);
        else std::memset(block->data(), 0, bytes);
        blocks_.push_back(std::move(block));
    }
    k_.assign(layer.kBlocks, layer.kBlocks + b0);
    v_.assign(layer.vBlocks, layer.vBlocks + b0);
    for (size_t i = 0; i < nOwn; ++i) {
        k_.push_back(blocks_[2 * i]->as<f16_t>());
        v_.push_back(blocks_[2 * i + 1]->as<f16_t>());
    }
    view_ = layer;
    view_.kBlocks = k_.data();
    view_.vBlocks = v_.data();
    view_.nBlocks = static_cast<int>(k_.size());
    view_.tablesOnBackend = nullptr;  // these tables are the host's only
    return view_;
}

}  // namespace hearth
