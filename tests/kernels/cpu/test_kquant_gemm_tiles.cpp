// Tiling edges of the K-quant prefill gemm (kernels/cpu/avx2/gemm_kquants.cpp) for Q4_K, Q5_K
// and Q6_K: every token count from 1 to 9 (each tile width and remainder), rows that are not a
// multiple of the panel height, rows of 256 to 5632 values, saturated quants with the largest
// sub-block scales against activations of ±127 (the int16 partial sums at their bound); every
// (row, token) value must be bitwise ref::vecDot, through gemmPanel and through the threaded
// backend, for the AVX2 tiles and the AVX-VNNI ones (where the CPU has them; the backend takes
// them unless HEARTH_CPU=avx2). Skipped on a CPU without AVX2/FMA/F16C.
#include <QTest>

#include <bit>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
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
};

QTEST_APPLESS_MAIN(TestKquantGemmTiles)
#include "test_kquant_gemm_tiles.moc"
