// Quantized matrix-vector products for decode: activations quantized on the device as the
// reference quantizes them (Q8_0, Q8_1, Q8_K, or rounded to F16/BF16), then one warp per
// weight row sums per-block integer dot products (dp4a) read straight from the GGUF blocks.
#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <string_view>

#include "kernels/cuda/plugin/device_memory.h"
#include "kernels/cuda/plugin/device_quants.cuh"
#include "kernels/cuda/plugin/elementwise.cuh"
#include "kernels/cuda/plugin/matvec_planar.cuh"
#include "kernels/cuda/plugin/ops.h"
#include "kernels/cuda/plugin/warp_reduce.cuh"

namespace hearth::cuda {
namespace {

constexpr int kWarpsPerBlock = 4;

// NaN becomes 0 and the rest saturates, as the reference's toInt8Saturated.
__device__ int8_t toInt8(float rounded) {
    if (isnan(rounded)) return 0;
    return static_cast<int8_t>(fminf(fmaxf(rounded, -128.0f), 127.0f));
}

// Block b (32 elements, one a lane) as Q8_0 (and Q8_1's s): every lane of the warp calls it.
__device__ __forceinline__ void quantizeBlock32(float v, int lane, int64_t b, int8_t* q, float* d, float* s) {
    const float amax = warpMax(fabsf(v));  // as the reference (ggml's x86 quantizer)
    const float dq = amax / 127.0f;
    const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
    const int8_t qi = toInt8(rintf(v * id));
    q[b * 32 + lane] = qi;
    const int sum = warpSumInt(qi);
    if (lane == 0) {
        d[b] = __half2float(__float2half_rn(dq));
        s[b] = __half2float(__float2half_rn(static_cast<float>(sum) * dq));
    }
}

// One warp per 32-element block (all tokens' blocks in a row): Q8_0, and Q8_1's s.
__global__ void quantize32Kernel(const float* x, int64_t nBlocks, int8_t* q, float* d, float* s) {
    const int64_t b = blockIdx.x * static_cast<int64_t>(kWarpsPerBlock) + threadIdx.x / 32;
    if (b >= nBlocks) return;
    const int lane = threadIdx.x % 32;
    quantizeBlock32(x[b * 32 + lane], lane, b, q, d, s);
}

// Q8_K super-block b of the 256 values at xb, thread i holding v = xb[i]: the signed element of
// largest magnitude (the first one on ties) sets iscale = -127/max. 256 threads take a
// super-block (eight whole warps); every thread of the thread block calls it, `valid` false
// where it has no super-block, since it synchronises the thread block. amax, arg: 256 entries of
// shared memory for these 256 threads.
__device__ void quantizeSuperBlock(float v, int i, bool valid, const float* xb, int64_t b, float* amax, int* arg,
                                   int8_t* q, float* d, int16_t* bsums) {
    amax[i] = valid ? fabsf(v) : 0.0f;
    arg[i] = i;
    __syncthreads();
    for (int stride = 128; stride > 0; stride >>= 1) {
        if (i < stride) {
            const float o = amax[i + stride];
            if (o > amax[i] || (o == amax[i] && arg[i + stride] < arg[i])) {
                amax[i] = o;
                arg[i] = arg[i + stride];
            }
        }
        __syncthreads();
    }
    const float maxAbs = amax[0];
    const float max = valid ? xb[arg[0]] : 0.0f;
    __syncthreads();  // amax and arg read: the caller may reuse them
    const float iscale = maxAbs != 0.0f ? -127.0f / max : 0.0f;
    const int8_t qi = maxAbs != 0.0f ? toInt8(fminf(127.0f, rintf(iscale * v))) : 0;
    if (valid) q[b * 256 + i] = qi;
    const int lane = i % 32;
    // Sums of each 16: lanes 0 and 16 of each warp gather their half-warp.
    int s16 = qi;
    for (int o = 8; o > 0; o >>= 1) s16 += __shfl_down_sync(0xffffffffu, s16, o, 16);
    if (valid && lane % 16 == 0) bsums[b * 16 + i / 16] = static_cast<int16_t>(s16);
    if (valid && i == 0) d[b] = maxAbs != 0.0f ? 1.0f / iscale : 0.0f;
}

// One block of 256 threads per Q8_K super-block.
__global__ void quantizeKKernel(const float* x, int8_t* q, float* d, int16_t* bsums) {
    const int64_t b = blockIdx.x;
    __shared__ float amax[256];
    __shared__ int arg[256];
    const float* xb = x + b * 256;
    quantizeSuperBlock(xb[threadIdx.x], static_cast<int>(threadIdx.x), true, xb, b, amax, arg, q, d, bsums);
}

// F32/F16/BF16 weights: the reference rounds the activations to the weight's type.
__device__ __forceinline__ float roundTo(DType t, float v) {
    if (t == DType::F16) return __half2float(__float2half_rn(v));
    if (t == DType::BF16) return __bfloat162float(__float2bfloat16_rn(v));
    return v;
}

__global__ void roundKernel(DType t, const float* x, int64_t n, float* f) {
    const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (i < n) f[i] = roundTo(t, x[i]);
}

// Which quantizer a weight type's activations take.
enum class ActKind { Blocks32, SuperBlocks, Floats };
HEARTH_HD inline ActKind actKind(DType t) {
    switch (t) {
    case DType::Q4_0:
    case DType::Q4_1:
    case DType::Q5_0:
    case DType::Q5_1:
    case DType::Q8_0: return ActKind::Blocks32;
    case DType::Q4_K:
    case DType::Q5_K:
    case DType::Q6_K: return ActKind::SuperBlocks;
    default: return ActKind::Floats;
    }
}

// A fused product's input (prepareActivations): one block of kNormThreads per token's row.
// The row is prepared as rmsNormKernel, swigluKernel or gegluKernel make it (the same device
// functions), written to out, then quantized from out as quantize32Kernel, quantizeKKernel or
// roundKernel quantize it (warps take the 32-element blocks in turn; four groups of 256
// threads the super-blocks).
struct PrepareArgs {
    PrepareKind kind;
    DType weight;
    const float* x;
    const float* w;
    float eps;
    const float* up;
    int64_t n;
    float* out;
};
__global__ void __launch_bounds__(kNormThreads) prepareKernel(PrepareArgs p, ActBuffers a) {
    const int64_t t = blockIdx.x, n = p.n;
    const float* xr = p.x + t * n;
    float* yr = p.out + t * n;
    const ActKind kind = actKind(p.weight);
    __shared__ float partial[kNormThreads / 32];
    if (p.kind == PrepareKind::RmsNorm) {
        // Every read of the row ends before the first write: out may alias x.
        const float scale = rowRmsScale(xr, n, p.eps, partial);
        for (int64_t i = threadIdx.x; i < n; i += blockDim.x) yr[i] = xr[i] * scale * p.w[i];
    } else {
        const float* ur = p.up + t * n;
        for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
            yr[i] = p.kind == PrepareKind::SwiGlu ? swigluValue(xr[i], ur[i]) : gegluValue(xr[i], ur[i]);
    }
    __syncthreads();  // the row is written, and visible to the whole block
    if (kind == ActKind::Floats) {
        for (int64_t i = threadIdx.x; i < n; i += blockDim.x) a.f[t * n + i] = roundTo(p.weight, yr[i]);
    } else if (kind == ActKind::Blocks32) {
        const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
        const int64_t nBlocks = n / 32;
        for (int64_t b = warp; b < nBlocks; b += kNormThreads / 32)
            quantizeBlock32(yr[b * 32 + lane], lane, t * nBlocks + b, a.q, a.d, a.s);
    } else {
        __shared__ float amax[kNormThreads];
        __shared__ int arg[kNormThreads];
        constexpr int kGroups = kNormThreads / 256;
        const int group = threadIdx.x / 256, i = threadIdx.x % 256;
        const int64_t nSuper = n / 256;
        for (int64_t first = 0; first < nSuper; first += kGroups) {  // the same rounds for every thread
            const int64_t sb = first + group;
            const bool valid = sb < nSuper;
            const float* xb = yr + (valid ? sb : 0) * 256;
            quantizeSuperBlock(valid ? xb[i] : 0.0f, i, valid, xb, t * nSuper + sb, amax + group * 256,
                               arg + group * 256, a.q, a.d, a.bsums);
        }
    }
}

__device__ float floatWeight(DType t, const uint8_t* row, int64_t i) {
    if (t == DType::F16) return __half2float(reinterpret_cast<const __half*>(row)[i]);
    if (t == DType::BF16)
        return __uint_as_float(static_cast<uint32_t>(reinterpret_cast<const uint16_t*>(row)[i]) << 16);
    return reinterpret_cast<const float*>(row)[i];
}

// Super-block b of a K-quant row against token's activations (the 32-element types go through
// matvecQuartersKernel).
template <DType kT>
__device__ float blockDot(const uint8_t* row, int64_t b, const int8_t* q, const float* d, const int16_t* bsums) {
    switch (kT) {
    case DType::Q4_K: return dotScaleMinK<false>(row + b * 144, q + b * 256, d[b], bsums + b * 16);
    case DType::Q5_K: return dotScaleMinK<true>(row + b * 176, q + b * 256, d[b], bsums + b * 16);
    case DType::Q6_K: return dotQ6_K(row + b * 210, q + b * 256, d[b]);
    default: return 0.0f;
    }
}

// F32/F16/BF16 and the K-quants: one warp per (row, token); lanes take blocks lane, lane + 32, ...
template <DType kT>
__global__ void matvecKernel(const uint8_t* w, int64_t nRows, int64_t nCols, size_t rowSize, ActBuffers a, float* y) {
    const int64_t r = blockIdx.x * static_cast<int64_t>(kWarpsPerBlock) + threadIdx.x / 32;
    const int64_t t = blockIdx.y;
    if (r >= nRows) return;
    const int lane = threadIdx.x % 32;
    const uint8_t* row = w + static_cast<size_t>(r) * rowSize;
    float acc = 0.0f;
    if (kT == DType::F32 || kT == DType::F16 || kT == DType::BF16) {
        const float* f = a.f + t * nCols;
        for (int64_t i = lane; i < nCols; i += 32) acc += floatWeight(kT, row, i) * f[i];
    } else {
        const int64_t nb = nCols / 256;
        const int8_t* q = a.q + t * nCols;
        const float* d = a.d + t * nb;
        const int16_t* bs = a.bsums + t * (nCols / 16);
        for (int64_t b = lane; b < nb; b += 32) acc += blockDot<kT>(row, b, q, d, bs);
    }
    acc = warpSum(acc);
    if (lane == 0) y[t * nRows + r] = acc;
}

// The 32-element block types, a quarter block (8 weights) per lane at a time: lane l of a warp
// takes quarters l, l + 32, ... of its row, so a warp's loads cover 8 consecutive blocks (one
// or two cache lines) instead of 32 blocks 18-34 bytes apart, and each weight quarter is read
// once for every token of the step (at most kMaxMatvecTokens, ops.h).

template <DType kT>
constexpr int kBlockBytes = kT == DType::Q4_0 ? 18 : kT == DType::Q4_1 ? 20 : kT == DType::Q5_0 ? 22
                          : kT == DType::Q5_1 ? 24 : 34;
template <DType kT>
constexpr bool kHasMin = kT == DType::Q4_1 || kT == DType::Q5_1;  // Q4_1/Q5_1: + min * s
template <DType kT>
constexpr bool kFiveBits = kT == DType::Q5_0 || kT == DType::Q5_1;

// Quarter k of block b against one token's activations: integer sums, then the block's scales.
template <DType kT>
__device__ __forceinline__ float quarterDot(const uint8_t* blk, int k, const int8_t* aq, float ad, float as) {
    const float dw = ldHalf(blk);
    if constexpr (kT == DType::Q8_0) {
        int sumi = dp4a(ld32a2(blk + 2 + 8 * k), ld32(aq + 8 * k), 0);
        sumi = dp4a(ld32a2(blk + 6 + 8 * k), ld32(aq + 8 * k + 4), sumi);
        return (dw * ad) * static_cast<float>(sumi);
    } else {
        constexpr int qsAt = kHasMin<kT> ? 4 : 2;
        const uint8_t* qs = blk + qsAt + (kFiveBits<kT> ? 4 : 0);
        const int v = ld32a2(qs + 4 * k), alo = ld32(aq + 4 * k), ahi = ld32(aq + 16 + 4 * k);
        int lo = v & 0x0F0F0F0F, hi = (v >> 4) & 0x0F0F0F0F;
        if constexpr (kFiveBits<kT>) {
            const auto qh = static_cast<uint32_t>(ld32a2(blk + qsAt));
            lo |= spreadBits(qh >> (4 * k));
            hi |= spreadBits(qh >> (16 + 4 * k));
        }
        const int sumi = dp4a(hi, ahi, dp4a(lo, alo, 0));
        if constexpr (kHasMin<kT>)
            return (dw * ad) * static_cast<float>(sumi) + (k == 0 ? ldHalf(blk + 2) * as : 0.0f);
        const int suma = sum4(ahi, sum4(alo, 0));
        constexpr int offset = kFiveBits<kT> ? 16 : 8;
        return (dw * ad) * static_cast<float>(sumi - offset * suma);
    }
}

template <DType kT>
__global__ void matvecQuartersKernel(const uint8_t* w, int64_t nRows, int64_t nCols, ActBuffers a, int nTokens,
                                     float* y) {
    const int64_t r = blockIdx.x * static_cast<int64_t>(kWarpsPerBlock) + threadIdx.x / 32;
    if (r >= nRows) return;
    const int lane = threadIdx.x % 32;
    const int64_t nb = nCols / 32, nQuarters = nb * 4;
    const uint8_t* row = w + static_cast<size_t>(r) * static_cast<size_t>(nb * kBlockBytes<kT>);
    float acc[kMaxMatvecTokens];
    HEARTH_UNROLL
    for (int t = 0; t < kMaxMatvecTokens; ++t) acc[t] = 0.0f;
#pragma unroll 4
    for (int64_t u = lane; u < nQuarters; u += 32) {
        const int64_t b = u / 4;
        const int k = static_cast<int>(u % 4);
        const uint8_t* blk = row + b * kBlockBytes<kT>;
        HEARTH_UNROLL
        for (int t = 0; t < kMaxMatvecTokens; ++t) {
            if (t >= nTokens) break;
            acc[t] += quarterDot<kT>(blk, k, a.q + t * nCols + b * 32, a.d[t * nb + b],
                                     kHasMin<kT> ? a.s[t * nb + b] : 0.0f);
        }
    }
    HEARTH_UNROLL
    for (int t = 0; t < kMaxMatvecTokens; ++t) {
        if (t >= nTokens) break;
        const float sum = warpSum(acc[t]);
        if (lane == 0) y[t * nRows + r] = sum;
    }
}

// ---- Planar rows (device_quants.cuh: planarRows; each thread's work: matvec_planar.cuh) ----
// A row's sum: each thread's blocks in order, the warp's butterfly, then the four warps in
// order, so a row gets the same bits whatever kR, kT2, its batch or the other jobs are.
template <DType kT, int kR, int kT2>
__global__ void __launch_bounds__(kPlanarThreads)
    matvecPlanarKernel(MatvecJobs jobs, int64_t nCols, ActBuffers a, int nTokens) {
    const PlanarSlot slot = planarSlot<kR>(jobs, blockIdx.x);
    float acc[kT2][kR];
    planarThreadSums<kT, kR, kT2>(slot, nCols, a, nTokens, static_cast<int>(threadIdx.x), acc);
    __shared__ float partial[kPlanarThreads / 32][kT2][kR];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    HEARTH_UNROLL
    for (int t = 0; t < kT2; ++t) {
        if (t >= nTokens) break;
        HEARTH_UNROLL
        for (int rr = 0; rr < kR; ++rr) {
            const float sum = warpSum(acc[t][rr]);
            if (lane == 0) partial[warp][t][rr] = sum;
        }
    }
    __syncthreads();
    const int t = static_cast<int>(threadIdx.x) / kR, rr = static_cast<int>(threadIdx.x) % kR;
    if (t < kT2 && t < nTokens && slot.r0 + rr < slot.nRows) {
        float sum = partial[0][t][rr];
        HEARTH_UNROLL
        for (int k = 1; k < kPlanarThreads / 32; ++k) sum += partial[k][t][rr];
        float& y = slot.y[t * slot.nRows + slot.r0 + rr];
        y = jobs.accumulate ? y + sum : sum;
    }
}

template <DType kT, int kR, int kT2>
void launchPlanar(MatvecJobs jobs, int64_t nCols, const ActBuffers& a, int nTokens, cudaStream_t s) {
    static_assert(kR * kT2 <= kPlanarThreads, "one thread stores each (token, row)");
    const unsigned blocks = planarBlocks(jobs, kR);
    if (blocks == 0) return;
    matvecPlanarKernel<kT, kR, kT2><<<blocks, kPlanarThreads, 0, s>>>(jobs, nCols, a, nTokens);
    countLaunches(1);
}

// Rows a block takes: 4 while that leaves the GPU enough blocks, else 1 (small matrices); the
// tokens in registers: the next of 1, 2, 4, 8, 16 (50 kernels in all: each more costs build time).
template <DType kT>
void dispatchPlanar(const MatvecJobs& jobs, int64_t nCols, const ActBuffers& a, int nTokens, cudaStream_t s) {
    int64_t rows = 0;
    for (int m = 0; m < jobs.count; ++m) rows += jobs.nRows[m];
    const int rowsPerBlock = planarRowsPerBlock(rows);
#define HEARTH_PLANAR_TOKENS(R)                                                  \
    if (nTokens <= 1) return launchPlanar<kT, R, 1>(jobs, nCols, a, nTokens, s); \
    if (nTokens <= 2) return launchPlanar<kT, R, 2>(jobs, nCols, a, nTokens, s); \
    if (nTokens <= 4) return launchPlanar<kT, R, 4>(jobs, nCols, a, nTokens, s); \
    if (nTokens <= 8) return launchPlanar<kT, R, 8>(jobs, nCols, a, nTokens, s); \
    return launchPlanar<kT, R, 16>(jobs, nCols, a, nTokens, s);
    if (rowsPerBlock >= 4) {
        HEARTH_PLANAR_TOKENS(4)
    }
    HEARTH_PLANAR_TOKENS(1)
#undef HEARTH_PLANAR_TOKENS
}

// The quantized activations as halves for cuBLAS: q * d per element (the value the reference
// multiplies), or the activation rounded to the weight's float type.
__global__ void activationsToHalfKernel(bool kBlocks, bool floatWeights, ActBuffers a, int64_t n, __half* out) {
    const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (i >= n) return;
    if (floatWeights) out[i] = __float2half_rn(a.f[i]);
    else out[i] = __float2half_rn(static_cast<float>(a.q[i]) * a.d[i / (kBlocks ? 256 : 32)]);
}

template <DType kT>
void launchMatvec(const uint8_t* w, int64_t nRows, int64_t nCols, const ActBuffers& a, int64_t nTokens, float* y,
                  cudaStream_t s) {
    if constexpr (kT == DType::Q4_0 || kT == DType::Q4_1 || kT == DType::Q5_0 || kT == DType::Q5_1 ||
                  kT == DType::Q8_0) {
        const auto grid = static_cast<unsigned>((nRows + kWarpsPerBlock - 1) / kWarpsPerBlock);
        matvecQuartersKernel<kT><<<grid, 32 * kWarpsPerBlock, 0, s>>>(w, nRows, nCols, a, static_cast<int>(nTokens),
                                                                      y);
        countLaunches(1);
        return;
    }
    const dim3 grid(static_cast<unsigned>((nRows + kWarpsPerBlock - 1) / kWarpsPerBlock),
                    static_cast<unsigned>(nTokens));
    matvecKernel<kT><<<grid, 32 * kWarpsPerBlock, 0, s>>>(w, nRows, nCols, rowBytes(kT, nCols), a, y);
    countLaunches(1);
}

}  // namespace

int planarRowsPerBlock(int64_t rows) {
    static const int forced = [] {
        const char* env = std::getenv("HEARTH_CUDA_PLANAR_ROWS");  // 1 or 4: the device script's sweep
        const int v = env != nullptr ? std::atoi(env) : 0;
        return v == 1 || v == 4 ? v : 0;
    }();
    if (forced != 0) return forced;
    static const int sms = [] {
        int device = 0, n = 0;
        cudaGetDevice(&device);
        cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, device);
        return std::max(n, 1);
    }();
    const int64_t enough = int64_t{8} * sms;  // blocks: 8 an SM
    return rows / 4 >= enough ? 4 : 1;
}

bool choosePlanarRows(DType t, int64_t nCols) {
    const char* env = std::getenv("HEARTH_CUDA_PLANAR");
    return planarRows(t, nCols) && !(env != nullptr && std::string_view(env) == "0");
}

void toPlanarRows(DType t, const uint8_t* src, int64_t nRows, int64_t nCols, uint8_t* dst) {
    const size_t size = rowBytes(t, nCols);
    for (int64_t r = 0; r < nRows; ++r)
        toPlanarRow(t, src + size * static_cast<size_t>(r), nCols, dst + size * static_cast<size_t>(r));
}

void matvecPlanar(DType weight, const MatvecJobs& jobs, int64_t nCols, const ActBuffers& a, int64_t nTokens,
                  cudaStream_t s) {
    if (jobs.count <= 0 || nTokens <= 0) return;
    if (jobs.count > kMaxMatvecJobs || nTokens > kMaxMatvecTokens || !planarRows(weight, nCols))
        throw std::logic_error("CUDA: a planar mat-vec outside its limits");
    const int n = static_cast<int>(nTokens);
    switch (weight) {
    case DType::Q4_0: return dispatchPlanar<DType::Q4_0>(jobs, nCols, a, n, s);
    case DType::Q4_1: return dispatchPlanar<DType::Q4_1>(jobs, nCols, a, n, s);
    case DType::Q5_0: return dispatchPlanar<DType::Q5_0>(jobs, nCols, a, n, s);
    case DType::Q5_1: return dispatchPlanar<DType::Q5_1>(jobs, nCols, a, n, s);
    case DType::Q8_0: return dispatchPlanar<DType::Q8_0>(jobs, nCols, a, n, s);
    case DType::Q4_K: return dispatchPlanar<DType::Q4_K>(jobs, nCols, a, n, s);
    case DType::Q6_K: return dispatchPlanar<DType::Q6_K>(jobs, nCols, a, n, s);
    default: return;
    }
}

bool sharesActivations(DType a, DType b) {
    return a == b || (actKind(a) == actKind(b) && actKind(a) != ActKind::Floats);
}

ActSizes actSizes(int64_t nTokens, int64_t nCols) {
    const auto n = static_cast<size_t>(nTokens * nCols);
    return {n, n / 32 * sizeof(float), n / 32 * sizeof(float), n / 16 * sizeof(int16_t), n * sizeof(float)};
}

void quantizeActivations(DType weight, const float* x, int64_t nTokens, int64_t nCols, const ActBuffers& a,
                         cudaStream_t s) {
    const int64_t n = nTokens * nCols;
    if (n <= 0) return;
    switch (weight) {
    case DType::Q4_0:
    case DType::Q4_1:
    case DType::Q5_0:
    case DType::Q5_1:
    case DType::Q8_0: {
        const int64_t nBlocks = n / 32;
        const auto grid = static_cast<unsigned>((nBlocks + kWarpsPerBlock - 1) / kWarpsPerBlock);
        quantize32Kernel<<<grid, 32 * kWarpsPerBlock, 0, s>>>(x, nBlocks, a.q, a.d, a.s);
        break;
    }
    case DType::Q4_K:
    case DType::Q5_K:
    case DType::Q6_K: quantizeKKernel<<<static_cast<unsigned>(n / 256), 256, 0, s>>>(x, a.q, a.d, a.bsums); break;
    default: roundKernel<<<static_cast<unsigned>((n + 255) / 256), 256, 0, s>>>(weight, x, n, a.f); break;
    }
    countLaunches(1);
}

void prepareActivations(PrepareKind kind, DType weight, const float* x, const float* w, float eps, const float* up,
                        int64_t nTokens, int64_t n, float* out, const ActBuffers& a, cudaStream_t s) {
    if (nTokens <= 0 || n <= 0) return;
    if (n % (actKind(weight) == ActKind::SuperBlocks ? 256 : 32) != 0)
        throw std::logic_error("CUDA: a fused input whose rows are not whole blocks");
    prepareKernel<<<static_cast<unsigned>(nTokens), kNormThreads, 0, s>>>(
        PrepareArgs{kind, weight, x, w, eps, up, n, out}, a);
    countLaunches(1);
}

void activationsToHalf(DType weight, const ActBuffers& a, int64_t n, __half* out, cudaStream_t s) {
    if (n <= 0) return;
    const bool kBlocks = weight == DType::Q4_K || weight == DType::Q5_K || weight == DType::Q6_K;
    const bool floatWeights = weight == DType::F32 || weight == DType::F16 || weight == DType::BF16;
    activationsToHalfKernel<<<static_cast<unsigned>((n + 255) / 256), 256, 0, s>>>(kBlocks, floatWeights, a, n, out);
    countLaunches(1);
}

void matvec(DType weight, const uint8_t* w, int64_t nRows, int64_t nCols, const ActBuffers& a, int64_t nTokens,
            float* y, cudaStream_t s) {
    if (nRows <= 0 || nTokens <= 0) return;
    switch (weight) {
    case DType::F32: return launchMatvec<DType::F32>(w, nRows, nCols, a, nTokens, y, s);
    case DType::F16: return launchMatvec<DType::F16>(w, nRows, nCols, a, nTokens, y, s);
    case DType::BF16: return launchMatvec<DType::BF16>(w, nRows, nCols, a, nTokens, y, s);
    case DType::Q4_0: return launchMatvec<DType::Q4_0>(w, nRows, nCols, a, nTokens, y, s);
    case DType::Q4_1: return launchMatvec<DType::Q4_1>(w, nRows, nCols, a, nTokens, y, s);
    case DType::Q5_0: return launchMatvec<DType::Q5_0>(w, nRows, nCols, a, nTokens, y, s);
    case DType::Q5_1: return launchMatvec<DType::Q5_1>(w, nRows, nCols, a, nTokens, y, s);
    case DType::Q8_0: return launchMatvec<DType::Q8_0>(w, nRows, nCols, a, nTokens, y, s);
    case DType::Q4_K: return launchMatvec<DType::Q4_K>(w, nRows, nCols, a, nTokens, y, s);
    case DType::Q5_K: return launchMatvec<DType::Q5_K>(w, nRows, nCols, a, nTokens, y, s);
    case DType::Q6_K: return launchMatvec<DType::Q6_K>(w, nRows, nCols, a, nTokens, y, s);
    default: return;
    }
}

}  // namespace hearth::cuda
