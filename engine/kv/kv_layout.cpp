// Names and the stable description of a KV layout.
#include "engine/kv/kv_layout.h"

#include <algorithm>
#include <utility>

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

bool hasWindowGroup(const KvLayout& layout) {
    if (layout.window <= 0 || std::ssize(layout.windowLayers) != layout.nLayers) return false;
    const auto nWindow = std::count(layout.windowLayers.begin(), layout.windowLayers.end(), true);
    return nWindow > 0 && nWindow < layout.nLayers;
}

int nGroupLayers(const KvLayout& layout, int group) {
    if (!hasWindowGroup(layout)) return group == 0 ? layout.nLayers : 0;
    const auto nWindow = static_cast<int>(std::count(layout.windowLayers.begin(), layout.windowLayers.end(), true));
    return group == 0 ? layout.nLayers - nWindow : nWindow;
}

std::string describe(const KvLayout& layout) {
    const bool grouped = hasWindowGroup(layout);
    std::string out = strCat("kv-layout/", grouped ? "v2" : "v1", " layers=", layout.nLayers, " row=", layout.rowStride,
                             " block=", layout.blockSize, " type=", kvElementTypeName(layout.elementType));
    if (layout.kDimMajor) out += " k=dim-major";  // saves in the other order are refused, never misread
    if (layout.vHeadDim > 0) out += strCat(" v=head-major/", layout.vHeadDim);
    if (!grouped) return out;
    out += strCat(" window=", layout.window, " window_layers=");
    const char* sep = "";
    for (int l = 0; l < layout.nLayers; ++l)
        if (layout.windowLayers[static_cast<size_t>(l)]) out += strCat(std::exchange(sep, ","), l);
    return out;
}

}  // namespace hearth
