// The AVX2 kernels: activation quantization, dot products and row ranges of the matrix
// product, each bitwise equal to its counterpart in kernels/cpu/reference/quants.h (same
// contract, same summation order). Call only when cpuFeatures().canRunAvx2().
// This header is plain C++ (no intrinsics types), so baseline-compiled code may include it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/cpu/attention_pieces.h"
#include "kernels/dtype.h"

namespace hearth::avx2 {

// As ref::quantizeRow, bit for bit, for Q8_0, Q8_1, Q8_K, F16, BF16 and F32.
void quantizeRow(DType t, const float* src, void* dst, int64_t n);

// As ref::vecDot, bit for bit, for every weight type. actRow must come from quantizeRow (its
// quantized values are in [-127, 127] and a Q8_K row's bsums are the sums of its values).
float vecDot(DType w, const void* weightRow, const void* actRow, int64_t n);

// One slice of y = x · Wᵀ over activations already quantized to ref::vecDotType(wType).
struct MatmulArgs {
    DType wType = DType::F32;
    const void* weights = nullptr;  // [nRows] rows of weightRowBytes
    size_t weightRowBytes = 0;
    int64_t nCols = 0;
    const void* acts = nullptr;  // [nTokens] rows of actRowBytes
    size_t actRowBytes = 0;
    int64_t nTokens = 0;
    float* y = nullptr;  // y[t * yStride + r]
    int64_t yStride = 0;
    bool avxVnni = false;  // VNNI code: 32-block kernels (gemm_q32_vnni.h), K-quant gemm; only if canRunVnni()
    // With avxVnni: the 32-block VNNI kernels' EVEX build (vnni_encoding.h), where the CPU has
    // AVX512_VNNI but not AVX-VNNI (vnniNeedsEvex()); the K-quant gemm's VNNI tiles, VEX only,
    // then stay on AVX2.
    bool vnniEvex = false;
    bool avx512 = false;  // AVX-512 code: the float types' gemm (gemm_float_avx512.cpp); only if canRunAvx512()
    // AVX-512 VNNI code: the repacked 32-block decode tiles (gemm_q32_avx512vnni.h), with
    // avxVnni's activation info; only if canRunAvx512Vnni()
    bool avx512Vnni = false;
    // The rows repacked by packRows (32-block types and K-quants), or null. When set, gemmPanel
    // reads them instead of weights, and gemmPackedRows is the matrix-vector path; the results
    // are the same bits.
    const void* packed = nullptr;
};

// Computes y for rows [rowBegin, rowEnd) and every token. Each (row, token) value is bitwise
// the vecDot of that row and that token, whatever the range and the number of tokens (rows
// and tokens are tiled so that one weight block feeds several tokens, but every value keeps
// its own accumulator in block order): the batch invariance of DESIGN.md.
void matmulRows(const MatmulArgs& args, int64_t rowBegin, int64_t rowEnd);

// Prefill: several tokens against panels of kPanelRows weight rows, unpacked once per panel
// into per-thread scratch so that each activation load feeds the panel's rows (gemm_q32.cpp,
// gemm_kquants.cpp, gemm_float.cpp). Every value is bitwise the vecDot of its row and token, as matmulRows.
constexpr int64_t kPanelRows = 8;
// How far ahead in its stream every build of the repacked decode tiles prefetches the weights
// (the 32-block types' and the K-quants'; gemm_q32_panels.h says why and how it was measured).
constexpr int64_t kDecodeAheadBytes = 2048;
// Bytes of panel scratch (32-byte aligned) for rows of nCols of wType; 0 when wType has no
// panel kernel (use matmulRows).
size_t gemmPanelBytes(DType wType, int64_t nCols);
// Bytes per token of what some types need of the activations besides their values (block
// scales as floats, block sums; 0 when none), and its computation for tokens
// [tokenBegin, tokenEnd) into info (the whole batch's array, 16-byte aligned).
size_t gemmActInfoBytes(DType wType, int64_t nCols);
void gemmActInfo(const MatmulArgs& args, int64_t tokenBegin, int64_t tokenEnd, void* info);
// y for rows [row0, row0 + kPanelRows) and every token of args; actInfo from gemmActInfo.
void gemmPanel(const MatmulArgs& args, const void* actInfo, int64_t row0, void* scratch);

// Weights repacked for decode, by type family: the rows in groups of kPanelRows, each block
// (super-block) of a group stored as the panel's vectors before unpacking, read as one stream,
// and one integer dot product per 4 bytes of 8 rows with no horizontal sums.
//   32-block types (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0; gemm_q32_panels.h, "Packed"): as many bytes
//     as the file's blocks (the last group padded).
//   K-quants (Q4_K, Q5_K, Q6_K; gemm_kquants.cpp, packGroupK): the sub-block scales and mins
//     decoded to a byte each: x1.028 (Q4_K), x1.023 (Q5_K), x1.0095 (Q6_K) the file's bytes.
// packedBytes: the bytes for nRows rows, 0 when the type has no packed layout.
size_t packedBytes(DType w, int64_t nRows, int64_t nCols);
// Groups [groupBegin, groupEnd) of the packed copy of rows [0, nRows) (rows of rowBytes(w, nCols)).
void packRows(DType w, const void* rows, int64_t nRows, int64_t nCols, int64_t groupBegin, int64_t groupEnd,
              void* packed);
// Row `row` of a packed copy back in the file's layout (rowBytes(w, nCols) bytes into out).
void unpackRow(DType w, const void* packed, int64_t nCols, int64_t row, void* out);
// y for rows [rowBegin, rowEnd) (rowBegin a multiple of kPanelRows) and every token of args from
// args.packed, unpacked block by block in registers (no scratch); actInfo from gemmActInfo.
// Each value bitwise matmulRows' (and vecDot's).
void gemmPackedRows(const MatmulArgs& args, const void* actInfo, int64_t rowBegin, int64_t rowEnd);
// The same by family (the functions above hand over to these).
size_t packedBytesQ32(DType w, int64_t nRows, int64_t nCols);
void packRowsQ32(DType w, const void* rows, int64_t nRows, int64_t nCols, int64_t groupBegin, int64_t groupEnd,
                 void* packed);
void unpackRowQ32(DType w, const void* packed, int64_t nCols, int64_t row, void* out);
void gemmPackedRowsQ32(const MatmulArgs& args, const void* actInfo, int64_t rowBegin, int64_t rowEnd);
size_t packedBytesK(DType w, int64_t nRows, int64_t nCols);
void packRowsK(DType w, const void* rows, int64_t nRows, int64_t nCols, int64_t groupBegin, int64_t groupEnd,
               void* packed);
void unpackRowK(DType w, const void* packed, int64_t nCols, int64_t row, void* out);
void gemmPackedRowsK(const MatmulArgs& args, const void* actInfo, int64_t rowBegin, int64_t rowEnd);

// Attention over one layer of the paged F16 or Q8_0 KV cache, for one KV head of the layer:
// bitwise the reference backend's (backend_ref.cpp, attendOneHead[Q8]) for every query,
// whichever queries are computed together.
constexpr int kMaxAttentionHeadDim = 512;
constexpr int kMaxAttentionQueries = 16;
struct AttentionHead {
    const f16_t* const* kBlocks = nullptr;  // as PagedKvLayer (backend.h)
    const f16_t* const* vBlocks = nullptr;
    int blockSize = 16;
    int rowStride = 0;
    int headDim = 0;  // a multiple of 8, at most kMaxAttentionHeadDim
    float scale = 1.0f;
    float softcap = 0.0f;  // AttentionShape::softcap
    int kvOffset = 0;  // this head's KV head times headDim
    int first = 0;  // unused by attendQueries (each query has its own range)
    int nCtx = 0;
    DType type = DType::F16;  // F16 or Q8_0 (then headDim % 32 == 0), as PagedKvLayer::type
    bool kDimMajor = false;  // as PagedKvLayer::kDimMajor (then blockSize % 8 == 0)
    bool vHeadMajor = false;  // PagedKvLayer::vHeadDim == headDim: the block's V head by head
    bool avx512 = false;  // the AVX-512 build of the dimension-major loops may run (canRunAvx512())
    // Prefetches may run on to positions before this one (kAhead, attention_prefetch.h): the end
    // of the range the call reduces, so that a piece's last positions fetch the next piece's.
    int prefetchEnd = 0;
};
// One query head of one token: q [headDim] attends to positions [first, nCtx); out [headDim].
struct AttentionQuery {
    const float* q = nullptr;
    float* out = nullptr;
    int first = 0;
    int nCtx = 0;
};
// One query's reduction over some pieces of its range (kernels/cpu/attention_pieces.h): the
// largest score, the sum of the weights and the V sum, relative to that score.
struct AttentionPartial {
    int count = 0;  // positions reduced; 0: none yet
    float max = 0.0f, sum = 0.0f;
    alignas(32) float acc[kMaxAttentionHeadDim];
};
// scores: scratch of nQueries * (min(kAttentionPiece, max nCtx - min first) + 7) floats.
constexpr int kAttentionScoreSpan = kAttentionPiece + 7;  // per query: one piece, rounded up to chunks of 8
// nQueries (1..kMaxAttentionQueries) queries on the KV head of `head`, K and V read once for
// all of them, piece by piece (attention_pieces.h). The union of their ranges must be
// contiguous (e.g. consecutive positions). partials: scratch of nQueries.
void attendQueries(const AttentionHead& head, const AttentionQuery* queries, int nQueries, float* scores,
                   AttentionPartial* partials);
// The same queries' partials over pieces [pieceLo, pieceHi) only (piece k: positions
// [k * kAttentionPiece, (k + 1) * kAttentionPiece)), each piece's own, unmerged:
// parts[(k - pieceLo) * nQueries + r] (count 0 where query r has no position). One long
// sequence's pieces can so go to several threads and be merged after, in piece order.
void attendQueryPieces(const AttentionHead& head, const AttentionQuery* queries, int nQueries, int pieceLo, int pieceHi,
                       float* scores, AttentionPartial* parts);
// run := run merged with the next piece's part (attention_pieces.h's order; a part with count 0
// changes nothing).
void mergePartial(AttentionPartial& run, const AttentionPartial& part, int headDim);
// out [headDim] = run's V sum over its weight sum.
void finishPartial(const AttentionPartial& run, int headDim, float* out);

// The AVX-512 builds (attention_avx512.cpp) of two inner loops of attention over
// dimension-major K (head.kDimMajor, blockSize % 16 == 0), bit for bit the AVX2 ones: sixteen
// positions per vector instead of eight, sixteen dimensions of V. The scores of n queries
// (q: rows of kMaxAttentionHeadDim F16-rounded floats) over [lo, hi), lo % 16 == 0:
// scores[r * stride + p - lo], stride a multiple of 16 >= hi - lo.
void scoreQueriesAvx512(const AttentionHead& h, const float* q, int n, int lo, int hi, int stride, float* scores);
// acc[r][0, headDim) += weights[r * stride + p - lo] * V row p, for p in [a, b) in order, for
// n queries that share that range (acc rows of kMaxAttentionHeadDim).
void accumulateVSharedAvx512(const AttentionHead& h, int n, int a, int b, const float* weights, int stride, int lo,
                             float* acc);

// Parts of matmulRows by type family (one source file each).
void matmulRowsQ32(const MatmulArgs& args, int64_t rowBegin, int64_t rowEnd);
void matmulRowsK(const MatmulArgs& args, int64_t rowBegin, int64_t rowEnd);
void matmulRowsFloat(const MatmulArgs& args, int64_t rowBegin, int64_t rowEnd);
size_t gemmPanelBytesQ32(int64_t nCols);
size_t gemmActInfoBytesQ32(int64_t nCols);
void gemmActInfoQ32(const MatmulArgs& args, int64_t tokenBegin, int64_t tokenEnd, void* info);
void gemmPanelQ32(const MatmulArgs& args, const void* actInfo, int64_t row0, void* scratch);
size_t gemmPanelBytesFloat(int64_t nCols);
size_t gemmActInfoBytesFloat(int64_t nCols);
void gemmActInfoFloat(const MatmulArgs& args, int64_t tokenBegin, int64_t tokenEnd, void* info);
void gemmPanelFloat(const MatmulArgs& args, const void* actInfo, int64_t row0, void* scratch);
void gemmPanelFloatAvx512(const MatmulArgs& args, const void* actInfo, int64_t row0, void* scratch);
size_t gemmPanelBytesK(int64_t nCols);
size_t gemmActInfoBytesK(DType wType, int64_t nCols);
void gemmActInfoK(const MatmulArgs& args, int64_t tokenBegin, int64_t tokenEnd, void* info);
void gemmPanelK(const MatmulArgs& args, const void* actInfo, int64_t row0, void* scratch);
float vecDotQ32(DType w, const void* weightRow, const void* actRow, int64_t n);
float vecDotK(DType w, const void* weightRow, const void* actRow, int64_t n);
float vecDotFloat(DType w, const void* weightRow, const void* actRow, int64_t n);

}  // namespace hearth::avx2
