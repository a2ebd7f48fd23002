// KvLayout: all that KV code knows about a model (layers of one attention group, row width,
// block size, element type), and the text that describes it inside a chain root's hash.
#pragma once

#include <cstdint>
#include <string>

namespace hearth {

enum class KvElementType : uint8_t {
    F16,   // the default, and the only type the kernels read today
    Q8_0,  // TODO(#4): half the memory; representable here, not yet stored or read
};
const char* kvElementTypeName(KvElementType type);  // "f16", "q8_0"

struct KvLayout {
    int nLayers = 0;
    int rowStride = 0;    // nKvHeads * headDim: elements of one token's K (or V) in one layer
    int blockSize = 16;   // tokens per block
    KvElementType elementType = KvElementType::F16;
};

// "kv-layout/v1 layers=L row=R block=B type=f16": stable bytes for KvChainRoot::derive.
std::string describe(const KvLayout& layout);

}  // namespace hearth
