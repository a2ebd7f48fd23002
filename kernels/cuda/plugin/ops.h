// The CUDA kernels' launchers: device pointers in, device pointers out, all on one stream.
// Plain C++17 so that both nvcc (the .cu files) and g++ (cuda_backend.cpp) compile it.
// Semantics follow kernels/cpu/reference (the oracle); results are close, not bitwise.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "kernels/dtype.h"

namespace hearth::cuda {

// ---- Element-wise (ops_elementwise.cu) ----
void rmsNorm(const float* x, const float* w, int64_t nRows, int64_t n, float eps, float* y, cudaStream_t s);
// pairwise: Llama's (x[2i], x[2i+1]); else NeoX's (x[i], x[i + nRot/2]). freqFactors: nullptr or
// [nRot / 2] divisors of each pair's angle, in device memory.
void rope(float* x, int64_t nTokens, int nHeads, int headDim, int nRot, const int32_t* positions, float freqBase,
          const float* freqFactors, bool pairwise, cudaStream_t s);
// Backend::qkRope in one launch (headDim <= 1024): each head of q and k normalised (where
// qNorm / kNorm are given), rotated and scaled, with the bits of rmsNorm, rope and scale.
void qkRope(float* q, float* k, int nHeads, int nKvHeads, int headDim, int nRot, const float* qNorm, const float* kNorm,
            float eps, const int32_t* positions, int64_t nTokens, float freqBase, const float* freqFactors,
            bool pairwise, float attnFactor, cudaStream_t s);
// x += rmsNorm(y, w) per row of n, y normalised in place (Backend::addRmsNormed): one launch,
// the bits of rmsNorm then add.
void addRmsNormed(float* x, float* y, const float* w, int64_t nRows, int64_t n, float eps, cudaStream_t s);
void swiglu(const float* gate, const float* up, int64_t n, float* out, cudaStream_t s);
// out[r] = the first index of row r's largest value, NaNs passed over, 0 for a row starting
// with a NaN (Backend::argmaxRows).
void argmaxRows(const float* x, int64_t nRows, int64_t n, int32_t* out, cudaStream_t s);

// ---- Top values of rows (ops_topk.cu) ----
struct TopValue {  // Backend::TopEntry's layout
    int32_t id;
    float value;
};
// out[r * k + j]: row r's k first values (greater first, -0 == +0, equal ones by lower column)
// with their columns, or out[r * k].id = -1 where the row holds a NaN or an infinity
// (Backend::topKRows); with lse, each row's log-sum-exp besides. 0 < k <= min(n, 256). Two
// launches; scratch: topKScratchBytes of device memory.
size_t topKScratchBytes(int64_t nRows, int64_t n, int k);
void topKRows(const float* x, int64_t nRows, int64_t n, int k, TopValue* out, float* lse, void* scratch,
              cudaStream_t s);
void geglu(const float* gate, const float* up, int64_t n, float* out, cudaStream_t s);
void add(float* x, const float* y, int64_t n, cudaStream_t s);
// x[r * rowStride + i] *= factor for r < nRows, i < n.
void scale(float* x, int64_t nRows, int64_t rowStride, int64_t n, float factor, cudaStream_t s);
// x[i] = cap * tanhf(x[i] / cap) (Gemma 2's final soft-cap).
void softcap(float* x, int64_t n, float cap, cudaStream_t s);
// out[i] = row ids[i] of table (rows of nCols elements of type t, rowBytes apart), as floats.
// planar: the rows are in the mat-vec's planar layout (device_quants.cuh), else GGUF's blocks.
void embeddingRows(DType t, bool planar, const uint8_t* table, int64_t nCols, const int32_t* ids, int64_t n, float* out,
                   cudaStream_t s);
// Rows [0, nRows) of a weight matrix dequantized to halves: out [nRows, nCols].
void dequantizeToHalf(DType t, bool planar, const uint8_t* rows, int64_t nRows, int64_t nCols, __half* out,
                      cudaStream_t s);

// ---- Quantized matrix-vector products (ops_matvec.cu) ----
// Activations quantized as the reference's vecDotType(w), laid out for the GPU: per token,
// q [nCols] int8, d [nCols/block] (the stored scale, as float), s [nCols/32] (Q8_1's s) or
// bsums [nCols/16] (Q8_K's), f [nCols] (F32/F16/BF16 weights: x rounded to the weight type).
struct ActBuffers {
    int8_t* q = nullptr;
    float* d = nullptr;
    float* s = nullptr;
    int16_t* bsums = nullptr;
    float* f = nullptr;
};
// Bytes each of the five arrays needs for nTokens rows of nCols.
struct ActSizes {
    size_t q, d, s, bsums, f;
};
ActSizes actSizes(int64_t nTokens, int64_t nCols);
// Whether weights of types a and b take the same quantized activations (one quantizeActivations
// serves both).
bool sharesActivations(DType a, DType b);
void quantizeActivations(DType weight, const float* x, int64_t nTokens, int64_t nCols, const ActBuffers& a,
                         cudaStream_t s);
// The input of a fused product (Backend::matmulFused) in one launch: per token's row of n,
// rmsNorm(x, w, eps), swiglu(x, up) or geglu(x, up) written to out (which may alias x), then
// quantized into a as quantizeActivations(weight, out, ...) quantizes it: the same bits as
// those separate launches. n: whole blocks of weight's activation type.
enum class PrepareKind { RmsNorm, SwiGlu, GeGlu };
void prepareActivations(PrepareKind kind, DType weight, const float* x, const float* w, float eps, const float* up,
                        int64_t nTokens, int64_t n, float* out, const ActBuffers& a, cudaStream_t s);
// The quantized activations (n elements) as halves: q * d, or f rounded to F16, so that
// prefill through cuBLAS multiplies the values the reference and the mat-vec multiply.
void activationsToHalf(DType weight, const ActBuffers& a, int64_t n, __half* out, cudaStream_t s);
// y[t][r] = dot(row r, x[t]) with dp4a integer sums per block; one warp per row; nTokens at most
// kMaxMatvecTokens (more go through cuBLAS).
constexpr int kMaxMatvecTokens = 16;
void matvec(DType weight, const uint8_t* w, int64_t nRows, int64_t nCols, const ActBuffers& a, int64_t nTokens,
            float* y, cudaStream_t s);
// The same product over planar rows (device_quants.cuh: planarRows(weight, nCols)), for up to
// kMaxMatvecJobs matrices of one type and width in one launch (Q/K/V, gate/up): y[m][t][r] =
// dot(row r of w[m], x[t]). A row's result does not depend on the batch or the other matrices.
constexpr int kMaxMatvecJobs = 4;
struct MatvecJobs {
    const uint8_t* w[kMaxMatvecJobs] = {};
    int64_t nRows[kMaxMatvecJobs] = {};
    float* y[kMaxMatvecJobs] = {};
    unsigned firstBlock[kMaxMatvecJobs] = {};  // set by the launcher
    int count = 0;
    bool accumulate = false;  // y[m][t][r] += the dot product (a residual add), else y = it
};
void matvecPlanar(DType weight, const MatvecJobs& jobs, int64_t nCols, const ActBuffers& a, int64_t nTokens,
                  cudaStream_t s);
// Whether packWeight stores a (type, nCols) matrix as planar rows: where the planar mat-vec
// takes them (device_quants.cuh: planarRows), unless the environment has HEARTH_CUDA_PLANAR=0.
bool choosePlanarRows(DType t, int64_t nCols);
// Host side: nRows rows of GGUF blocks (src) rewritten as planar rows (dst, the same size).
void toPlanarRows(DType t, const uint8_t* src, int64_t nRows, int64_t nCols, uint8_t* dst);
// Rows one block of matvecPlanar takes for a launch of `rows` rows in all (1 or 4; the
// environment's HEARTH_CUDA_PLANAR_ROWS when set to one of those).
int planarRowsPerBlock(int64_t rows);

// ---- Paged KV cache (ops_attention.cu) ----
struct KvTables {
    uint8_t* const* kBlocks = nullptr;  // device array of device block pointers
    uint8_t* const* vBlocks = nullptr;
    int blockSize = 16;
    int rowStride = 0;  // elements of one token's row (nKvHeads * headDim)
    size_t rowBytes = 0;  // bytes of one token's row
    bool q8 = false;  // Q8_0 rows, else F16
};
void kvWrite(const KvTables& kv, const float* k, const float* v, const int32_t* positions, int64_t nTokens,
             cudaStream_t s);
// Several sequences of one layer in one launch (Backend::kvWriteMany, attentionMany): call c is
// rows [rowStart[c], rowStart[c + 1]) of the launch, with its own block tables; the launch's
// KvTables give the layout they share (its tables unused).
constexpr int kMaxKvCalls = 16;
struct KvCalls {
    int count = 0;
    int rowStart[kMaxKvCalls + 1] = {};
    uint8_t* const* kBlocks[kMaxKvCalls] = {};
    uint8_t* const* vBlocks[kMaxKvCalls] = {};
};
// The writes: each call's K and V rows and positions.
struct KvWriteRows : KvCalls {
    const float* k[kMaxKvCalls] = {};
    const float* v[kMaxKvCalls] = {};
    const int32_t* positions[kMaxKvCalls] = {};
};
void kvWriteRows(const KvTables& kv, const KvWriteRows& rows, cudaStream_t s);
// qkRope (headDim <= 1024) and kvWriteRows(layout, rows) in one launch, for writes whose K rows
// are q/k's rows in order (launch row t of rows = row t of k; positions: the rotation's): each K
// head is written right after its rotation, so K is read once. The bits of the two launches.
// Q8_0 rows need a headDim that is a multiple of 32.
void qkRopeKvWrite(float* q, float* k, int nHeads, int nKvHeads, int headDim, int nRot, const float* qNorm,
                   const float* kNorm, float eps, const int32_t* positions, int64_t nTokens, float freqBase,
                   const float* freqFactors, bool pairwise, float attnFactor, const KvTables& layout,
                   const KvWriteRows& rows, cudaStream_t s);
struct AttentionParams {
    int nHeads = 0, nKvHeads = 0, headDim = 0;
    float scale = 1.0f;
    int slidingWindow = 0;
    float softcap = 0.0f;  // > 0: score = softcap * tanhf(score / softcap) (AttentionShape::softcap)
    int nSplits = 1;  // ceil((max position + 1) / kAttentionSplit)
};
// Positions per split (a multiple of 32: a warp per 32): fixed, so results do not depend on the batch.
constexpr int kAttentionSplit = 128;
// partial: nTokens * nHeads * nSplits * (headDim + 2) floats of scratch.
void attention(const KvTables& kv, const AttentionParams& p, const float* q, const int32_t* positions, int64_t nTokens,
               float* partial, float* out, cudaStream_t s);
// Attention for several sequences (KvCalls): each call's q rows, positions and out rows.
// p.nSplits covers the longest call (a split past a row's position adds nothing: the same bits as
// alone). partial: rowStart[count] * nHeads * nSplits * (headDim + 2) floats.
struct AttentionRows : KvCalls {
    const float* q[kMaxKvCalls] = {};
    const int32_t* positions[kMaxKvCalls] = {};
    float* out[kMaxKvCalls] = {};
};
void attentionRows(const KvTables& kv, const AttentionParams& p, const AttentionRows& rows, float* partial,
                   cudaStream_t s);

// ---- Measurement (ops_bandwidth.cu) ----
// Sums `bytes` (a multiple of 16) of device memory once; returns the milliseconds it took.
float timeRead(const void* data, size_t bytes, float* sink, cudaStream_t s);
// GB/s of weights read by quantizeActivations + the mat-vec packWeight's layout gets (planar rows
// where they apply, unless HEARTH_CUDA_PLANAR=0) for one token over a rows x cols matrix of type t (weights a fixed byte pattern: speed does not depend on values), median of 21 runs.
double timeMatvec(DType t, int64_t rows, int64_t cols);

}  // namespace hearth::cuda
