// Reference matrix product of quantized weights by float activations, built on quants.h:
// single-threaded, readable, and the oracle the fast matmuls are checked against.
#pragma once

#include "kernels/dtype.h"

namespace hearth::ref {

// y = x · Wᵀ, computed as ggml computes it.
//   weights: nRows rows of nCols elements of type wType (GGUF layout: dims[0] = nCols is
//            contiguous), rowBytes(wType, nCols) bytes per row; wType must be a weight type
//            and nCols a multiple of its block size.
//   x:       [nTokens, nCols] floats.
//   y:       [nTokens, nRows] floats; y[t][r] = vecDot(wType, row r, x[t] quantized once to
//            vecDotType(wType)).
// Each token is reduced alone and in the same order, so a row's result does not depend on
// the batch it came in (DESIGN.md, batch invariance). Allocates one row of scratch per call.
void matmul(DType wType, const void* weights, int64_t nRows, int64_t nCols, const float* x, int64_t nTokens, float* y);

}  // namespace hearth::ref
