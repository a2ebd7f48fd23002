// Reductions across the 32 lanes of a warp (butterfly shuffles: every lane gets the result),
// shared by the attention, mat-vec and elementwise kernels.
#pragma once

namespace hearth::cuda {

__device__ inline float warpSum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

__device__ inline int warpSumInt(int v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

__device__ inline float warpMax(float v) {
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

}  // namespace hearth::cuda
