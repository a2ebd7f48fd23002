// Names and the stable description of a KV layout.
#include "engine/kv/kv_layout.h"

#include "engine/str_cat.h"

namespace hearth {

const char* kvElementTypeName(KvElementType type) {
    switch (type) {
    case KvElementType::F16: return "f16";
    case KvElementType::Q8_0: return "q8_0";
    }
    return "f16";
}

std::string describe(const KvLayout& layout) {
    return strCat("kv-layout/v1 layers=", layout.nLayers, " row=", layout.rowStride, " block=", layout.blockSize,
                  " type=", kvElementTypeName(layout.elementType));
}

}  // namespace hearth
