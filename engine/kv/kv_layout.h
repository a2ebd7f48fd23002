// KvLayout: all that KV code knows about a model (layers of one attention group, row width,
// block size, element type), and the text that describes it inside a chain root's hash.
#pragma once

#include <cstdint>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

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
};

// "kv-layout/v1 layers=L row=R block=B type=f16": stable bytes for KvChainRoot::derive.
std::string describe(const KvLayout& layout);
// Bytes of one token's K (or V) row in one layer (rowStride a multiple of 32 for Q8_0).
size_t kvRowBytes(const KvLayout& layout);

}  // namespace hearth
