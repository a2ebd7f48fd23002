// Reference matmul: each token's activations quantized once, then one vecDot per weight row.
#include "kernels/cpu/reference/matmul.h"

#include <vector>

#include "kernels/cpu/reference/quants.h"

namespace hearth::ref {

void matmul(DType wType, const void* weights, int64_t nRows, int64_t nCols, const float* x, int64_t nTokens, float* y) {
    const DType actType = vecDotType(wType);
    const size_t weightRowBytes = rowBytes(wType, nCols);
    std::vector<unsigned char> act(rowBytes(actType, nCols));  // one token, in actType
    const auto* w = static_cast<const unsigned char*>(weights);
    for (int64_t t = 0; t < nTokens; ++t) {
        quantizeRow(actType, x + t * nCols, act.data(), nCols);
        float* yRow = y + t * nRows;
        for (int64_t r = 0; r < nRows; ++r)
            yRow[r] = vecDot(wType, w + static_cast<size_t>(r) * weightRowBytes, act.data(), nCols);
    }
}

}  // namespace hearth::ref
