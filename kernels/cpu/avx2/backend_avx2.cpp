// The AVX2 backend and the type dispatch of the AVX2 kernels. This file is built for baseline
// x86-64 (it holds std containers, whose inline code must not be AVX2-compiled, see
// kernels/CMakeLists.txt); it calls the AVX2 kernels only through kernels.h and elementwise.h.
#include "kernels/cpu/avx2/backend_avx2.h"

#include <algorithm>
#include <array>
#include <climits>
#include <span>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>
#if defined(_WIN32)
#include <malloc.h>
#else
#include <sys/mman.h>
#endif

#include "kernels/cpu/attention_pieces.h"
#include "kernels/cpu/avx2/elementwise.h"
#include "kernels/cpu/avx2/gemm_kquants_avx512vnni.h"
#include "kernels/cpu/avx2/gemm_q32_avx512vnni.h"
#include "kernels/cpu/avx2/kernels.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/reference/quants.h"
#include "kernels/cpu/reference/rope_angles.h"
#include "kernels/cpu/thread_pool.h"

namespace hearth {
namespace avx2 {
namespace {

// The kernels that kernels.h's entry points hand one weight type to: those of its family's
// source files (gemm_float.cpp, gemm_q32.cpp, gemm_kquants.cpp and their dot_ twins).
struct TypeKernels {
    float (*vecDot)(DType w, const void* weightRow, const void* actRow, int64_t n);
    void (*matmulRows)(const MatmulArgs& args, int64_t rowBegin, int64_t rowEnd);
    size_t (*gemmPanelBytes)(DType w, int64_t nCols);  // 0: no panel kernel
    size_t (*gemmActInfoBytes)(DType w, int64_t nCols);
    void (*gemmActInfo)(const MatmulArgs& args, int64_t tokenBegin, int64_t tokenEnd, void* info);
    void (*gemmPanel)(const MatmulArgs& args, const void* actInfo, int64_t row0, void* scratch);
    // The layout repacked at load (kernels.h, packedBytes: 0 when the family has none).
    size_t (*packedBytes)(DType w, int64_t nRows, int64_t nCols);
    void (*packRows)(DType w, const void* rows, int64_t nRows, int64_t nCols, int64_t groupBegin, int64_t groupEnd,
                     void* packed);
    void (*unpackRow)(DType w, const void* packed, int64_t nCols, int64_t row, void* out);
    void (*gemmPackedRows)(const MatmulArgs& args, const void* actInfo, int64_t rowBegin, int64_t rowEnd);
};

// The families without a packed layout.
constexpr size_t noPackedBytes(DType, int64_t, int64_t) { return 0; }
void noPackRows(DType, const void*, int64_t, int64_t, int64_t, int64_t, void*) {}
void noUnpackRow(DType, const void*, int64_t, int64_t, void*) {}
void noPackedRows(const MatmulArgs&, const void*, int64_t, int64_t) {}

constexpr TypeKernels kFloatKernels{&vecDotFloat,
                                    &matmulRowsFloat,
                                    [](DType, int64_t nCols) { return gemmPanelBytesFloat(nCols); },
                                    [](DType, int64_t nCols) { return gemmActInfoBytesFloat(nCols); },
                                    &gemmActInfoFloat,
                                    &gemmPanelFloat,
                                    &noPackedBytes,
                                    &noPackRows,
                                    &noUnpackRow,
                                    &noPackedRows};
constexpr TypeKernels kQ32Kernels{&vecDotQ32,
                                  &matmulRowsQ32,
                                  [](DType, int64_t nCols) { return gemmPanelBytesQ32(nCols); },
                                  [](DType, int64_t nCols) { return gemmActInfoBytesQ32(nCols); },
                                  &gemmActInfoQ32,
                                  &gemmPanelQ32,
                                  &packedBytesQ32,
                                  &packRowsQ32,
                                  &unpackRowQ32,
                                  &gemmPackedRowsQ32};
constexpr TypeKernels kKQuantKernels{
    &vecDotK,           &matmulRowsK,  [](DType, int64_t nCols) { return gemmPanelBytesK(nCols); },
    &gemmActInfoBytesK, &gemmActInfoK, &gemmPanelK,
    &packedBytesK,      &packRowsK,    &unpackRowK,
    &gemmPackedRowsK};
// Types that are no weight format (Q8_1, Q8_K: activations only): a zero product, no rows
// written, no panels — what the family kernels answer for a type they do not know.
constexpr TypeKernels kNoKernels{[](DType, const void*, const void*, int64_t) { return 0.0f; },
                                 [](const MatmulArgs&, int64_t, int64_t) {},
                                 [](DType, int64_t) { return size_t{0}; },
                                 [](DType, int64_t) { return size_t{0}; },
                                 [](const MatmulArgs&, int64_t, int64_t, void*) {},
                                 [](const MatmulArgs&, const void*, int64_t, void*) {},
                                 &noPackedBytes,
                                 &noPackRows,
                                 &noUnpackRow,
                                 &noPackedRows};

// Weight type -> its kernels, indexed by the DType value (GGUF's type numbers, BF16 = 30 the largest).
constexpr size_t kNTypeValues = static_cast<size_t>(DType::BF16) + 1;
constexpr std::array<const TypeKernels*, kNTypeValues> kKernelsByType = [] {
    std::array<const TypeKernels*, kNTypeValues> table{};
    table.fill(&kNoKernels);
    for (DType t : {DType::F32, DType::F16, DType::BF16}) table[static_cast<size_t>(t)] = &kFloatKernels;
    for (DType t : {DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1, DType::Q8_0})
        table[static_cast<size_t>(t)] = &kQ32Kernels;
    for (DType t : {DType::Q4_K, DType::Q5_K, DType::Q6_K}) table[static_cast<size_t>(t)] = &kKQuantKernels;
    return table;
}();

const TypeKernels& kernelsOf(DType t) {
    const auto i = static_cast<size_t>(t);
    return i < kNTypeValues ? *kKernelsByType[i] : kNoKernels;
}

}  // namespace

float vecDot(DType w, const void* weightRow, const void* actRow, int64_t n) {
    return kernelsOf(w).vecDot(w, weightRow, actRow, n);
}
void matmulRows(const MatmulArgs& args, int64_t rowBegin, int64_t rowEnd) {
    kernelsOf(args.wType).matmulRows(args, rowBegin, rowEnd);
}
size_t gemmPanelBytes(DType w, int64_t nCols) { return kernelsOf(w).gemmPanelBytes(w, nCols); }
size_t gemmActInfoBytes(DType w, int64_t nCols) { return kernelsOf(w).gemmActInfoBytes(w, nCols); }
void gemmActInfo(const MatmulArgs& args, int64_t tokenBegin, int64_t tokenEnd, void* info) {
    kernelsOf(args.wType).gemmActInfo(args, tokenBegin, tokenEnd, info);
}
void gemmPanel(const MatmulArgs& args, const void* actInfo, int64_t row0, void* scratch) {
    kernelsOf(args.wType).gemmPanel(args, actInfo, row0, scratch);
}
size_t packedBytes(DType w, int64_t nRows, int64_t nCols) { return kernelsOf(w).packedBytes(w, nRows, nCols); }
void packRows(DType w, const void* rows, int64_t nRows, int64_t nCols, int64_t groupBegin, int64_t groupEnd,
              void* packed) {
    kernelsOf(w).packRows(w, rows, nRows, nCols, groupBegin, groupEnd, packed);
}
void unpackRow(DType w, const void* packed, int64_t nCols, int64_t row, void* out) {
    kernelsOf(w).unpackRow(w, packed, nCols, row, out);
}
void gemmPackedRows(const MatmulArgs& args, const void* actInfo, int64_t rowBegin, int64_t rowEnd) {
    kernelsOf(args.wType).gemmPackedRows(args, actInfo, rowBegin, rowEnd);
}

}  // namespace avx2

namespace {

// From this many tokens on, a matmul goes through the panels (gemmPanel) rather than the row
// tiles. Rows in the file's layout: unpacking a panel costs about as much as one token's
// products, so a few tokens already pay for it. Repacked rows unpack in registers, and below
// the panels a step's matrices of one input share one hand-off to the threads (matmulMany), so
// the row tiles stay ahead for longer. Measured on an AMD EPYC (Zen 3, AVX2) host, 2 threads,
// `hearth-cli bench-batch` aggregate tokens/s, panels from 4 tokens against these limits:
// 1.1B Q4_0 4 sequences 46-56 -> 84-89, 8: 63-69 -> 77-92, 12: 73-86 -> 109-111, 16: 67-87 ->
// 95-98; Q8_0 4: 31-35 -> 59-60, 16: 55-59 -> 66; SmolLM2 (Q4_1) 4: 299-305 -> 423-479, 8:
// 346-386 -> 502-533. The K-quant row tiles take 4 tokens at a time; they lead up to 6
// (Q4_K_M 4: 52-56 -> 67-73, 6: 60-64 -> 72-84) and trail from 8 (8: 73-80 -> 72-74, 16:
// 87-92 -> 73-80). A 512-token prefill of the 1.1B Q4_0 is the same either way (86-99 t/s
// through the panels, 98-105 through the row tiles, within the host's noise).
constexpr int64_t kPanelMinTokens = 4;
constexpr int64_t kPanelMinTokensPackedQ32 = 17;
constexpr int64_t kPanelMinTokensPackedK = 8;

// Per-thread panel scratch: 64-byte aligned chunks (the panels' vector stores need 32).
struct alignas(64) ScratchLine {
    unsigned char bytes[64];
};

// Rows are handed to threads in groups of 8, the decode tile height (dot_q32.cpp), so that
// no thread is left with a ragged tile in the middle of the matrix; of 16 where the AVX-512
// VNNI tiles of repacked weights take them (rowGroup).
constexpr int64_t kRowGroup = 8;

// Floats per block of a row-wise or element-wise operator spread over the threads: a block
// costs a few microseconds, many times a dispatch; a decode step's ops are one block.
constexpr int64_t kElementGrain = 8192;
// Tokens per block when building RoPE angles (a token: nRot / 2 cosines and sines from libm).
constexpr int64_t kRopeTokenGrain = 4;

// PackedRows::layout of the rows repacked for the decode tiles (kernels.h, packRows): the
// 32-block types' layout and the K-quants'.
constexpr uint32_t kPackedQ32 = 0x32335150;  // "PQ32"
constexpr uint32_t kPackedK = 0x4b4b5150;  // "PQKK"

uint32_t packedLayoutOf(DType t) {
    switch (t) {
    case DType::Q4_0:
    case DType::Q4_1:
    case DType::Q5_0:
    case DType::Q5_1:
    case DType::Q8_0: return kPackedQ32;
    case DType::Q4_K:
    case DType::Q5_K:
    case DType::Q6_K: return kPackedK;
    default: return 0;
    }
}

// Whether w's packed copy is this backend's (its rows are read from it).
bool isPacked(const WeightView& w) { return w.packed.layout != 0 && w.packed.layout == packedLayoutOf(w.type); }

// The packed copies' memory: chunks of at least kChunkBytes, on 2 MiB boundaries with
// transparent huge pages asked for on Linux, each copy 64-byte aligned after the previous one.
// Decode streams every weight once per token: with 4 KiB pages a small model's hundreds of small
// matrices cost a TLB miss every few KiB (measured: SmolLM2 at 2 threads decoded 17% slower from
// separately allocated copies than from the file's mapping). A chunk is freed with the last copy
// in it; copies are made on the engine thread only.
class WeightArena {
public:
    struct Chunk {
        unsigned char* base = nullptr;
        size_t size = 0, used = 0;
        ~Chunk() {
#if defined(_WIN32)
            _aligned_free(base);
#else
            std::free(base);
#endif
        }
    };
    class Buffer final : public WeightBuffer {
    public:
        explicit Buffer(std::shared_ptr<Chunk> chunk) : chunk_(std::move(chunk)) {}

    private:
        std::shared_ptr<Chunk> chunk_;  // keeps the chunk alive
    };

    // bytes of 64-byte aligned memory (*data), held by the returned buffer; null when out of memory.
    std::unique_ptr<WeightBuffer> allocate(size_t bytes, void** data) {
        const size_t size = (bytes + 63) / 64 * 64;
        if (!current_ || current_->size - current_->used < size) {
            current_ = newChunk(std::max(kChunkBytes, (size + kHuge - 1) / kHuge * kHuge));
            if (!current_) return nullptr;
        }
        *data = current_->base + current_->used;
        current_->used += size;
        return std::make_unique<Buffer>(current_);
    }

private:
    static constexpr size_t kHuge = size_t{2} << 20;
    static constexpr size_t kChunkBytes = size_t{32} << 20;

    static std::shared_ptr<Chunk> newChunk(size_t size) {
#if defined(_WIN32)
        void* p = _aligned_malloc(size, 64);
#else
        void* p = nullptr;
        if (posix_memalign(&p, kHuge, size) != 0) p = nullptr;
#if defined(MADV_HUGEPAGE)
        if (p) madvise(p, size, MADV_HUGEPAGE);  // advice only: without THP the pages stay small
#endif
#endif
        if (!p) return nullptr;
        auto chunk = std::make_shared<Chunk>();
        chunk->base = static_cast<unsigned char*>(p);
        chunk->size = size;
        return chunk;
    }

    std::shared_ptr<Chunk> current_;
};

// HEARTH_REPACK=0 keeps the file's layout (to compare both in one build); anything else repacks.
bool repackEnabled() {
    const char* env = std::getenv("HEARTH_REPACK");
    return env == nullptr || std::strcmp(env, "0") != 0;
}

class CpuAvx2Backend final : public Backend {
public:
    explicit CpuAvx2Backend(int nThreads) : pool_(nThreads), reference_(makeCpuReferenceBackend()) {}

    // Without the thread count: the engine keys KV blocks by backend name, and results do not
    // depend on the thread count.
    std::string name() const override { return "CPU (AVX2)"; }
    bool prefersDimMajorK() const override { return true; }  // no transpose per chunk (attention.cpp)
    bool prefersHeadMajorV() const override { return true; }  // a head's V rows of a block in one run

    // Activations are quantized once per token (in parallel over tokens for a prefill), then
    // each thread computes whole rows for every token: a value never depends on the thread
    // count or on the batch (DESIGN.md, batch invariance).
    void matmul(const WeightView& w, const float* x, int64_t nTokens, float* y) override {
        const DType actType = ref::vecDotType(w.type);
        avx2::MatmulArgs args;
        args.wType = w.type;
        args.weights = w.data;
        args.weightRowBytes = rowBytes(w.type, w.nCols);
        args.nCols = w.nCols;
        args.actRowBytes = rowBytes(actType, w.nCols);
        args.nTokens = nTokens;
        args.y = y;
        args.yStride = w.nRows;
        args.avxVnni = avxVnni_;
        args.vnniEvex = vnniEvex_;
        args.avx512 = avx512_;
        args.avx512Vnni = avx512Vnni_ && nTokens >= zmmMinTokens_;
        args.acts = actType == DType::F32  // F32 weights take the activations as they are
            ? static_cast<const void*>(x)
            : quantizeActivations(actType, x, nTokens, args.actRowBytes, w.nCols);
        if (isPacked(w)) args.packed = w.packed.data;
        if (nTokens >= panelMinTokens(w) && w.nRows >= avx2::kPanelRows && avx2::gemmPanelBytes(w.type, w.nCols) > 0)
            return matmulPanels(args, w.nRows);
        const void* info = args.packed ? actInfoFor(args) : nullptr;
        const int64_t group = rowGroup(args.avx512Vnni, args.packed != nullptr), nGroups = (w.nRows + group - 1) / group;
        pool_.parallelFor(nGroups, [&](int64_t begin, int64_t end) {
            rowRange(args, info, begin * group, std::min(end * group, w.nRows));
        });
    }

    // Matrices of one type, layout and width, fewer tokens than go to the panels (decode and
    // small batches; every batch where the AVX-512 VNNI row tiles take every step): the
    // activations quantized once and every matrix's row groups in one hand-off to the threads,
    // each group as matmul computes it. Anything else: one matmul per matrix.
    void matmulMany(std::span<const WeightView> ws, const float* x, int64_t nTokens,
                    std::span<float* const> ys) override {
        const auto alike = [&](const WeightView& w) {
            return w.type == ws[0].type && w.nCols == ws[0].nCols && w.packed.layout == ws[0].packed.layout;
        };
        const DType actType = ws.empty() ? DType::F32 : ref::vecDotType(ws[0].type);
        if (ws.size() < 2 || nTokens >= panelMinTokens(ws[0]) || actType == DType::F32 ||
            !std::all_of(ws.begin(), ws.end(), alike)) {
            for (size_t i = 0; i < ws.size(); ++i) matmul(ws[i], x, nTokens, ys[i]);
            return;
        }
        avx2::MatmulArgs base;
        base.wType = ws[0].type;
        base.nCols = ws[0].nCols;
        base.weightRowBytes = rowBytes(base.wType, base.nCols);
        base.actRowBytes = rowBytes(actType, base.nCols);
        base.nTokens = nTokens;
        base.avxVnni = avxVnni_;
        base.vnniEvex = vnniEvex_;
        base.avx512 = avx512_;
        base.avx512Vnni = avx512Vnni_ && nTokens >= zmmMinTokens_;
        base.acts = quantizeActivations(actType, x, nTokens, base.actRowBytes, base.nCols);
        const bool packed = isPacked(ws[0]);
        const void* info = packed ? actInfoFor(base) : nullptr;
        // Row groups of all the matrices in a row: group g of matrix i is firstGroup[i] + g.
        std::array<int64_t, 9> firstGroup{};
        const size_t n = std::min<size_t>(ws.size(), firstGroup.size() - 1);
        const int64_t group = rowGroup(base.avx512Vnni, packed);
        for (size_t i = 0; i < n; ++i) firstGroup[i + 1] = firstGroup[i] + (ws[i].nRows + group - 1) / group;
        pool_.parallelFor(firstGroup[n], [&](int64_t begin, int64_t end) {
            for (size_t i = 0; i < n; ++i) {
                const int64_t lo = std::max(begin, firstGroup[i]), hi = std::min(end, firstGroup[i + 1]);
                if (lo >= hi) continue;
                avx2::MatmulArgs args = base;
                args.weights = ws[i].data;
                args.packed = packed ? ws[i].packed.data : nullptr;
                args.y = ys[i];
                args.yStride = ws[i].nRows;
                const int64_t rowBegin = (lo - firstGroup[i]) * group;
                rowRange(args, info, rowBegin, std::min((hi - firstGroup[i]) * group, ws[i].nRows));
            }
        });
        for (size_t i = n; i < ws.size(); ++i) matmul(ws[i], x, nTokens, ys[i]);
    }

    // The rows a thread takes at a time: the AVX-512 VNNI tiles of repacked weights do 16 rows
    // at once and a range that ends 8 rows into a tile pays for 16 (the tile repeats its first
    // 8); with groups of 8, each of the 8 shares of a 576-row matrix (SmolLM2's attention
    // output and down projection) ended on such a half tile: a tenth of its work wasted.
    static int64_t rowGroup(bool avx512Vnni, bool packed) { return avx512Vnni && packed ? 2 * kRowGroup : kRowGroup; }

    // The 32-block types and the K-quants are repacked (kernels.h, packRows), groups of rows
    // spread over the threads; the others keep the file's layout.
    // Pieces of about kPackPieceBytes of the file's rows, each released (released()) once copied:
    // a 262k-row embedding table is never resident twice while it is packed.
    std::unique_ptr<WeightBuffer> packWeight(
        WeightView& w, const std::function<void(std::span<const uint8_t> rows)>& released) override {
        const size_t bytes = repack_ ? avx2::packedBytes(w.type, w.nRows, w.nCols) : 0;
        if (bytes == 0 || w.data == nullptr) return nullptr;
        void* packed = nullptr;
        auto buffer = arena_.allocate(bytes, &packed);
        if (!buffer) return nullptr;  // no memory for a copy: the file's layout still works
        constexpr size_t kPackPieceBytes = size_t{16} << 20;
        const size_t groupBytes = rowBytes(w.type, w.nCols) * avx2::kPanelRows;
        const int64_t nGroups = (w.nRows + avx2::kPanelRows - 1) / avx2::kPanelRows;
        const int64_t piece = std::max<int64_t>(1, static_cast<int64_t>(kPackPieceBytes / groupBytes));
        const auto* rows = static_cast<const uint8_t*>(w.data);
        const size_t rowsBytes = rowBytes(w.type, w.nCols) * static_cast<size_t>(w.nRows);
        for (int64_t first = 0; first < nGroups; first += piece) {
            const int64_t last = std::min(nGroups, first + piece);
            pool_.parallelFor(last - first, [&](int64_t begin, int64_t end) {
                avx2::packRows(w.type, w.data, w.nRows, w.nCols, first + begin, first + end, packed);
            });
            const size_t from = static_cast<size_t>(first) * groupBytes;
            if (released) released({rows + from, std::min(rowsBytes, static_cast<size_t>(last) * groupBytes) - from});
        }
        w.packed = {packed, packedLayoutOf(w.type), bytes};
        return buffer;
    }

    // The row-wise operators below (the reference's code, or AVX2 code with its bits) run over
    // blocks of rows or tokens spread on the threads: run on the engine thread alone they held
    // the workers idle between the matmuls of a prefill.
    void embeddingRows(const WeightView& table, const int32_t* ids, int64_t n, float* out) override {
        if (isPacked(table)) {  // a tied table: its rows back from the packed copy
            const size_t rowSize = rowBytes(table.type, table.nCols);
            forEachBlock(n, grainFor(table.nCols), [&](int64_t begin, int64_t end) {
                std::vector<unsigned char> row(rowSize);
                for (int64_t i = begin; i < end; ++i) {
                    avx2::unpackRow(table.type, table.packed.data, table.nCols, ids[i], row.data());
                    ref::dequantizeRow(table.type, row.data(), out + i * table.nCols, table.nCols);
                }
            });
            return;
        }
        forEachBlock(n, grainFor(table.nCols), [&](int64_t begin, int64_t end) {
            reference_->embeddingRows(table, ids + begin, end - begin, out + begin * table.nCols);
        });
    }
    void rmsNorm(const float* x, const float* w, int64_t nRows, int64_t n, float eps, float* y) override {
        forEachBlock(nRows, grainFor(n), [&](int64_t begin, int64_t end) {
            avx2::rmsNorm(x + begin * n, w, end - begin, n, eps, y + begin * n);
        });
    }
    // The angles come from a table per pass (ropeTable): Q and K, and every layer with the same
    // base, rotate by the same angles, computed once instead of once per call.
    void rope(float* x, int64_t nTokens, int nHeads, int headDim, int nRot, const int32_t* positions, float freqBase,
              RopeStyle style, const float* freqFactors) override {
        const RopeTable& table = ropeTable(positions, nTokens, nRot, freqBase, freqFactors);
        const int64_t tokenFloats = int64_t{nHeads} * headDim, half = nRot / 2;
        forEachBlock(nTokens, grainFor(tokenFloats), [&](int64_t begin, int64_t end) {
            avx2::ropeRotate(x + begin * tokenFloats, end - begin, nHeads, headDim, nRot,
                             table.cosines.data() + begin * half, table.sines.data() + begin * half,
                             style == RopeStyle::HalfSplit);
        });
    }
    // Tokens write disjoint rows of the cache (their positions differ). F16 rows are converted
    // with F16C (the reference's bits), K scattered to its slots when dimension-major; Q8_0 rows
    // by the reference.
    void kvWrite(const PagedKvLayer& layer, const float* k, const float* v, const int32_t* positions,
                 int64_t nTokens) override {
        const int64_t stride = layer.rowStride;
        forEachBlock(nTokens, grainFor(stride), [&](int64_t begin, int64_t end) {
            if (layer.type != DType::F16)
                return reference_->kvWrite(layer, k + begin * stride, v + begin * stride, positions + begin,
                                           end - begin);
            std::vector<f16_t> kRow(layer.kDimMajor ? static_cast<size_t>(stride) : 0);
            for (int64_t t = begin; t < end; ++t) {
                const int block = positions[t] / layer.blockSize, slot = positions[t] % layer.blockSize;
                const int64_t offset = static_cast<int64_t>(slot) * stride;
                if (layer.kDimMajor) {  // element c of the row at c * blockSize + slot
                    avx2::floatsToHalves(k + t * stride, kRow.data(), stride);
                    f16_t* to = layer.kBlocks[block] + slot;
                    for (int64_t c = 0; c < stride; ++c) to[c * layer.blockSize] = kRow[static_cast<size_t>(c)];
                } else {
                    avx2::floatsToHalves(k + t * stride, layer.kBlocks[block] + offset, stride);
                }
                if (layer.vHeadDim > 0) {  // each head's row among that head's rows of the block
                    for (int64_t c = 0; c < stride; c += layer.vHeadDim)
                        avx2::floatsToHalves(v + t * stride + c, kvVElement(layer, positions[t], static_cast<int>(c)),
                                             layer.vHeadDim);
                } else {
                    avx2::floatsToHalves(v + t * stride, layer.vBlocks[block] + offset, stride);
                }
            }
        });
    }
    // Queries (a token's head) are independent. A task takes the query heads of one KV head
    // for a run of consecutive tokens, so that they share one pass over K and V; when that
    // leaves too few tasks for the threads (decode), tasks take fewer heads. Each query is
    // reduced exactly as the reference does whatever its task (attention.cpp).
    void attention(const PagedKvLayer& layer, const AttentionShape& shape, const float* q, const int32_t* positions,
                   int64_t nTokens, float* out) override {
        if (!lanesFit(layer, shape)) return reference_->attention(layer, shape, q, positions, nTokens, out);
        const bool pieces = splitPieces(shape, nTokens, lastPosition(positions, nTokens));
        attentionTasks_.clear();
        planAttention(shape, positions, nTokens, !pieces, 0);
        interleaveTasks();
        reserveAttentionScratch();
        if (pieces) return attendInPieces(layer, shape, q, positions, out);
        const AttentionCall call{&layer, q, positions, nTokens, out};
        runAttentionTasks(std::span(&call, 1), shape);
    }

    // The sequences of a step in one hand-off when together they give the threads enough tasks
    // and none would split its positions into pieces (short contexts: there each call's own
    // hand-off cost as much as its work), or when their ranges are alike (a token tree's runs over
    // one sequence: every task about as long as any other, so the threads' shares even out
    // without pieces); otherwise call by call. Same queries, same bits.
    void attentionMany(std::span<const AttentionCall> calls, const AttentionShape& shape) override {
        bool together = calls.size() > 1, pieces = false;
        int64_t rows = 0;
        int shortest = INT32_MAX, longest = 0;  // the calls' ranges: their last position + 1
        for (const AttentionCall& c : calls) {
            rows += c.nTokens * shape.nKvHeads;
            together = together && lanesFit(*c.layer, shape);
            const int range = lastPosition(c.positions, c.nTokens) + 1;
            pieces = pieces || splitPieces(shape, c.nTokens, range - 1);
            shortest = std::min(shortest, range), longest = std::max(longest, range);
        }
        together = together && (!pieces || longest <= 2 * shortest);
        if (!together || rows < 2 * static_cast<int64_t>(pool_.size())) return Backend::attentionMany(calls, shape);
        attentionTasks_.clear();
        for (size_t c = 0; c < calls.size(); ++c)
            planAttention(shape, calls[c].positions, calls[c].nTokens, false, static_cast<int>(c));
        interleaveTasks();
        reserveAttentionScratch();
        runAttentionTasks(calls, shape);
    }

    void swiglu(const float* gate, const float* up, int64_t n, float* out) override {
        forEachBlock(n, kElementGrain, [&](int64_t begin, int64_t end) {
            avx2::swiglu(gate + begin, up + begin, end - begin, out + begin);
        });
    }
    void geglu(const float* gate, const float* up, int64_t n, float* out) override {
        forEachBlock(n, kElementGrain, [&](int64_t begin, int64_t end) {
            avx2::geglu(gate + begin, up + begin, end - begin, out + begin);
        });
    }
    void add(float* x, const float* y, int64_t n) override {
        forEachBlock(n, kElementGrain,
                     [&](int64_t begin, int64_t end) { reference_->add(x + begin, y + begin, end - begin); });
    }

private:
    // fn(begin, end) over blocks of `grain` items covering [0, n); on the calling thread alone
    // when there is one block (decode), so a small op pays no dispatch.
    template <class Fn>
    void forEachBlock(int64_t n, int64_t grain, Fn&& fn) {
        const int64_t nBlocks = (n + grain - 1) / grain;
        pool_.parallelFor(nBlocks, [&](int64_t begin, int64_t end) { fn(begin * grain, std::min(end * grain, n)); });
    }
    // Rows of rowFloats per block: about kElementGrain floats.
    static int64_t grainFor(int64_t rowFloats) {
        return std::max<int64_t>(1, kElementGrain / std::max<int64_t>(1, rowFloats));
    }

    // The cosines and sines of the RoPE angles of a batch's positions, [nTokens, nRot / 2].
    struct RopeTable {
        float freqBase = 0;
        int nRot = 0;
        const float* freqFactors = nullptr;  // the model's, which outlives the backend's passes
        std::vector<int32_t> positions;
        std::vector<float> cosines, sines;
    };
    // Two tables, for the two bases of models with local and global layers (Gemma 3); the
    // older one is rebuilt when neither matches.
    const RopeTable& ropeTable(const int32_t* positions, int64_t nTokens, int nRot, float freqBase,
                               const float* freqFactors) {
        for (const RopeTable& t : ropeTables_)
            if (t.freqBase == freqBase && t.nRot == nRot && t.freqFactors == freqFactors &&
                std::equal(t.positions.begin(), t.positions.end(), positions, positions + nTokens))
                return t;
        RopeTable& t = ropeTables_[ropeNext_];
        ropeNext_ = (ropeNext_ + 1) % ropeTables_.size();
        t.freqBase = freqBase;
        t.nRot = nRot;
        t.freqFactors = freqFactors;
        t.positions.assign(positions, positions + nTokens);
        const auto half = static_cast<size_t>(nRot / 2);
        t.cosines.resize(static_cast<size_t>(nTokens) * half);
        t.sines.resize(t.cosines.size());
        const float thetaScale = ropeThetaScale(freqBase, nRot);
        forEachBlock(nTokens, kRopeTokenGrain, [&](int64_t begin, int64_t end) {
            for (int64_t k = begin; k < end; ++k)
                ropeAngles(positions[k], thetaScale, nRot, t.cosines.data() + k * half, t.sines.data() + k * half,
                           freqFactors);
        });
        return t;
    }

    struct AttentionTask {
        int64_t token0, token1;  // consecutive positions
        int head0, head1;  // query heads of one KV head
        int call = 0;  // attentionMany: the index of its call
    };
    static int queryFirst(const AttentionShape& shape, int nCtx) {
        return shape.slidingWindow > 0 ? std::max(0, nCtx - shape.slidingWindow) : 0;
    }

    // Whether the AVX2 loops take this head size and V layout (else the reference does).
    static bool lanesFit(const PagedKvLayer& layer, const AttentionShape& shape) {
        return shape.headDim % 8 == 0 && shape.headDim <= avx2::kMaxAttentionHeadDim &&
            (layer.vHeadDim == 0 || layer.vHeadDim == shape.headDim);
    }

    // Adds the tasks of one call (index `call` of attentionMany, 0 for attention) to
    // attentionTasks_ (reused between calls); interleaveTasks orders them after.
    // splitHeads: when the tokens' KV heads are fewer than the threads want, split GQA groups
    // over tasks (each re-reads its KV head); off when the pieces are split instead.
    void planAttention(const AttentionShape& shape, const int32_t* positions, int64_t nTokens, bool splitHeads,
                       int call) {
        const int group = shape.nHeads / shape.nKvHeads;
        const int64_t wanted = pool_.size() > 1 ? 2 * static_cast<int64_t>(pool_.size()) : 1;  // tasks for the threads
        int headsPerTask = group;
        int64_t tokensPerTask = std::max(1, avx2::kMaxAttentionQueries / group);
        if (nTokens * shape.nKvHeads < wanted * tokensPerTask) tokensPerTask = 1;
        if (splitHeads && nTokens * shape.nKvHeads < wanted) {
            const int64_t splits = (wanted + nTokens * shape.nKvHeads - 1) / (nTokens * shape.nKvHeads);
            headsPerTask = static_cast<int>(std::max<int64_t>(1, (group + splits - 1) / splits));
        }
        headsPerTask = std::min(headsPerTask, avx2::kMaxAttentionQueries);
        for (int64_t t0 = 0; t0 < nTokens;) {
            int64_t t1 = t0 + 1;
            while (t1 < nTokens && t1 - t0 < tokensPerTask && positions[t1] == positions[t1 - 1] + 1) ++t1;
            for (int kv = 0; kv < shape.nKvHeads; ++kv)
                for (int h0 = kv * group; h0 < (kv + 1) * group; h0 += headsPerTask)
                    attentionTasks_.push_back({t0, t1, h0, std::min(h0 + headsPerTask, (kv + 1) * group), call});
            t0 = t1;
        }
    }
    // attentionTasks_ over the threads, each task's queries reduced whole (no pieces).
    void runAttentionTasks(std::span<const AttentionCall> calls, const AttentionShape& shape) {
        pool_.parallelFor(static_cast<int64_t>(attentionTasks_.size()), [&](int64_t begin, int64_t end, int thread) {
            avx2::AttentionQuery queries[avx2::kMaxAttentionQueries];
            for (int64_t i = begin; i < end; ++i) {
                const AttentionTask& task = attentionTasks_[static_cast<size_t>(i)];
                const AttentionCall& c = calls[static_cast<size_t>(task.call)];
                const int n = taskQueries(shape, c.q, c.positions, task, c.out, queries);
                avx2::attendQueries(taskHead(*c.layer, shape, task), queries, n,
                                    scores_[static_cast<size_t>(thread)].data(),
                                    partials_[static_cast<size_t>(thread)].data());
            }
        });
    }
    // Each thread's scores and partials, sized for a task's queries.
    void reserveAttentionScratch() {
        scores_.resize(static_cast<size_t>(pool_.size()));
        const size_t need = static_cast<size_t>(avx2::kAttentionScoreSpan) * avx2::kMaxAttentionQueries;
        for (std::vector<float>& sc : scores_)
            if (sc.size() < need) sc.resize(need);
        partials_.resize(static_cast<size_t>(pool_.size()));
        for (std::vector<avx2::AttentionPartial>& p : partials_) p.resize(avx2::kMaxAttentionQueries);
    }
    // Later tokens see more positions: alternate short and long tasks so that every thread's
    // contiguous share of the list holds about the same work.
    void interleaveTasks() {
        const size_t n = attentionTasks_.size();
        zigzag_.resize(n);
        for (size_t i = 0; i < n; ++i) zigzag_[i] = attentionTasks_[i % 2 == 0 ? i / 2 : n - 1 - i / 2];
        attentionTasks_.swap(zigzag_);
    }

    avx2::AttentionHead taskHead(const PagedKvLayer& layer, const AttentionShape& shape,
                                 const AttentionTask& task) const {
        avx2::AttentionHead head;
        head.kBlocks = layer.kBlocks;
        head.vBlocks = layer.vBlocks;
        head.blockSize = layer.blockSize;
        head.rowStride = layer.rowStride;
        head.headDim = shape.headDim;
        head.scale = shape.scale;
        head.softcap = shape.softcap;
        head.kvOffset = (task.head0 / (shape.nHeads / shape.nKvHeads)) * shape.headDim;
        head.type = layer.type;
        head.kDimMajor = layer.kDimMajor;
        head.vHeadMajor = layer.vHeadDim > 0;
        head.avx512 = avx512_;
        return head;
    }

    // The task's queries (token by token, head by head); returns how many.
    static int taskQueries(const AttentionShape& shape, const float* q, const int32_t* positions,
                           const AttentionTask& task, float* out, avx2::AttentionQuery* queries) {
        int n = 0;
        for (int64_t t = task.token0; t < task.token1; ++t)
            for (int h = task.head0; h < task.head1; ++h) {
                const int64_t offset = (t * shape.nHeads + h) * shape.headDim;
                const int nCtx = positions[t] + 1;
                queries[n++] = {q + offset, out + offset, queryFirst(shape, nCtx), nCtx};
            }
        return n;
    }

    // Whether a step's pieces go to several threads: its tokens' KV heads are fewer than the
    // threads want (decode: a token's few KV heads) and its range spans several pieces. Each
    // task's pieces are then spread over the threads (pieceJobs_, small jobs so that the threads'
    // shares even out), their partials merged after in piece order — the same bits as one thread
    // reducing them (attention_pieces.h). Fills pieceJobs_ after planAttention.
    bool splitPieces(const AttentionShape& shape, int64_t nTokens, int maxPos) const {
        if (pool_.size() < 2 || nTokens * shape.nKvHeads >= 2 * static_cast<int64_t>(pool_.size())) return false;
        return maxPos >= kAttentionPiece;
    }
    static int lastPosition(const int32_t* positions, int64_t nTokens) {
        int maxPos = 0;
        for (int64_t t = 0; t < nTokens; ++t) maxPos = std::max(maxPos, positions[t]);
        return maxPos;
    }

    // Jobs in piece-major order (every task's piece k before any task's piece k + perJob), so that
    // a thread's share of the list covers a run of positions for every KV head: it reads each
    // block's K and V whole and in order (one layer's blocks are runs of memory, KvCache) instead
    // of one head's slice of every block, which left the other slices to other threads and the
    // hardware prefetchers guessing. Each task's jobs stay in piece order for the merge.
    void planPieceJobs(const AttentionShape& shape, const int32_t* positions) {
        pieceJobs_.clear();
        const auto nTasks = static_cast<int64_t>(attentionTasks_.size());
        taskPieces_.resize(static_cast<size_t>(nTasks));
        int nPieces = 0;
        for (int64_t i = 0; i < nTasks; ++i) {
            const AttentionTask& task = attentionTasks_[static_cast<size_t>(i)];
            int lo = INT32_MAX, hi = 0;
            for (int64_t t = task.token0; t < task.token1; ++t)
                lo = std::min(lo, queryFirst(shape, positions[t] + 1)), hi = std::max(hi, positions[t] + 1);
            taskPieces_[static_cast<size_t>(i)] = {lo / kAttentionPiece, (hi - 1) / kAttentionPiece + 1};
            nPieces = std::max(nPieces, taskPieces_[static_cast<size_t>(i)].second);
        }
        const int perJob =
            static_cast<int>(std::max<int64_t>(1, (nTasks * nPieces) / (8 * static_cast<int64_t>(pool_.size()))) /
                             std::max<int64_t>(1, nTasks));
        const int step = std::max(1, perJob);
        size_t partial = 0;
        for (int k = 0; k < nPieces; k += step)
            for (int64_t i = 0; i < nTasks; ++i) {
                const AttentionTask& task = attentionTasks_[static_cast<size_t>(i)];
                const auto [k0, k1] = taskPieces_[static_cast<size_t>(i)];
                const int lo = std::max(k, k0), hi = std::min(k + step, k1);
                if (lo >= hi) continue;
                const int n = static_cast<int>((task.token1 - task.token0) * (task.head1 - task.head0));
                pieceJobs_.push_back({static_cast<int>(i), lo, hi, partial});
                partial += static_cast<size_t>(hi - lo) * static_cast<size_t>(n);
            }
        pieceParts_.resize(partial);
    }

    void attendInPieces(const PagedKvLayer& layer, const AttentionShape& shape, const float* q,
                        const int32_t* positions, float* out) {
        planPieceJobs(shape, positions);
        pool_.parallelFor(static_cast<int64_t>(pieceJobs_.size()), [&](int64_t begin, int64_t end, int thread) {
            avx2::AttentionQuery queries[avx2::kMaxAttentionQueries];
            for (int64_t j = begin; j < end; ++j) {
                const PieceJob& job = pieceJobs_[static_cast<size_t>(j)];
                const AttentionTask& task = attentionTasks_[static_cast<size_t>(job.task)];
                const int n = taskQueries(shape, q, positions, task, out, queries);
                avx2::attendQueryPieces(taskHead(layer, shape, task), queries, n, job.pieceLo, job.pieceHi,
                                        scores_[static_cast<size_t>(thread)].data(),
                                        pieceParts_.data() + job.firstPartial);
            }
        });
        // Merge each task's pieces in order: its jobs are consecutive in pieceJobs_.
        pool_.parallelFor(static_cast<int64_t>(attentionTasks_.size()), [&](int64_t begin, int64_t end, int thread) {
            avx2::AttentionQuery queries[avx2::kMaxAttentionQueries];
            avx2::AttentionPartial* run = partials_[static_cast<size_t>(thread)].data();
            for (int64_t i = begin; i < end; ++i) {
                const AttentionTask& task = attentionTasks_[static_cast<size_t>(i)];
                const int n = taskQueries(shape, q, positions, task, out, queries);
                for (int r = 0; r < n; ++r) run[r].count = 0;
                for (const PieceJob& job : pieceJobs_) {
                    if (job.task != static_cast<int>(i)) continue;
                    for (int k = 0; k < job.pieceHi - job.pieceLo; ++k)
                        for (int r = 0; r < n; ++r)
                            avx2::mergePartial(run[r], pieceParts_[job.firstPartial + static_cast<size_t>(k * n + r)],
                                               shape.headDim);
                }
                for (int r = 0; r < n; ++r) avx2::finishPartial(run[r], shape.headDim, queries[r].out);
            }
        });
    }

    // Whole panels split over the threads (each unpacks its panel once and runs every token
    // through it); the last nRows % kPanelRows rows take the matrix-vector tiles.
    void matmulPanels(const avx2::MatmulArgs& args, int64_t nRows) {
        const void* info = actInfoFor(args);
        const size_t nLines =
            (avx2::gemmPanelBytes(args.wType, args.nCols) + sizeof(ScratchLine) - 1) / sizeof(ScratchLine);
        panels_.resize(static_cast<size_t>(pool_.size()));
        for (std::vector<ScratchLine>& p : panels_)
            if (p.size() < nLines) p.resize(nLines);
        const int64_t nPanels = nRows / avx2::kPanelRows;
        pool_.parallelFor(nPanels, [&](int64_t begin, int64_t end, int thread) {
            for (int64_t p = begin; p < end; ++p)
                avx2::gemmPanel(args, info, p * avx2::kPanelRows, panels_[static_cast<size_t>(thread)].data());
        });
        if (nPanels * avx2::kPanelRows < nRows) rowRange(args, info, nPanels * avx2::kPanelRows, nRows);
    }

    // What the panels and the repacked tiles need of the activations besides their values
    // (gemmActInfo), for every token of args, in actInfo_; null when the type needs none.
    // Tokens go to the threads in blocks of about kElementGrain activations, so a small batch
    // (several sequences decoding, a speculative verification) is done on the calling thread
    // rather than paying a hand-off for each of its matrix products (with one token a task,
    // this and the activations' quantization were two more hand-offs per product: SmolLM2's
    // 2 sequences went from 1.48-1.54x one after another to 1.62-1.70x without them, together
    // with rowGroup).
    const void* actInfoFor(const avx2::MatmulArgs& args) {
        const size_t perToken = avx2::gemmActInfoBytes(args.wType, args.nCols);
        if (perToken == 0) return nullptr;
        actInfo_.resize((perToken * static_cast<size_t>(args.nTokens) + sizeof(ScratchLine) - 1) / sizeof(ScratchLine));
        forEachBlock(args.nTokens, grainFor(args.nCols),
                     [&](int64_t b, int64_t e) { avx2::gemmActInfo(args, b, e, actInfo_.data()); });
        return actInfo_.data();
    }

    // Rows [rowBegin, rowEnd) of one matrix for every token, without panels: from the repacked
    // copy when args has one (info from actInfoFor), else from the file's rows.
    static void rowRange(const avx2::MatmulArgs& args, const void* info, int64_t rowBegin, int64_t rowEnd) {
        if (args.packed) avx2::gemmPackedRows(args, info, rowBegin, rowEnd);
        else avx2::matmulRows(args, rowBegin, rowEnd);
    }

    // Returns [nTokens] rows of actType in scratch_, which only grows (no allocation once the
    // largest batch has been seen). Blocks of tokens as actInfoFor.
    const void* quantizeActivations(DType actType, const float* x, int64_t nTokens, size_t actRowBytes, int64_t nCols) {
        const size_t need = actRowBytes * static_cast<size_t>(nTokens);
        if (scratch_.size() < need) scratch_.resize(need);
        unsigned char* out = scratch_.data();
        const auto quantizeTokens = [&](int64_t begin, int64_t end) {
            for (int64_t t = begin; t < end; ++t)
                avx2::quantizeRow(actType, x + t * nCols, out + static_cast<size_t>(t) * actRowBytes, nCols);
        };
        forEachBlock(nTokens, grainFor(nCols), quantizeTokens);
        return out;
    }

    ThreadPool pool_;
    std::unique_ptr<Backend> reference_;
    const bool avxVnni_ = avxVnniEnabled();  // chosen once (HEARTH_CPU=avx2 turns it off); same bits either way
    const bool vnniEvex_ = avxVnni_ && cpuFeatures().vnniNeedsEvex();  // their EVEX build (Zen 4: AVX512_VNNI only)
    const bool avx512_ = avx512Enabled();  // likewise
    const bool avx512Vnni_ = avx512_ && avxVnni_ && cpuFeatures().canRunAvx512Vnni();  // likewise
    // Steps from which the AVX-512 VNNI tiles take a repacked matrix. Where the CPU has only the
    // EVEX encoding (AMD Zen 4, which runs 512-bit operations as two halves) they read weights
    // from memory more slowly than the YMM VNNI tiles for 1 to 3 tokens and faster from 4
    // (gemm_q32_bench / gemm_kquant_bench from memory, one thread: Q4_1 1 token 16-17 against
    // 20 GB/s, Q8_0 13 against 16, Q4_K 10 against 15 (AVX2 tiles); 4 tokens equal for Q4_1,
    // Q4_K 9.6 against 7.8); SmolLM2 decoded 199-231 tokens/s on them against 252-366 on the
    // YMM tiles. Elsewhere (Intel) they take every step.
    const int64_t zmmMinTokens_ = vnniEvex_ ? 4 : 1;
    // Tokens from which a matrix goes through the panels (prefill) rather than the row tiles. The
    // AVX-512 VNNI row tiles of repacked weights (16 rows per register, rows outer and groups of
    // tokens inner, so each tile's weights are read once) outrun the AVX-VNNI panels at every
    // batch size measured, 1 to 512 tokens, so they take every step: a prefill of 512 tokens of
    // the 1.1B Q4_0 went from 209-218 to 273-302 tokens/s, of its Q4_K_M from 206-213 to
    // 223-227 (2 threads), and 8 sequences decoding together from 2.5x one to 4.0x.
    int64_t panelMinTokens(const WeightView& w) const {
        const bool zmmRows = avx512Vnni_ && isPacked(w) &&
            (avx2::packedRowsQ32Avx512VnniHandles(w.type) || avx2::packedRowsKAvx512VnniHandles(w.type));
        if (zmmRows) return INT64_MAX;
        if (!isPacked(w)) return kPanelMinTokens;
        return packedLayoutOf(w.type) == kPackedQ32 ? kPanelMinTokensPackedQ32 : kPanelMinTokensPackedK;
    }
    const bool repack_ = repackEnabled();
    WeightArena arena_;  // the packed copies (packWeight)
    std::vector<unsigned char> scratch_;
    std::array<RopeTable, 2> ropeTables_;
    size_t ropeNext_ = 0;
    std::vector<std::vector<float>> scores_;  // per thread: one task's attention scores
    std::vector<std::vector<avx2::AttentionPartial>> partials_;  // per thread: one task's running partials
    struct PieceJob {
        int task;  // index in attentionTasks_
        int pieceLo, pieceHi;  // its pieces
        size_t firstPartial;  // its partials in pieceParts_: [piece][query]
    };
    std::vector<PieceJob> pieceJobs_;
    std::vector<std::pair<int, int>> taskPieces_;  // [task] -> its pieces [first, end)
    std::vector<avx2::AttentionPartial> pieceParts_;
    std::vector<AttentionTask> attentionTasks_, zigzag_;
    std::vector<std::vector<ScratchLine>> panels_;  // per thread: one unpacked weight panel
    std::vector<ScratchLine> actInfo_;  // [nTokens] rows of gemmActInfo
};

}  // namespace

std::unique_ptr<Backend> makeCpuAvx2Backend(int nThreads) { return std::make_unique<CpuAvx2Backend>(nThreads); }

}  // namespace hearth
