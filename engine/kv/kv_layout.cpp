// Names and the stable description of a KV layout.
#include "engine/kv/kv_layout.h"

#include "engine/str_cat.h"
#include "kernels/dtype.h"

namespace hearth {

const char* kvElementTypeName(KvElementType type) {
    switch (type) {
    case KvElementType::F16: return "f16";
    case KvElementType::Q8_0: return "q8_0";
    }
    return "f16";
}

std::optional<KvElementType> parseKvElementType(std::string_view name) {
    if (name == "f16") return KvElementType::F16;
    if (name == "q8_0") return KvElementType::Q8_0;
    return std::nullopt;
}

size_t kvRowBytes(const KvLayout& layout) {
    const auto n = static_cast<size_t>(layout.rowStride);
    if (layout.elementType == KvElementType::Q8_0) return n / kQK * sizeof(BlockQ8_0);
    return n * sizeof(f16_t);
}

std::string describe(const KvLayout& layout) {
    return strCat("kv-layout/v1 layers=", layout.nLayers, " row=", layout.rowStride, " block=", layout.blockSize,
                  " type=", kvElementTypeName(layout.elementType));
}

}  // namespace hearth
