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

void copyKvPosition(const PagedKvLayer& src, int32_t from, const PagedKvLayer& dst, int32_t to) {
    const size_t bytes = kvRowBytes(src);
    const bool f16 = src.type == DType::F16;
    if (!f16 || (src.vHeadDim == 0 && dst.vHeadDim == 0)) {
        std::memmove(rowAt(dst.vBlocks, dst, to), rowAt(src.vBlocks, src, from), bytes);
    } else {
        for (int c = 0; c < src.rowStride; ++c) *kvVElement(dst, to, c) = *kvVElement(src, from, c);
    }
    if (!f16 || (!src.kDimMajor && !dst.kDimMajor)) {
        std::memmove(rowAt(dst.kBlocks, dst, to), rowAt(src.kBlocks, src, from), bytes);
        return;
    }
    for (int c = 0; c < src.rowStride; ++c) *kvKElement(dst, to, c) = *kvKElement(src, from, c);
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
                copyKvPosition(view, firstDraft + nodes[k], view, firstDraft + static_cast<int32_t>(k));
    }
}

void KvScratchLayer::Free::operator()(uint8_t* p) const { ::operator delete[](p, std::align_val_t{64}); }

const PagedKvLayer& KvScratchLayer::view(const PagedKvLayer& layer, int32_t firstOwn, int32_t end) {
    const int32_t bs = layer.blockSize;
    const int32_t b0 = firstOwn / bs, b1 = (end + bs - 1) / bs;
    const size_t bytes = static_cast<size_t>(bs) * kvRowBytes(layer);
    if (bytes != blockBytes_) blocks_.clear(), blockBytes_ = bytes;
    const auto nOwn = static_cast<size_t>(b1 - b0);
    while (blocks_.size() < 2 * nOwn) {
        auto* p = static_cast<uint8_t*>(::operator new[](bytes, std::align_val_t{64}));
        std::memset(p, 0, bytes);
        blocks_.emplace_back(p);
    }
    k_.assign(layer.kBlocks, layer.kBlocks + b0);
    v_.assign(layer.vBlocks, layer.vBlocks + b0);
    for (size_t i = 0; i < nOwn; ++i) {
        k_.push_back(reinterpret_cast<f16_t*>(blocks_[2 * i].get()));
        v_.push_back(reinterpret_cast<f16_t*>(blocks_[2 * i + 1].get()));
    }
    view_ = layer;
    view_.kBlocks = k_.data();
    view_.vBlocks = v_.data();
    return view_;
}

}  // namespace hearth
