// Tiling edges of the K-quant prefill gemm (kernels/cpu/avx2/gemm_kquants.cpp) for Q4_K, Q5_K
// and Q6_K: every token count from 1 to 9 (each tile width and remainder), rows that are not a
// multiple of the panel height, rows of 256 to 5632 values, saturated quants with the largest
// sub-block scales against activations of ±127 (the int16 partial sums at their bound); every
// (row, token) value must be bitwise ref::vecDot, through gemmPanel and through the threaded
// backend, for the AVX2 tiles and the AVX-VNNI ones (where the CPU has them; the backend takes
// them unless HEARTH_CPU=avx2), and with the weights repacked at load (packRows: the
// matrix-vector tiles and the panels built from the packed copy, rows unpacked back, the
// backend's packWeight, matmul, matmulMany and embeddingRows), and the AVX-512 VNNI build of the
// repacked matrix-vector tiles where the CPU has it. Skipped on a CPU without AVX2/FMA/F16C.
#include <QTest>

#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "kernels/backend.h"
#include "kernels/cpu/avx2/backend_avx2.h"
#include "kernels/cpu/avx2/kernels.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/reference/quants.h"
#include "tests/support/same_float.h"

using namespace hearth;
using hearth::test::sameFloat;

namespace {

const DType kTypes[] = {DType::Q4_K, DType::Q5_K, DType::Q6_K};

// Random quant and scale bytes with finite half scales (d, and dmin for Q4_K/Q5_K); every
// fourth block saturated: all quant and scale bits set (Q4_K/Q5_K: values 15/31 with scales
// and mins 63; Q6_K: values 31 with scales -1), or, for Q6_K, scales 127 / -128 alternating.
std::vector<uint8_t> weightsOf(DType t, int64_t nRows, int64_t nCols, std::mt19937& rng) {
    std::vector<uint8_t> w(rowBytes(t, nCols) * static_cast<size_t>(nRows));
    std::uniform_int_distribution<int> byte(0, 255);
    for (auto& b : w) b = static_cast<uint8_t>(byte(rng));
    const size_t blockBytes = dtypeInfo(t).blockBytes;
    std::uniform_real_distribution<float> scale(-0.05f, 0.05f);
    for (size_t b = 0; b < w.size() / blockBytes; ++b) {
        uint8_t* block = &w[b * blockBytes];
        if (b % 4 == 1) std::memset(block, 0xff, blockBytes);
        if (t == DType::Q6_K && b % 8 == 5) {
            auto* q6 = reinterpret_cast<BlockQ6_K*>(block);
            std::memset(q6->ql, 0xff, sizeof q6->ql);
            std::memset(q6->qh, 0xff, sizeof q6->qh);
            for (int g = 0; g < 16; ++g) q6->scales[g] = static_cast<int8_t>(g % 2 ? -128 : 127);
        }
        const f16_t h[2] = {b % 9 == 4 ? f16_t{0x7bff} : f32ToF16(scale(rng)), f32ToF16(scale(rng))};
        if (t == DType::Q6_K) std::memcpy(block + offsetof(BlockQ6_K, d), h, 2);
        else std::memcpy(block, h, 4);
    }
    return w;
}

// Activations: normal values, and every third 256-value block ±1 in runs of 64 (quantized
// to ±127: against saturated weights, the int16 partial sums reach their largest magnitude).
std::vector<float> activationsOf(int64_t nTokens, int64_t nCols, std::mt19937& rng) {
    std::vector<float> x(static_cast<size_t>(nTokens * nCols));
    std::normal_distribution<float> normal(0.0f, 1.0f);
    for (size_t i = 0; i < x.size(); ++i) x[i] = (i / 256) % 3 == 1 ? ((i / 64) % 2 ? -1.0f : 1.0f) : normal(rng);
    return x;
}

std::vector<uint8_t> quantized(const std::vector<float>& x, int64_t nTokens, int64_t nCols) {
    const size_t aRow = rowBytes(DType::Q8_K, nCols);
    std::vector<uint8_t> acts(aRow * static_cast<size_t>(nTokens));
    for (int64_t k = 0; k < nTokens; ++k)
        ref::quantizeRow(DType::Q8_K, x.data() + k * nCols, acts.data() + static_cast<size_t>(k) * aRow, nCols);
    return acts;
}

std::string where(DType t, int64_t row, int64_t token, int64_t nTokens, int64_t nCols) {
    return std::string(dtypeInfo(t).name) + " row " + std::to_string(row) + " token " + std::to_string(token) + " of " +
        std::to_string(nTokens) + ", " + std::to_string(nCols) + " columns";
}

}  // namespace

class TestKquantGemmTiles : public QObject {
    Q_OBJECT
private slots:
    void init() {
        if (!cpuFeatures().canRunAvx2()) QSKIP("this CPU (or OS) lacks AVX2, FMA or F16C");
    }

    // gemmPanel directly: 16 rows (two panels), 1..9 tokens, 256 and 1280 columns; the AVX2
    // tiles, and the AVX-VNNI ones where the CPU has them.
    void panelsAreBitwiseVecDot_data() {
        QTest::addColumn<bool>("avxVnni");
        QTest::newRow("avx2") << false;
        QTest::newRow("avx-vnni") << true;
    }
    void panelsAreBitwiseVecDot() {
        QFETCH(bool, avxVnni);
        if (avxVnni && !cpuFeatures().canRunAvxVnni()) QSKIP("this CPU lacks AVX-VNNI");
        std::mt19937 rng(2024);
        const int64_t nRows = 16;
        for (DType t : kTypes)
            for (int64_t nCols : {256, 1280}) {
                const std::vector<uint8_t> w = weightsOf(t, nRows, nCols, rng);
                const size_t wRow = rowBytes(t, nCols), aRow = rowBytes(DType::Q8_K, nCols);
                std::vector<uint64_t> panel(avx2::gemmPanelBytes(t, nCols) / 8 + 8);
                void* scratch =
                    reinterpret_cast<void*>((reinterpret_cast<uintptr_t>(panel.data()) + 31) & ~uintptr_t{31});
                for (int64_t nTokens = 1; nTokens <= 9; ++nTokens) {
                    const std::vector<uint8_t> acts = quantized(activationsOf(nTokens, nCols, rng), nTokens, nCols);
                    std::vector<float> y(static_cast<size_t>(nTokens * nRows), -1.0f);
                    avx2::MatmulArgs m{t, w.data(), wRow, nCols, acts.data(), aRow, nTokens, y.data(), nRows};
                    m.avxVnni = avxVnni;
                    std::vector<uint64_t> info(avx2::gemmActInfoBytes(t, nCols) / 8 * static_cast<size_t>(nTokens) + 1);
                    avx2::gemmActInfo(m, 0, nTokens, info.data());
                    for (int64_t row0 = 0; row0 < nRows; row0 += avx2::kPanelRows)
                        avx2::gemmPanel(m, info.data(), row0, scratch);
                    for (int64_t k = 0; k < nTokens; ++k)
                        for (int64_t r = 0; r < nRows; ++r) {
                            const float want = ref::vecDot(t, w.data() + static_cast<size_t>(r) * wRow,
                                                           acts.data() + static_cast<size_t>(k) * aRow, nCols);
                            QVERIFY2(sameFloat(y[static_cast<size_t>(k * nRows + r)], want),
                                     where(t, r, k, nTokens, nCols).c_str());
                        }
                }
            }
    }

    // matmulRows for 2 and 3 tokens (the small-batch tiles: 8 rows × all the tokens) over an
    // odd row count, ranges that start and end mid-tile (4 × 2 tiles and single values take
    // the rest), y with a stride larger than the row count; rows outside the range untouched.
    void smallBatchTilesAreBitwiseVecDot() {
        std::mt19937 rng(2029);
        const int64_t nRows = 29, yStride = 31;
        struct Range {
            int64_t begin, end;
        };
        for (DType t : kTypes)
            for (int64_t nCols : {256, 1280}) {
                const std::vector<uint8_t> w = weightsOf(t, nRows, nCols, rng);
                const size_t wRow = rowBytes(t, nCols), aRow = rowBytes(DType::Q8_K, nCols);
                for (int64_t nTokens : {2, 3}) {
                    const std::vector<uint8_t> acts = quantized(activationsOf(nTokens, nCols, rng), nTokens, nCols);
                    for (Range range : {Range{0, 29}, Range{5, 26}, Range{3, 11}, Range{8, 24}}) {
                        std::vector<float> y(static_cast<size_t>(nTokens * yStride), -1.0f);
                        const avx2::MatmulArgs m{t,    w.data(), wRow,     nCols,  acts.data(),
                                                 aRow, nTokens,  y.data(), yStride};
                        avx2::matmulRows(m, range.begin, range.end);
                        for (int64_t k = 0; k < nTokens; ++k)
                            for (int64_t r = 0; r < yStride; ++r) {
                                const bool inRange = r >= range.begin && r < range.end;
                                const float want = inRange
                                    ? ref::vecDot(t, w.data() + static_cast<size_t>(r) * wRow,
                                                  acts.data() + static_cast<size_t>(k) * aRow, nCols)
                                    : -1.0f;
                                QVERIFY2(sameFloat(y[static_cast<size_t>(k * yStride + r)], want),
                                         (where(t, r, k, nTokens, nCols) + ", rows [" + std::to_string(range.begin) +
                                          ", " + std::to_string(range.end) + ")")
                                             .c_str());
                            }
                    }
                }
            }
    }

    // The backend (panels for whole groups of 8 rows, the matrix-vector tiles for the rest,
    // 1 and 2 threads): rows not a multiple of 8, up to n_ff columns, each value bitwise the
    // reference, hence equal to the same row and token computed alone (batch invariance).
    void backendMatmulIsBitwiseReference() {
        std::mt19937 rng(7);
        struct Shape {
            int64_t nRows, nCols;
        };
        for (DType t : kTypes)
            for (Shape s : {Shape{13, 256}, Shape{21, 5632}})
                for (int64_t nTokens : {1, 2, 3, 4, 5, 8, 9}) {
                    const std::vector<uint8_t> w = weightsOf(t, s.nRows, s.nCols, rng);
                    const std::vector<float> x = activationsOf(nTokens, s.nCols, rng);
                    const std::vector<uint8_t> acts = quantized(x, nTokens, s.nCols);
                    const size_t wRow = rowBytes(t, s.nCols), aRow = rowBytes(DType::Q8_K, s.nCols);
                    for (int threads : {1, 2}) {
                        auto backend = makeCpuAvx2Backend(threads);
                        std::vector<float> y(static_cast<size_t>(nTokens * s.nRows), -1.0f);
                        backend->matmul(WeightView{t, w.data(), s.nRows, s.nCols}, x.data(), nTokens, y.data());
                        for (int64_t k = 0; k < nTokens; ++k)
                            for (int64_t r = 0; r < s.nRows; ++r) {
                                const float want = ref::vecDot(t, w.data() + static_cast<size_t>(r) * wRow,
                                                               acts.data() + static_cast<size_t>(k) * aRow, s.nCols);
                                QVERIFY2(sameFloat(y[static_cast<size_t>(k * s.nRows + r)], want),
                                         (where(t, r, k, nTokens, s.nCols) + ", threads " + std::to_string(threads))
                                             .c_str());
                            }
                    }
                }
    }

    // Weights repacked at load (packRows): the matrix-vector path (gemmPackedRows) for 1 to 7
    // tokens and 131 (tiles of 4 tokens and a shorter last one), over all rows and over a range
    // that ends in the padded last group, and the panels built from the repacked rows (prefill,
    // the file's rows not read): every value bitwise ref::vecDot, rows outside the range
    // untouched; each row unpacked back equal to the file's bytes. 37 rows: the last group holds
    // 5 rows and 3 zero rows of padding. The AVX2 sums, the AVX-VNNI ones where the CPU has them,
    // and the AVX-512 VNNI tiles (gemm_kquants_avx512vnni.cpp: pairs of groups, a last one alone)
    // where it has those.
    void repackedWeightsAreBitwiseVecDot_data() {
        QTest::addColumn<bool>("avxVnni");
        QTest::addColumn<bool>("zmm");
        QTest::newRow("avx2") << false << false;
        QTest::newRow("avx-vnni") << true << false;
        QTest::newRow("avx512-vnni") << true << true;
    }
    void repackedWeightsAreBitwiseVecDot() {
        QFETCH(bool, avxVnni);
        QFETCH(bool, zmm);
        if (avxVnni && !cpuFeatures().canRunAvxVnni()) QSKIP("this CPU lacks AVX-VNNI");
        if (zmm && !cpuFeatures().canRunAvx512Vnni()) QSKIP("this CPU lacks AVX-512 VNNI (with BW and VL)");
        std::mt19937 rng(2031);
        const int64_t nRows = 37, nCols = 768;
        // Bytes per super-block of 8 rows: the file's, plus the scales (and mins) as a byte each
        // (Q4_K, Q5_K: 32 more) or the padding that keeps Q6_K's vectors aligned (16).
        const std::pair<DType, size_t> kPackedBlockBytes[] = {
            {DType::Q4_K, 8 * 144 + 32}, {DType::Q5_K, 8 * 176 + 32}, {DType::Q6_K, 8 * 210 + 16}};
        for (const auto& [t, blockBytes] : kPackedBlockBytes) {
            const size_t wRow = rowBytes(t, nCols), aRow = rowBytes(DType::Q8_K, nCols);
            const std::vector<uint8_t> w = weightsOf(t, nRows, nCols, rng);
            const size_t packedBytes = avx2::packedBytes(t, nRows, nCols);
            QCOMPARE(packedBytes, static_cast<size_t>(5 * nCols / 256) * blockBytes);
            std::vector<uint64_t> packed(packedBytes / 8 + 4);
            void* aligned = reinterpret_cast<void*>((reinterpret_cast<uintptr_t>(packed.data()) + 31) & ~uintptr_t{31});
            avx2::packRows(t, w.data(), nRows, nCols, 0, 2, aligned);  // in two calls, as a loader may
            avx2::packRows(t, w.data(), nRows, nCols, 2, 5, aligned);
            std::vector<uint8_t> row(wRow);
            for (int64_t r = 0; r < nRows; ++r) {  // each row back as the file had it (tied embeddings)
                avx2::unpackRow(t, aligned, nCols, r, row.data());
                QVERIFY2(std::memcmp(row.data(), w.data() + static_cast<size_t>(r) * wRow, wRow) == 0,
                         (std::string(dtypeInfo(t).name) + " row " + std::to_string(r) + " unpacked").c_str());
            }
            for (int64_t nTokens : {1, 2, 3, 4, 5, 6, 7, 131}) {
                const std::vector<uint8_t> acts = quantized(activationsOf(nTokens, nCols, rng), nTokens, nCols);
                std::vector<uint64_t> info(avx2::gemmActInfoBytes(t, nCols) / 8 * static_cast<size_t>(nTokens) + 1);
                const auto check = [&](const std::vector<float>& y, int64_t rowBegin, int64_t rowEnd,
                                       const char* path) {
                    for (int64_t k = 0; k < nTokens; ++k)
                        for (int64_t r = 0; r < nRows; ++r) {
                            const bool inRange = r >= rowBegin && r < rowEnd;
                            const float want = inRange ? ref::vecDot(t, w.data() + static_cast<size_t>(r) * wRow,
                                                                     acts.data() + static_cast<size_t>(k) * aRow, nCols)
                                                       : -1.0f;
                            QVERIFY2(sameFloat(y[static_cast<size_t>(k * nRows + r)], want),
                                     (std::string(path) + " " + where(t, r, k, nTokens, nCols)).c_str());
                        }
                };
                // Ranges of 5, 4 and 3 groups: for the AVX-512 VNNI tiles, a pair's second group
                // may be the padded last one, or the last group may be alone.
                for (int64_t rowBegin : {0, 8, 16}) {
                    std::vector<float> y(static_cast<size_t>(nTokens * nRows), -1.0f);
                    avx2::MatmulArgs m{t, w.data(), wRow, nCols, acts.data(), aRow, nTokens, y.data(), nRows, avxVnni};
                    m.avx512Vnni = zmm;
                    m.packed = aligned;
                    avx2::gemmActInfo(m, 0, nTokens, info.data());
                    avx2::gemmPackedRows(m, info.data(), rowBegin, nRows);
                    check(y, rowBegin, nRows, zmm ? "packed rows (AVX-512 VNNI)" : "packed rows");
                }
                if (zmm) continue;  // the panels have no AVX-512 VNNI build
                std::vector<float> y(static_cast<size_t>(nTokens * nRows), -1.0f);
                avx2::MatmulArgs m{t, nullptr, wRow, nCols, acts.data(), aRow, nTokens, y.data(), nRows, avxVnni};
                m.packed = aligned;  // the file's rows are not read (weights is null)
                avx2::gemmActInfo(m, 0, nTokens, info.data());
                std::vector<uint64_t> panel(avx2::gemmPanelBytes(t, nCols) / 8 + 8);
                void* scratch =
                    reinterpret_cast<void*>((reinterpret_cast<uintptr_t>(panel.data()) + 31) & ~uintptr_t{31});
                for (int64_t row0 = 0; row0 + 8 <= nRows; row0 += 8) avx2::gemmPanel(m, info.data(), row0, scratch);
                check(y, 0, nRows / 8 * 8, "packed panels");
            }
        }
    }

    // The backend with the weights repacked (packWeight, as a model does at load; HEARTH_REPACK
    // unset): matmul through the packed tiles (1-3 tokens) and the panels with the packed tail
    // (4 and more), matmulMany over two packed matrices, each value bitwise the reference's;
    // embeddingRows of the packed table bitwise the file's rows dequantized.
    void backendRepackedIsBitwiseReference() {
        if (const char* env = std::getenv("HEARTH_REPACK"); env && std::string(env) == "0")
            QSKIP("HEARTH_REPACK=0: the backend keeps the file's layout");
        std::mt19937 rng(11);
        const int64_t nRows = 21, nCols = 1280;
        for (DType t : kTypes) {
            const size_t wRow = rowBytes(t, nCols), aRow = rowBytes(DType::Q8_K, nCols);
            const std::vector<uint8_t> w1 = weightsOf(t, nRows, nCols, rng), w2 = weightsOf(t, nRows - 8, nCols, rng);
            auto backend = makeCpuAvx2Backend(2);
            WeightView v1{t, w1.data(), nRows, nCols}, v2{t, w2.data(), nRows - 8, nCols};
            const std::unique_ptr<WeightBuffer> b1 = backend->packWeight(v1), b2 = backend->packWeight(v2);
            QVERIFY2(b1 && b2 && v1.packed.data && v1.packed.layout != 0, dtypeInfo(t).name);
            QCOMPARE(v1.packed.layout, v2.packed.layout);
            for (int64_t nTokens : {1, 2, 3, 4, 9}) {
                const std::vector<float> x = activationsOf(nTokens, nCols, rng);
                const std::vector<uint8_t> acts = quantized(x, nTokens, nCols);
                std::vector<float> y1(static_cast<size_t>(nTokens * nRows), -1.0f);
                std::vector<float> y2(static_cast<size_t>(nTokens * (nRows - 8)), -1.0f);
                backend->matmul(v1, x.data(), nTokens, y1.data());
                const WeightView both[] = {v1, v2};
                std::vector<float> many1(y1.size(), -1.0f);
                float* const outs[] = {many1.data(), y2.data()};
                backend->matmulMany(both, x.data(), nTokens, outs);
                const auto check = [&](const std::vector<uint8_t>& w, const std::vector<float>& y, int64_t rows,
                                       const char* what) {
                    for (int64_t k = 0; k < nTokens; ++k)
                        for (int64_t r = 0; r < rows; ++r) {
                            const float want = ref::vecDot(t, w.data() + static_cast<size_t>(r) * wRow,
                                                           acts.data() + static_cast<size_t>(k) * aRow, nCols);
                            QVERIFY2(sameFloat(y[static_cast<size_t>(k * rows + r)], want),
                                     (std::string(what) + " " + where(t, r, k, nTokens, nCols)).c_str());
                        }
                };
                check(w1, y1, nRows, "matmul");
                check(w1, many1, nRows, "matmulMany, first");
                check(w2, y2, nRows - 8, "matmulMany, second");
            }
            const int32_t ids[] = {20, 0, 7, 16, 20};
            std::vector<float> rows(std::size(ids) * static_cast<size_t>(nCols)), want(static_cast<size_t>(nCols));
            backend->embeddingRows(v1, ids, std::ssize(ids), rows.data());
            for (size_t i = 0; i < std::size(ids); ++i) {
                ref::dequantizeRow(t, w1.data() + static_cast<size_t>(ids[i]) * wRow, want.data(), nCols);
                QVERIFY2(std::memcmp(want.data(), rows.data() + i * static_cast<size_t>(nCols),
                                     want.size() * sizeof(float)) == 0,
                         (std::string(dtypeInfo(t).name) + " embedding row " + std::to_string(ids[i])).c_str());
            }
        }
    }
};

QTEST_APPLESS_MAIN(TestKquantGemmTiles)
#include "test_kquant_gemm_tiles.moc"
