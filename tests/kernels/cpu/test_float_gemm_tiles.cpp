// Tiling edges of the float-type prefill gemm (kernels/cpu/avx2/gemm_float.cpp) for F32, F16
// and BF16: every token count from 1 to 14 (each tile width and remainder), 128 and 131 (token
// chunks), row lengths that are not multiples of 8 (the masked last group) or span several
// column chunks (accumulators stored and resumed), panels at row offsets, and
// rows whose lanes all round to -0 (a kernel that pads with zero products turns them into
// +0). Each (row, token) value must be bitwise ref::vecDot, from the AVX2 build and from the
// AVX-512 build (gemm_float_avx512.cpp: two rows per ZMM register, panel rows interleaved in
// pairs). Skipped without AVX2/FMA/F16C; the AVX-512 rows without AVX-512F.
#include <QTest>

#include <bit>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/avx2/kernels.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/reference/quants.h"
#include "tests/support/same_float.h"

using namespace hearth;
using hearth::test::sameFloat;

namespace {

// nRows rows of t: normal values times 4, row 5 all -1e-30 (with +1e-30 activations every
// product underflows to -0 for F32 and BF16; F16 has no such tiny values), every 17th value 0.
std::vector<uint8_t> rowsOf(DType t, int64_t nRows, int64_t nCols, std::mt19937& rng, bool weights) {
    std::normal_distribution<float> normal(0.0f, 4.0f);
    std::vector<float> x(static_cast<size_t>(nCols));
    const size_t rowSize = rowBytes(t, nCols);
    std::vector<uint8_t> out(rowSize * static_cast<size_t>(nRows));
    for (int64_t r = 0; r < nRows; ++r) {
        for (size_t i = 0; i < x.size(); ++i) x[i] = i % 17 == 3 ? 0.0f : normal(rng);
        if (r == 5) std::fill(x.begin(), x.end(), weights ? -1e-30f : 1e-30f);
        ref::quantizeRow(t, x.data(), out.data() + static_cast<size_t>(r) * rowSize, nCols);
    }
    return out;
}

}  // namespace

class TestFloatGemmTiles : public QObject {
    Q_OBJECT
private slots:
    void init() {
        if (!cpuFeatures().canRunAvx2()) QSKIP("this CPU (or OS) lacks AVX2, FMA or F16C");
    }

    void everyTileEdgeIsBitwiseVecDot_data() {
        QTest::addColumn<int>("type");
        QTest::addColumn<qint64>("nCols");
        QTest::addColumn<bool>("avx512");
        for (bool avx512 : {false, true})
            for (DType t : {DType::F32, DType::F16, DType::BF16})
                for (qint64 n : {3, 8, 69, 320, 1100})  // 1100: three column chunks, the last ragged
                    QTest::newRow(
                        (std::string(avx512 ? "avx-512 " : "avx2 ") + dtypeInfo(t).name + " cols " + std::to_string(n))
                            .c_str())
                        << int(t) << n << avx512;
    }

    void everyTileEdgeIsBitwiseVecDot() {
        QFETCH(int, type);
        QFETCH(qint64, nCols);
        QFETCH(bool, avx512);
        if (avx512 && !cpuFeatures().canRunAvx512()) QSKIP("this CPU (or OS) lacks AVX-512F");
        const auto t = static_cast<DType>(type);
        std::mt19937 rng(static_cast<unsigned>(2026 + type * 1000 + nCols));
        const int64_t nRows = 16;
        const size_t rowSize = rowBytes(t, nCols);
        const std::vector<uint8_t> w = rowsOf(t, nRows, nCols, rng, true);
        std::vector<int64_t> counts;
        for (int64_t n = 1; n <= 14; ++n) counts.push_back(n);
        counts.push_back(128);
        counts.push_back(131);
        int negativeZeros = 0;
        for (int64_t nTokens : counts) {
            const std::vector<uint8_t> acts = rowsOf(t, nTokens, nCols, rng, false);
            std::vector<float> y(static_cast<size_t>(nRows * nTokens), NAN);
            avx2::MatmulArgs m{t, w.data(), rowSize, nCols, acts.data(), rowSize, nTokens, y.data(), nRows};
            m.avx512 = avx512;
            std::vector<uint64_t> info(avx2::gemmActInfoBytes(t, nCols) * static_cast<size_t>(nTokens) / 8 + 1);
            std::vector<uint64_t> panel(avx2::gemmPanelBytes(t, nCols) / 8 + 8);
            void* aligned = reinterpret_cast<void*>((reinterpret_cast<uintptr_t>(panel.data()) + 31) & ~uintptr_t{31});
            avx2::gemmActInfo(m, 0, nTokens, info.data());
            for (int64_t row0 = 0; row0 < nRows; row0 += avx2::kPanelRows)
                avx2::gemmPanel(m, info.data(), row0, aligned);
            for (int64_t k = 0; k < nTokens; ++k)
                for (int64_t r = 0; r < nRows; ++r) {
                    const float want = ref::vecDot(t, w.data() + static_cast<size_t>(r) * rowSize,
                                                   acts.data() + static_cast<size_t>(k) * rowSize, nCols);
                    const float got = y[static_cast<size_t>(k * nRows + r)];
                    QVERIFY2(std::isfinite(want), "the data keeps every value finite");
                    negativeZeros += std::signbit(want) && want == 0.0f;
                    QVERIFY2(sameFloat(got, want),
                             (std::string("row ") + std::to_string(r) + " token " + std::to_string(k) + " of " +
                              std::to_string(nTokens) + ": got " + std::to_string(got) + " ref " + std::to_string(want))
                                 .c_str());
                }
        }
        if (t != DType::F16 && nCols >= 8) QVERIFY(negativeZeros > 0);  // the all -0 lanes took part
    }
};

QTEST_APPLESS_MAIN(TestFloatGemmTiles)
#include "test_float_gemm_tiles.moc"
