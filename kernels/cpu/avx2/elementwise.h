// Row-wise AVX2 operators (SwiGLU, GeGLU, RMSNorm, RoPE, the F16 conversion of K/V rows), bitwise equal
// to the reference backend's (backend_ref.cpp). Plain C++ (no intrinsics types), so baseline
// code may include it; call only when cpuFeatures().canRunAvx2().
#pragma once

#include <cstdint>

#include "kernels/dtype.h"

namespace hearth::avx2 {

// out[i] = gegluOne(gate[i], up[i]) (reference/gelu_tanh.h), eight lanes at a time: F16C
// rounding of the gate, a gather from geluTable(); out may be gate or up.
void geglu(const float* gate, const float* up, int64_t n, float* out);

// out[i] = swigluOne(gate[i], up[i]) (reference/softmax_exp.h), eight lanes at a time through
// softmaxExp8; out may be gate or up.
void swiglu(const float* gate, const float* up, int64_t n, float* out);

// The reference's RMSNorm (backend_ref.cpp) over nRows rows of n: each row's sum of squares in
// double, in element order, four rows side by side in the lanes; then y = x * scale * w (y may be x).
void rmsNorm(const float* x, const float* w, int64_t nRows, int64_t n, float eps, float* y);

// The reference's RoPE rotation (backend_ref.cpp) of the first nRot dims of every head of
// nTokens tokens (x [nTokens, nHeads * headDim]) by angles given as cosines and sines
// [nTokens, nRot / 2] (reference/rope_angles.h); halfSplit: pairs (i, i + nRot/2), else (2i, 2i+1).
void ropeRotate(float* x, int64_t nTokens, int nHeads, int headDim, int nRot, const float* cosines, const float* sines,
                bool halfSplit);

// dst[i] = f32ToF16(src[i]) for i in [0, n) (dtype.h): F16C's conversion, rounding to nearest
// even, as f32ToF16 does (NaNs too stay NaNs, quieted, payload truncated).
void floatsToHalves(const float* src, f16_t* dst, int64_t n);

}  // namespace hearth::avx2
