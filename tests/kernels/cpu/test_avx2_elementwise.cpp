// GeGLU's shared GELU (kernels/cpu/reference/gelu_tanh.h): close to the exact tanh-form GELU,
// the AVX2 backend's GeGLU bitwise equal to the reference's; SwiGLU's (softmax_exp.h) close to
// silu in double and its AVX2 lanes bitwise the reference's; and the AVX2 backend's row-wise operators, spread over
// its threads, bitwise equal to the reference backend's for every thread count.
#include <QTest>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "kernels/backend.h"
#include "kernels/cpu/avx2/backend_avx2.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/reference/gelu_tanh.h"
#include "kernels/cpu/reference/softmax_exp.h"

using namespace hearth;

namespace {

// The tanh form in double, rounded once. Written as x / (1 + exp(-2u)), the same function:
// 1 + tanh(u) would cancel for negative u, even in double.
float exactGelu(float x) {
    const double d = x;
    return static_cast<float>(d / (1.0 + std::exp(-2.0 * 0.7978845608028654 * (d + 0.044715 * d * d * d))));
}

bool sameBits(const std::vector<float>& a, const std::vector<float>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (std::bit_cast<uint32_t>(a[i]) != std::bit_cast<uint32_t>(b[i])) return false;
    return true;
}

std::vector<float> randomFloats(size_t n, float scale, uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> dist(0.0f, scale);
    std::vector<float> v(n);
    for (float& x : v) x = dist(rng);
    return v;
}

// Inputs across GeGLU's range (gate values of a real model are within a few units), plus edges.
std::vector<float> gateSweep() {
    std::vector<float> xs;
    for (float x = -12.0f; x <= 12.0f; x += 0.000731f) xs.push_back(x);
    for (float x : {0.0f, -0.0f, 1e-30f, -1e-30f, 30.0f, -30.0f, 60.0f, -60.0f, 1e6f, -1e6f, 1e30f, -1e30f,
                    std::numeric_limits<float>::infinity(), std::nanf("")})
        xs.push_back(x);
    return xs;
}

}  // namespace

class TestAvx2Elementwise : public QObject {
    Q_OBJECT
private slots:
    // The table GELU (gelu_tanh.h) is the tanh-form GELU up to two F16 roundings (the gate's,
    // the value's): within 1e-2 relative of the exact function on [-4, 10) (rounding the gate
    // by 2^-9 near x = -3, where gelu changes by ~3x its value per unit, moves it ~0.5%) and 1e-3 absolute
    // further left, where the float formula's 1 + tanh(u) cancels as in llama.cpp; exact
    // beyond the cut-offs.
    void closeToTheTanhForm() {
        double worstRelative = 0, worstAbsolute = 0;
        for (float x = -12.0f; x <= 12.0f; x += 0.000371f) {
            const float want = exactGelu(x), got = gegluOne(x, 1.0f);
            if (x >= 10.0f) QCOMPARE(got, x);
            else if (x <= -10.0f) QCOMPARE(got, 0.0f);
            else if (x >= -4.0f && want != 0.0f)
                worstRelative = std::max(worstRelative, std::fabs(double(got) / want - 1));
            else worstAbsolute = std::max(worstAbsolute, std::fabs(double(got) - want));
        }
        qInfo("largest error: %.3g relative over [-4, 10), %.3g absolute over (-10, -4)", worstRelative, worstAbsolute);
        QVERIFY2(worstRelative <= 1e-2, qPrintable(QString("%1 relative").arg(worstRelative)));
        QVERIFY2(worstAbsolute <= 1e-3, qPrintable(QString("%1 absolute").arg(worstAbsolute)));
    }

    void edges() {
        QCOMPARE(gegluOne(0.0f, 3.0f), 0.0f);
        QCOMPARE(gegluOne(1e6f, 2.0f), 2e6f);
        QCOMPARE(gegluOne(std::numeric_limits<float>::infinity(), 1.0f), std::numeric_limits<float>::infinity());
        QCOMPARE(gegluOne(-1e6f, std::nanf("")), 0.0f);  // cut off before the product, as llama.cpp
        QVERIFY(std::isnan(gegluOne(std::nanf(""), 1.0f)));
        QCOMPARE(gegluOne(1.0f, 1.0f), 0.841308594f);  // F16 of gelu(1) = 0.841192
    }

    // silu(x) * up through softmaxExp: within 4 ulp of silu in double where the result is a
    // normal float (the exponential's 2 ulp, the division's and two products' roundings), the
    // same at the edges as x / (1 + exp(-x)) (0 at 0, x far right, -0 far left, NaN for NaN).
    void swigluCloseToSilu() {
        int64_t worst = 0;
        float worstX = 0;
        for (float x : gateSweep()) {
            if (!std::isfinite(x)) continue;
            const double d = x;
            const float want = static_cast<float>(d / (1.0 + std::exp(-d)));
            if (!(std::fabs(want) >= std::numeric_limits<float>::min())) continue;
            const float got = swigluOne(x, 1.0f);
            const int64_t ulps = std::abs(static_cast<int64_t>(std::bit_cast<int32_t>(got)) -
                                          static_cast<int64_t>(std::bit_cast<int32_t>(want)));
            if (ulps > worst) worst = ulps, worstX = x;
        }
        qInfo("largest error of silu: %lld ulp (x = %.9g)", static_cast<long long>(worst), worstX);
        QVERIFY2(worst <= 4, qPrintable(QString("x = %1: %2 ulp").arg(worstX, 0, 'g', 9).arg(worst)));
        QCOMPARE(swigluOne(0.0f, 3.0f), 0.0f);
        QCOMPARE(swigluOne(1e6f, 2.0f), 2e6f);
        QCOMPARE(swigluOne(std::numeric_limits<float>::infinity(), 1.0f), std::numeric_limits<float>::infinity());
        QCOMPARE(std::bit_cast<uint32_t>(swigluOne(-1e6f, 1.0f)), std::bit_cast<uint32_t>(-0.0f));
        QVERIFY(std::isnan(swigluOne(std::nanf(""), 1.0f)));
        QVERIFY(std::isnan(swigluOne(-std::numeric_limits<float>::infinity(), 1.0f)));  // as -inf / inf
    }

    // The AVX2 backend's geglu and swiglu (spread over threads in blocks) give the reference's bits.
    void avx2GatedActivationsAreBitwiseReference_data() {
        QTest::addColumn<bool>("gelu");
        QTest::newRow("geglu") << true;
        QTest::newRow("swiglu") << false;
    }
    void avx2GatedActivationsAreBitwiseReference() {
        if (!cpuFeatures().canRunAvx2()) QSKIP("no AVX2/FMA/F16C on this CPU");
        QFETCH(bool, gelu);
        auto run = [gelu](Backend& b, const float* g, const float* u, int64_t n, float* out) {
            if (gelu) b.geglu(g, u, n, out);
            else b.swiglu(g, u, n, out);
        };
        std::vector<float> gate = gateSweep();
        if (!gelu)
            for (float x : {-87.5f, -87.0f, -86.9f, 86.9f, 87.0f, 87.5f, 88.7f, 89.0f, -89.0f,
                            -std::numeric_limits<float>::infinity(), -std::nanf("")})
                gate.push_back(x);
        const std::vector<float> up = randomFloats(gate.size(), 1.0f, 7);
        std::vector<float> want(gate.size()), got(gate.size());
        run(*makeCpuReferenceBackend(), gate.data(), up.data(), std::ssize(gate), want.data());
        for (int nThreads : {1, 2, 3}) {
            std::unique_ptr<Backend> fast = makeCpuAvx2Backend(nThreads);
            for (int64_t n : {std::ssize(gate), int64_t{13}, int64_t{8}, int64_t{5}}) {
                std::fill(got.begin(), got.end(), -1.0f);
                run(*fast, gate.data(), up.data(), n, got.data());
                for (int64_t i = 0; i < n; ++i)
                    if (std::bit_cast<uint32_t>(got[size_t(i)]) != std::bit_cast<uint32_t>(want[size_t(i)]))
                        QFAIL(qPrintable(QString("%1 threads, x = %2: %3, reference %4")
                                             .arg(nThreads)
                                             .arg(gate[size_t(i)], 0, 'g', 9)
                                             .arg(got[size_t(i)], 0, 'g', 9)
                                             .arg(want[size_t(i)], 0, 'g', 9)));
                if (n < std::ssize(got)) QCOMPARE(got[size_t(n)], -1.0f);  // nothing written past n
            }
        }
    }

    // The row-wise operators the AVX2 backend spreads over its threads in blocks: same bits as
    // the reference for a prefill-sized batch (many blocks) and a decode-sized one (one block).
    void rowOpsSpreadOverThreadsAreBitwiseReference() {
        if (!cpuFeatures().canRunAvx2()) QSKIP("no AVX2/FMA/F16C on this CPU");
        std::unique_ptr<Backend> ref = makeCpuReferenceBackend();
        for (int nThreads : {2, 3})
            for (int64_t nTokens : {int64_t{1}, int64_t{97}}) {
                std::unique_ptr<Backend> fast = makeCpuAvx2Backend(nThreads);
                const int nHeads = 4, headDim = 256, nEmbd = 640;
                const std::vector<float> x = randomFloats(size_t(nTokens * nEmbd), 2.0f, 1);
                const std::vector<float> w = randomFloats(size_t(nEmbd), 1.0f, 2);
                std::vector<float> a(x.size()), b(x.size());
                ref->rmsNorm(x.data(), w.data(), nTokens, nEmbd, 1e-6f, a.data());
                fast->rmsNorm(x.data(), w.data(), nTokens, nEmbd, 1e-6f, b.data());
                QVERIFY2(sameBits(a, b), "rmsNorm");
                const int64_t oddCols = 37;  // rows not a multiple of 4 floats: the one-row path
                ref->rmsNorm(x.data(), w.data(), nTokens, oddCols, 1e-6f, a.data());
                fast->rmsNorm(x.data(), w.data(), nTokens, oddCols, 1e-6f, b.data());
                QVERIFY2(sameBits(a, b), "rmsNorm, 37 columns");
                a = x, b = x;
                const std::vector<float> y = randomFloats(x.size(), 1.0f, 3);
                ref->add(a.data(), y.data(), std::ssize(a));
                fast->add(b.data(), y.data(), std::ssize(b));
                QVERIFY2(sameBits(a, b), "add");
                ref->swiglu(x.data(), y.data(), std::ssize(a), a.data());
                fast->swiglu(x.data(), y.data(), std::ssize(b), b.data());
                QVERIFY2(sameBits(a, b), "swiglu");
                std::vector<int32_t> positions(static_cast<size_t>(nTokens));
                for (size_t t = 0; t < positions.size(); ++t) positions[t] = int32_t(5 + 3 * t);
                a = randomFloats(size_t(nTokens * nHeads * headDim), 1.0f, 4), b = a;
                ref->rope(a.data(), nTokens, nHeads, headDim, headDim, positions.data(), 10000.0f, RopeStyle::HalfSplit,
                          nullptr);
                fast->rope(b.data(), nTokens, nHeads, headDim, headDim, positions.data(), 10000.0f,
                           RopeStyle::HalfSplit, nullptr);
                QVERIFY2(sameBits(a, b), "rope");
                checkKvWriteAndEmbedding(*ref, *fast, nTokens, positions);
            }
    }

    // RoPE angles come from tables the AVX2 backend keeps between calls: every call must still
    // rotate by its own positions, base and frequency factors, either style, nRot below headDim too.
    void ropeTablesFollowPositionsAndBase() {
        if (!cpuFeatures().canRunAvx2()) QSKIP("no AVX2/FMA/F16C on this CPU");
        std::unique_ptr<Backend> ref = makeCpuReferenceBackend(), fast = makeCpuAvx2Backend(2);
        const std::vector<int32_t> early{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10},
            late{900, 901, 902, 903, 904, 905, 906, 907, 908, 909, 910};
        // Llama 3.1-like factors: the low frequencies slowed down by up to 8, some pairs sped up.
        std::vector<float> factors(32);
        for (size_t i = 0; i < factors.size(); ++i)
            factors[i] = i < 8 ? 1.0f : i < 12 ? 0.5f + 0.25f * float(i - 8) : 8.0f;
        const float* ff = factors.data();
        struct Call {
            const std::vector<int32_t>* positions;
            float base;
            int nRot;
            RopeStyle style;
            const float* factors = nullptr;
        };
        const Call calls[] = {
            {&early, 10000.0f, 64, RopeStyle::HalfSplit}, {&early, 10000.0f, 64, RopeStyle::HalfSplit},
            {&late, 10000.0f, 64, RopeStyle::HalfSplit},  {&late, 1e6f, 64, RopeStyle::HalfSplit},
            {&early, 1e6f, 64, RopeStyle::Pairwise},      {&early, 1e6f, 40, RopeStyle::Pairwise},
            {&late, 10000.0f, 24, RopeStyle::HalfSplit},  {&late, 10000.0f, 64, RopeStyle::HalfSplit},
            {&late, 5e5f, 64, RopeStyle::Pairwise, ff},   {&late, 5e5f, 64, RopeStyle::Pairwise},
            {&late, 5e5f, 64, RopeStyle::Pairwise, ff}};
        const int nHeads = 3, headDim = 64;
        for (const Call& c : calls) {
            const auto nTokens = std::ssize(*c.positions);
            std::vector<float> a = randomFloats(size_t(nTokens * nHeads * headDim), 1.0f, 9), b = a;
            ref->rope(a.data(), nTokens, nHeads, headDim, c.nRot, c.positions->data(), c.base, c.style, c.factors);
            fast->rope(b.data(), nTokens, nHeads, headDim, c.nRot, c.positions->data(), c.base, c.style, c.factors);
            QVERIFY2(sameBits(a, b),
                     qPrintable(QString("position %1, base %2, nRot %3, factors %4")
                                    .arg(c.positions->front())
                                    .arg(c.base)
                                    .arg(c.nRot)
                                    .arg(c.factors != nullptr)));
        }
    }

private:
    void checkKvWriteAndEmbedding(Backend& ref, Backend& fast, int64_t nTokens, const std::vector<int32_t>& positions) {
        const int rowStride = 256, blockSize = 16, nBlocks = (positions.back() + blockSize) / blockSize;
        std::vector<float> k = randomFloats(size_t(nTokens * rowStride), 1.0f, 5), v = randomFloats(k.size(), 1.0f, 6);
        // Values where a half's rounding is delicate: overflow to inf from 65520, subnormal
        // halves, ties, NaN (F16C in the AVX2 backend, f32ToF16 in the reference).
        const float specials[] = {
            65504.0f,      65519.0f,      65520.0f, -70000.0f,      std::numeric_limits<float>::infinity(),
            std::nanf(""), -0.0f,         1e-8f,    2.98023224e-8f, 3e-8f,
            6.1e-5f,       1.00048828125f};
        for (size_t i = 0; i < std::size(specials) && i < k.size(); ++i) k[i * 3 % k.size()] = specials[i];
        // Stores 0 and 1: K rows token-major by the reference and the AVX2 backend; 2 and 3: K
        // dimension-major. Each pair equal bit for bit, and the dimension-major K the same
        // elements as the token-major rows.
        std::vector<std::vector<f16_t>> store[4];
        std::vector<f16_t*> kPtrs[4], vPtrs[4];
        PagedKvLayer layers[4];
        for (int s = 0; s < 4; ++s) {
            store[s].assign(size_t(2 * nBlocks), std::vector<f16_t>(size_t(blockSize * rowStride)));
            for (int i = 0; i < nBlocks; ++i) {
                kPtrs[s].push_back(store[s][size_t(i)].data());
                vPtrs[s].push_back(store[s][size_t(nBlocks + i)].data());
            }
            layers[s] = PagedKvLayer{.kBlocks = kPtrs[s].data(),
                                     .vBlocks = vPtrs[s].data(),
                                     .blockSize = blockSize,
                                     .rowStride = rowStride,
                                     .type = DType::F16,
                                     .kDimMajor = s >= 2};
            (s % 2 == 0 ? ref : fast).kvWrite(layers[s], k.data(), v.data(), positions.data(), nTokens);
        }
        QVERIFY2(store[0] == store[1], "kvWrite");
        QVERIFY2(store[2] == store[3], "kvWrite, K dimension-major");
        for (int64_t t = 0; t < nTokens; ++t)
            for (int c = 0; c < rowStride; ++c)
                QVERIFY2(
                    *kvKElement(layers[2], positions[size_t(t)], c) == *kvKElement(layers[0], positions[size_t(t)], c),
                    "dimension-major K element");
        const std::vector<float> table = randomFloats(size_t(50 * 640), 1.0f, 8);
        const WeightView view{DType::F32, table.data(), 50, 640};
        std::vector<int32_t> ids(static_cast<size_t>(nTokens));
        for (size_t i = 0; i < ids.size(); ++i) ids[i] = int32_t((i * 7) % 50);
        std::vector<float> a(size_t(nTokens * 640)), b(a.size());
        ref.embeddingRows(view, ids.data(), nTokens, a.data());
        fast.embeddingRows(view, ids.data(), nTokens, b.data());
        QVERIFY2(sameBits(a, b), "embeddingRows");
    }
};

QTEST_APPLESS_MAIN(TestAvx2Elementwise)
#include "test_avx2_elementwise.moc"
