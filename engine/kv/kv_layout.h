// KvLayout: all that KV code knows about a model (its layers and which of them attend over a
// sliding window, row width, block size, element type), and the text that describes it inside a
// chain root's hash.
#pragma once

#include <cstdint>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hearth {

enum class KvElementType : uint8_t {
    F16,  // the default
    Q8_0,  // GGUF's Q8_0 blocks (32 elements: f16 scale + 32 int8), 34/64 of F16's memory
};
const char* kvElementTypeName(KvElementType type);  // "f16", "q8_0"
// The type named "f16" or "q8_0"; nullopt for any other name.
std::optional<KvElementType> parseKvElementType(std::string_view name);

struct KvLayout {
    int nLayers = 0;
    int rowStride = 0;  // nKvHeads * headDim: elements of one token's K (or V) in one layer
    int blockSize = 16;  // tokens per block
    KvElementType elementType = KvElementType::F16;
    // F16 only: K stored dimension-major within each block (PagedKvLayer::kDimMajor), the order
    // the CPU backends' attention reads fastest.
    bool kDimMajor = false;
    // F16 only: 0, V rows token-major; or the head dimension, each block's V stored head by head
    // (PagedKvLayer::vHeadDim), so that attention reads one head's rows of a block as one run.
    int vHeadDim = 0;
    // Per-group pools (engine/kv/kv_cache.h): the layers with windowLayers[l] set attend only
    // over the last `window` positions, and keep their K/V in a pool of their own whose blocks
    // are freed once they fall out of the window. window 0 or windowLayers empty: one group, every
    // layer keeps every position (the all-positions layout).
    int32_t window = 0;
    std::vector<bool> windowLayers = {};  // [nLayers] or empty
};
// Whether layout has two attention groups: a window, and both global and window layers among
// nLayers (a model whose layers are all windowed, or none, keeps one group of all positions).
bool hasWindowGroup(const KvLayout& layout);
// Layers of the full-attention group (group 0) and of the window group (group 1).
int nGroupLayers(const KvLayout& layout, int group);

// "kv-layout/v1 layers=L row=R block=B type=f16" (+ " k=dim-major", " v=head-major/D"): stable
// bytes for KvChainRoot::derive, so blocks saved in another order are refused, never misread. A
// layout with a window group is "kv-layout/v2 ... window=W window_layers=0,1,2,...": its saved
// blocks carry each group's bytes (engine/snapshot), so v1 saves are refused under it.
std::string describe(const KvLayout& layout);
// Bytes of one token's K (or V) row in one layer (rowStride a multiple of 32 for Q8_0).
size_t kvRowBytes(const KvLayout& layout);

}  // namespace hearth
