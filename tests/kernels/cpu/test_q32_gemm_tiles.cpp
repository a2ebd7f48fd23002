// Tiling edges of the 32-element block prefill gemm (kernels/cpu/avx2/gemm_q32_panels.h) and
// matrix-vector tiles (dot_q32_tiles.h), in their AVX2 and AVX-VNNI builds: every token count
// from 1 to 14 (each tile width and remainder), 128 (a full forward pass) and 131, panels at row
// offsets, ragged row ranges (the 2- and 3-token pair tiles among them), extreme quants and
// scales, and the weights repacked at load (both paths); each (row, token) value must be bitwise
// ref::vecDot. Each build is skipped on a CPU that cannot run it.
#include <QTest>

#include <bit>
#include <cmath>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/avx2/kernels.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/reference/quants.h"
#include "tests/support/same_float.h"
#include "tests/support/scoped_env.h"

using namespace hearth;
using hearth::test::sameFloat;

namespace {

// Random quant bytes; half scales random, sometimes 0 or the largest finite half; some blocks
// saturated: all quant bytes 0xff (the largest unsigned values, Q8_0's -1s) or 0x00 (the
// most negative Q4_0/Q5_0 values), where the int16 partial sums are largest.
std::vector<uint8_t> weightsOf(DType t, int64_t nRows, int64_t nCols, std::mt19937& rng) {
    std::vector<uint8_t> w(rowBytes(t, nCols) * static_cast<size_t>(nRows));
    std::uniform_int_distribution<int> byte(0, 255);
    for (auto& b : w) b = static_cast<uint8_t>(byte(rng));
    const size_t blockBytes = dtypeInfo(t).blockBytes;
    const int halves = t == DType::Q4_1 || t == DType::Q5_1 ? 2 : 1;
    std::uniform_real_distribution<float> scale(-0.05f, 0.05f);
    for (size_t b = 0; b < w.size() / blockBytes; ++b) {
        uint8_t* block = &w[b * blockBytes];
        if (b % 5 == 2) std::memset(block, 0xff, blockBytes);
        if (b % 5 == 4) std::memset(block, 0x00, blockBytes);
        for (int h = 0; h < halves; ++h) {
            const f16_t v = b % 11 == 4 ? f16_t{0x7bff} : b % 13 == 6 ? f16_t{0} : f32ToF16(scale(rng));
            std::memcpy(block + 2 * h, &v, 2);
        }
    }
    return w;
}

// Activations quantized by the reference: normal values, some blocks all ±127 (largest sums).
std::vector<uint8_t> actsOf(DType actType, int64_t nTokens, int64_t nCols, std::mt19937& rng) {
    const size_t aRow = rowBytes(actType, nCols);
    std::vector<uint8_t> acts(aRow * static_cast<size_t>(nTokens));
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> x(static_cast<size_t>(nCols));
    for (int64_t k = 0; k < nTokens; ++k) {
        for (size_t i = 0; i < x.size(); ++i)
            x[i] = (i / 32) % 6 == 1 ? ((k + i / 32) % 2 ? 1.0f : -1.0f) : normal(rng);
        ref::quantizeRow(actType, x.data(), acts.data() + static_cast<size_t>(k) * aRow, nCols);
    }
    return acts;
}

}  // namespace

class TestQ32GemmTiles : public QObject {
    Q_OBJECT
private slots:
    void init() {
        if (!cpuFeatures().canRunAvx2()) QSKIP("this CPU (or OS) lacks AVX2, FMA or F16C");
    }

    void hearthCpuAvx2TurnsVnniOff() {
        {
            const test::ScopedEnv level("HEARTH_CPU", "avx2");
            QVERIFY(!avxVnniEnabled());
        }
        const test::ScopedEnv best("HEARTH_CPU", std::nullopt);
        QCOMPARE(avxVnniEnabled(), cpuFeatures().canRunVnni());
    }

    void everyTileEdgeIsBitwiseVecDot_data() { addVariants(); }

    void everyTileEdgeIsBitwiseVecDot() {
        QFETCH(bool, vnni);
        QFETCH(bool, evex);
        if (const char* lacks = lacking(vnni, evex)) QSKIP(lacks);
        std::mt19937 rng(2026);
        const int64_t nRows = 16, nCols = 320;
        for (DType t : {DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1, DType::Q8_0}) {
            const DType actType = ref::vecDotType(t);
            const size_t wRow = rowBytes(t, nCols), aRow = rowBytes(actType, nCols);
            const std::vector<uint8_t> w = weightsOf(t, nRows, nCols, rng);
            std::vector<int64_t> counts;
            for (int64_t n = 1; n <= 14; ++n) counts.push_back(n);
            counts.push_back(128);
            counts.push_back(131);
            for (int64_t nTokens : counts) {
                const std::vector<uint8_t> acts = actsOf(actType, nTokens, nCols, rng);
                std::vector<float> y(static_cast<size_t>(nTokens * nRows), -1.0f);
                avx2::MatmulArgs m{t, w.data(), wRow, nCols, acts.data(), aRow, nTokens, y.data(), nRows, vnni};
                m.vnniEvex = evex;
                std::vector<uint64_t> info(avx2::gemmActInfoBytes(t, nCols) / 8 * static_cast<size_t>(nTokens) + 1);
                avx2::gemmActInfo(m, 0, nTokens, info.data());
                std::vector<uint64_t> panel(avx2::gemmPanelBytes(t, nCols) / 8 + 8);
                void* aligned =
                    reinterpret_cast<void*>((reinterpret_cast<uintptr_t>(panel.data()) + 31) & ~uintptr_t{31});
                for (int64_t row0 = nRows - 8; row0 >= 0; row0 -= 8) avx2::gemmPanel(m, info.data(), row0, aligned);
                for (int64_t k = 0; k < nTokens; ++k)
                    for (int64_t r = 0; r < nRows; ++r) {
                        const float want = ref::vecDot(t, w.data() + static_cast<size_t>(r) * wRow,
                                                       acts.data() + static_cast<size_t>(k) * aRow, nCols);
                        const float got = y[static_cast<size_t>(k * nRows + r)];
                        QVERIFY2(sameFloat(got, want),
                                 (std::string(dtypeInfo(t).name) + " row " + std::to_string(r) + " token " +
                                  std::to_string(k) + " of " + std::to_string(nTokens))
                                     .c_str());
                    }
            }
        }
    }

    // matmulRows (1-3 tokens: 8-row pair tiles, then 4 × 2 tiles) over rows [3, 21) of 24:
    // tiles, the odd token and single leftover rows.
    void matrixVectorTilesAreBitwiseVecDot_data() { addVariants(); }
    void matrixVectorTilesAreBitwiseVecDot() {
        QFETCH(bool, vnni);
        QFETCH(bool, evex);
        if (const char* lacks = lacking(vnni, evex)) QSKIP(lacks);
        std::mt19937 rng(2027);
        const int64_t nRows = 24, nCols = 320, rowBegin = 3, rowEnd = 21;
        for (DType t : {DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1, DType::Q8_0}) {
            const DType actType = ref::vecDotType(t);
            const size_t wRow = rowBytes(t, nCols), aRow = rowBytes(actType, nCols);
            const std::vector<uint8_t> w = weightsOf(t, nRows, nCols, rng);
            for (int64_t nTokens : {1, 2, 3}) {
                const std::vector<uint8_t> acts = actsOf(actType, nTokens, nCols, rng);
                std::vector<float> y(static_cast<size_t>(nTokens * nRows), -1.0f);
                avx2::MatmulArgs m{t, w.data(), wRow, nCols, acts.data(), aRow, nTokens, y.data(), nRows, vnni};
                m.vnniEvex = evex;
                avx2::matmulRows(m, rowBegin, rowEnd);
                for (int64_t k = 0; k < nTokens; ++k)
                    for (int64_t r = 0; r < nRows; ++r) {
                        const bool inRange = r >= rowBegin && r < rowEnd;
                        const float want = inRange ? ref::vecDot(t, w.data() + static_cast<size_t>(r) * wRow,
                                                                 acts.data() + static_cast<size_t>(k) * aRow, nCols)
                                                   : -1.0f;
                        QVERIFY2(sameFloat(y[static_cast<size_t>(k * nRows + r)], want),
                                 (std::string(dtypeInfo(t).name) + " row " + std::to_string(r) + " token " +
                                  std::to_string(k) + " of " + std::to_string(nTokens))
                                     .c_str());
                    }
            }
        }
    }

    // The small-batch pair tiles (2 and 3 tokens: 8 rows × all the tokens): an odd row count,
    // ranges that start and end mid-tile (the 4 × 2 tiles and single values take the rest),
    // y with a stride larger than the row count; rows outside the range are left untouched.
    void smallBatchTilesAreBitwiseVecDot_data() { addVariants(); }
    void smallBatchTilesAreBitwiseVecDot() {
        QFETCH(bool, vnni);
        QFETCH(bool, evex);
        if (const char* lacks = lacking(vnni, evex)) QSKIP(lacks);
        std::mt19937 rng(2028);
        const int64_t nRows = 37, yStride = 41;
        struct Range {
            int64_t begin, end;
        };
        for (DType t : {DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1, DType::Q8_0})
            for (int64_t nCols : {32, 352}) {
                const DType actType = ref::vecDotType(t);
                const size_t wRow = rowBytes(t, nCols), aRow = rowBytes(actType, nCols);
                const std::vector<uint8_t> w = weightsOf(t, nRows, nCols, rng);
                for (int64_t nTokens : {2, 3}) {
                    const std::vector<uint8_t> acts = actsOf(actType, nTokens, nCols, rng);
                    for (Range range : {Range{0, 37}, Range{5, 34}, Range{3, 11}, Range{13, 37}, Range{8, 24}}) {
                        std::vector<float> y(static_cast<size_t>(nTokens * yStride), -1.0f);
                        avx2::MatmulArgs m{t,    w.data(), wRow,     nCols,   acts.data(),
                                           aRow, nTokens,  y.data(), yStride, vnni};
                        m.vnniEvex = evex;
                        avx2::matmulRows(m, range.begin, range.end);
                        for (int64_t k = 0; k < nTokens; ++k)
                            for (int64_t r = 0; r < yStride; ++r) {
                                const bool inRange = r >= range.begin && r < range.end;
                                const float want = inRange
                                    ? ref::vecDot(t, w.data() + static_cast<size_t>(r) * wRow,
                                                  acts.data() + static_cast<size_t>(k) * aRow, nCols)
                                    : -1.0f;
                                QVERIFY2(sameFloat(y[static_cast<size_t>(k * yStride + r)], want),
                                         (std::string(dtypeInfo(t).name) + " row " + std::to_string(r) + " token " +
                                          std::to_string(k) + " of " + std::to_string(nTokens) + ", rows [" +
                                          std::to_string(range.begin) + ", " + std::to_string(range.end) + "), " +
                                          std::to_string(nCols) + " columns")
                                             .c_str());
                            }
                    }
                }
            }
    }

    // Weights repacked at load (packRowsQ32): the matrix-vector path (gemmPackedRows) for 1 to 7
    // tokens and 131 (token groups of 6 and a shorter last one), over all rows and over a range
    // that ends in the padded last group, and the panels built from the repacked rows (prefill):
    // every value bitwise ref::vecDot, rows outside the range untouched. 37 rows: the last
    // group holds 5 rows and 3 zero rows of padding.
    void repackedWeightsAreBitwiseVecDot_data() { addVariants(); }
    void repackedWeightsAreBitwiseVecDot() {
        QFETCH(bool, vnni);
        QFETCH(bool, evex);
        if (const char* lacks = lacking(vnni, evex)) QSKIP(lacks);
        std::mt19937 rng(2029);
        const int64_t nRows = 37, nCols = 352;
        for (DType t : {DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1, DType::Q8_0}) {
            const DType actType = ref::vecDotType(t);
            const size_t wRow = rowBytes(t, nCols), aRow = rowBytes(actType, nCols);
            const std::vector<uint8_t> w = weightsOf(t, nRows, nCols, rng);
            const size_t packedBytes = avx2::packedBytesQ32(t, nRows, nCols);
            QCOMPARE(packedBytes, static_cast<size_t>(5 * nCols / 32) * 8 * dtypeInfo(t).blockBytes);
            std::vector<uint64_t> packed(packedBytes / 8 + 1);
            avx2::packRowsQ32(t, w.data(), nRows, nCols, 0, 3, packed.data());  // in two calls, as a loader may
            avx2::packRowsQ32(t, w.data(), nRows, nCols, 3, 5, packed.data());
            std::vector<uint8_t> row(wRow);
            for (int64_t r = 0; r < nRows; ++r) {  // each row back as the file had it (tied embeddings)
                avx2::unpackRowQ32(t, packed.data(), nCols, r, row.data());
                QVERIFY2(std::memcmp(row.data(), w.data() + static_cast<size_t>(r) * wRow, wRow) == 0,
                         (std::string(dtypeInfo(t).name) + " row " + std::to_string(r) + " unpacked").c_str());
            }
            for (int64_t nTokens : {1, 2, 3, 4, 5, 6, 7, 131}) {
                const std::vector<uint8_t> acts = actsOf(actType, nTokens, nCols, rng);
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
                                     (std::string(path) + " " + dtypeInfo(t).name + " row " + std::to_string(r) +
                                      " token " + std::to_string(k) + " of " + std::to_string(nTokens))
                                         .c_str());
                        }
                };
                // Ranges of 5, 4 and 3 groups: pairs of groups and a last one alone for the
                // AVX-512 VNNI build, whose second group of a pair may be the padded last one.
                for (const bool zmm : {false, true}) {
                    if (zmm && !(vnni && cpuFeatures().canRunAvx512Vnni())) continue;
                    for (int64_t rowBegin : {0, 8, 16}) {
                        std::vector<float> y(static_cast<size_t>(nTokens * nRows), -1.0f);
                        avx2::MatmulArgs m{t, w.data(), wRow, nCols, acts.data(), aRow, nTokens, y.data(), nRows, vnni};
                        m.vnniEvex = evex;
                        m.avx512Vnni = zmm;
                        m.packed = packed.data();
                        avx2::gemmActInfo(m, 0, nTokens, info.data());
                        avx2::gemmPackedRows(m, info.data(), rowBegin, nRows);
                        check(y, rowBegin, nRows, zmm ? "packed rows (AVX-512 VNNI)" : "packed rows");
                    }
                }
                std::vector<float> y(static_cast<size_t>(nTokens * nRows), -1.0f);
                avx2::MatmulArgs m{t, nullptr, wRow, nCols, acts.data(), aRow, nTokens, y.data(), nRows, vnni};
                m.vnniEvex = evex;
                m.packed = packed.data();  // the file's rows are not read (weights is null)
                avx2::gemmActInfo(m, 0, nTokens, info.data());
                std::vector<uint64_t> panel(avx2::gemmPanelBytes(t, nCols) / 8 + 8);
                void* aligned =
                    reinterpret_cast<void*>((reinterpret_cast<uintptr_t>(panel.data()) + 31) & ~uintptr_t{31});
                for (int64_t row0 = 0; row0 + 8 <= nRows; row0 += 8) avx2::gemmPanel(m, info.data(), row0, aligned);
                check(y, 0, nRows / 8 * 8, "packed panels");
            }
        }
    }

private:
    // The AVX2 build and both encodings of the VNNI builds (vnni_encoding.h), each where the CPU runs it.
    static void addVariants() {
        QTest::addColumn<bool>("vnni");
        QTest::addColumn<bool>("evex");
        QTest::newRow("avx2") << false << false;
        QTest::newRow("avx-vnni") << true << false;
        QTest::newRow("avx512-vnni ymm") << true << true;
    }
    // Why this CPU cannot run the variant, or null.
    static const char* lacking(bool vnni, bool evex) {
        if (vnni && !evex && !cpuFeatures().canRunAvxVnni()) return "this CPU lacks AVX-VNNI";
        if (evex && !cpuFeatures().canRunAvx512Vnni()) return "this CPU lacks AVX512_VNNI (with BW and VL)";
        return nullptr;
    }
};

QTEST_APPLESS_MAIN(TestQ32GemmTiles)
#include "test_q32_gemm_tiles.moc"
