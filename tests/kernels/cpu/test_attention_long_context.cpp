// Attention in the shape of a restored conversation's next turn: 21 new tokens (and one decode
// token) over 1,100 cached positions (600 under ASan; the bench restores ~2,100), SmolLM2-like
// (9 heads on 3 KV heads of 64) and Gemma 3-like (4 heads on 1 KV head of 256, with and without a
// 512-position window). The AVX2 path equals the reference bit for bit with 1, 2 and 3 threads,
// each token computed alone equals it computed in the batch, and both are within 1e-5 (relative
// to the largest |V|) of softmax attention in double over the same cache (the F16 running V sum
// used before was 2e-4 to 1e-3 away).
#include <QTest>

#include <algorithm>
#include <bit>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "kernels/backend.h"
#include "kernels/cpu/avx2/backend_avx2.h"
#include "kernels/cpu/cpu_features.h"

using namespace hearth;

namespace {

constexpr int kBlockSize = 16;
#if defined(__SANITIZE_ADDRESS__)
constexpr int kPositions = 600;  // the sanitizer run: the same paths (the 512-position window too), shorter
#else
constexpr int kPositions = 1100;
#endif

// A paged F16 cache of nPositions rows with random K and V (normal, standard deviation 3).
struct RandomCache {
    std::vector<std::vector<f16_t>> kData, vData;
    std::vector<f16_t*> kBlocks, vBlocks;
    PagedKvLayer layer;

    // cpuOrders: K dimension-major and V head by head (the CPU engine's orders); else both token-major.
    RandomCache(int nPositions, int rowStride, int headDim, std::mt19937& rng, bool cpuOrders) {
        std::normal_distribution<float> normal(0.0f, 3.0f);
        const int nBlocks = (nPositions + kBlockSize - 1) / kBlockSize;
        for (int b = 0; b < nBlocks; ++b) {
            kData.emplace_back(static_cast<size_t>(kBlockSize * rowStride));
            vData.emplace_back(static_cast<size_t>(kBlockSize * rowStride));
            for (f16_t& h : kData.back()) h = f32ToF16(normal(rng));
            for (f16_t& h : vData.back()) h = f32ToF16(normal(rng));
        }
        for (int b = 0; b < nBlocks; ++b) kBlocks.push_back(kData[b].data()), vBlocks.push_back(vData[b].data());
        layer = PagedKvLayer{.kBlocks = kBlocks.data(),
                             .vBlocks = vBlocks.data(),
                             .blockSize = kBlockSize,
                             .rowStride = rowStride,
                             .kDimMajor = cpuOrders,
                             .vHeadDim = cpuOrders ? headDim : 0};
    }
    float at(const std::vector<std::vector<f16_t>>& data, int p, int i) const {
        // in the layer's K and V orders
        return f16ToF32(&data == &kData ? *kvKElement(layer, p, i) : *kvVElement(layer, p, i));
    }
};

// Softmax attention in double over the cache for one query head (q rounded to F16, as the
// kernels do): the value the kernels approximate.
std::vector<double> exactHead(const RandomCache& c, const AttentionShape& s, const float* q, int kvHead, int position) {
    const int nCtx = position + 1, first = s.slidingWindow > 0 ? std::max(0, nCtx - s.slidingWindow) : 0;
    std::vector<double> scores;
    for (int p = first; p < nCtx; ++p) {
        double dot = 0;
        for (int i = 0; i < s.headDim; ++i)
            dot += double(f16ToF32(f32ToF16(q[i]))) * c.at(c.kData, p, kvHead * s.headDim + i);
        scores.push_back(dot * s.scale);
    }
    const double maxScore = *std::max_element(scores.begin(), scores.end());
    std::vector<double> out(static_cast<size_t>(s.headDim), 0.0);
    double sum = 0;
    for (int p = first; p < nCtx; ++p) {
        const double w = std::exp(scores[static_cast<size_t>(p - first)] - maxScore);
        sum += w;
        for (int i = 0; i < s.headDim; ++i) out[static_cast<size_t>(i)] += w * c.at(c.vData, p, kvHead * s.headDim + i);
    }
    for (double& x : out) x /= sum;
    return out;
}

bool sameBits(const std::vector<float>& a, const std::vector<float>& b, size_t offset, size_t n) {
    for (size_t i = 0; i < n; ++i)
        if (std::bit_cast<uint32_t>(a[offset + i]) != std::bit_cast<uint32_t>(b[i])) return false;
    return true;
}

}  // namespace

class TestAttentionLongContext : public QObject {
    Q_OBJECT
private slots:
    void restoredTurn_data() {
        QTest::addColumn<int>("nHeads");
        QTest::addColumn<int>("nKvHeads");
        QTest::addColumn<int>("headDim");
        QTest::addColumn<int>("window");
        QTest::addColumn<float>("qScale");  // small: flat softmax over many positions; large: peaked
        QTest::addColumn<int>("first");  // the new tokens' positions: first .. kPositions - 1
        QTest::addColumn<bool>("cpuOrders");  // K dimension-major, V head-major (the CPU engine's orders)
        for (bool dims : {false, true}) {
            const char* k = dims ? ", K dimension-major, V head-major" : "";
            QTest::addRow("smollm2 turn flat%s", k) << 9 << 3 << 64 << 0 << 0.3f << kPositions - 21 << dims;
            QTest::addRow("smollm2 turn peaked%s", k) << 9 << 3 << 64 << 0 << 2.0f << kPositions - 21 << dims;
            QTest::addRow("gemma3 local turn peaked%s", k) << 4 << 1 << 256 << 512 << 2.0f << kPositions - 21 << dims;
            QTest::addRow("gemma3 global turn flat%s", k) << 4 << 1 << 256 << 0 << 0.3f << kPositions - 21 << dims;
            QTest::addRow("smollm2 decode%s", k) << 9 << 3 << 64 << 0 << 2.0f << kPositions - 1 << dims;
        }
    }

    void restoredTurn() {
        QFETCH(int, nHeads);
        QFETCH(int, nKvHeads);
        QFETCH(int, headDim);
        QFETCH(int, window);
        QFETCH(float, qScale);
        QFETCH(int, first);
        QFETCH(bool, cpuOrders);
        std::mt19937 rng(11);
        const int nPositions = kPositions;
        const RandomCache cache(nPositions, nKvHeads * headDim, headDim, rng, cpuOrders);
        const AttentionShape shape{nHeads, nKvHeads, headDim, 1.0f / std::sqrt(float(headDim)), window};
        std::vector<int32_t> positions;
        for (int p = first; p < nPositions; ++p) positions.push_back(p);
        const auto nTokens = static_cast<int64_t>(positions.size());
        const size_t rowSize = static_cast<size_t>(nHeads * headDim);
        std::vector<float> q(static_cast<size_t>(nTokens) * rowSize);
        std::normal_distribution<float> normal(0.0f, qScale);
        for (float& x : q) x = normal(rng);

        std::vector<float> want(q.size());
        makeCpuReferenceBackend()->attention(cache.layer, shape, q.data(), positions.data(), nTokens, want.data());
        double worst = 0;
        for (int64_t t : {int64_t{0}, nTokens / 2, nTokens - 1})  // the first, a middle and the last token
            for (int h = 0; h < nHeads; ++h) {
                const size_t row = static_cast<size_t>(t) * rowSize + static_cast<size_t>(h * headDim);
                const std::vector<double> exact =
                    exactHead(cache, shape, q.data() + row, h / (nHeads / nKvHeads), positions[static_cast<size_t>(t)]);
                for (int i = 0; i < headDim; ++i)
                    worst = std::max(
                        worst, std::abs(double(want[row + static_cast<size_t>(i)]) - exact[static_cast<size_t>(i)]));
            }
        float maxV = 0;
        for (const auto& block : cache.vData)
            for (f16_t h : block) maxV = std::max(maxV, std::abs(f16ToF32(h)));
        qInfo("largest |reference - exact in double| / max |V|: %.3g", worst / maxV);
        QVERIFY2(worst / maxV <= 1e-5, qPrintable(QString("%1").arg(worst / maxV)));

        if (!cpuFeatures().canRunAvx2())
            QSKIP("no AVX2/FMA/F16C: the reference was checked against exact attention only");
        for (int threads : {1, 2, 3}) {
            std::vector<float> got(q.size(), -1.0f);
            makeCpuAvx2Backend(threads)->attention(cache.layer, shape, q.data(), positions.data(), nTokens, got.data());
            QVERIFY2(sameBits(want, got, 0, want.size()), qPrintable(QString("AVX2, %1 threads").arg(threads)));
        }
        auto backend = makeCpuAvx2Backend(2);
        for (int64_t t = 0; t < nTokens; ++t) {
            std::vector<float> alone(rowSize, -1.0f);
            backend->attention(cache.layer, shape, q.data() + static_cast<size_t>(t) * rowSize,
                               &positions[static_cast<size_t>(t)], 1, alone.data());
            QVERIFY2(sameBits(want, alone, static_cast<size_t>(t) * rowSize, rowSize),
                     qPrintable(QString("token %1 alone").arg(t)));
        }
    }
};

QTEST_APPLESS_MAIN(TestAttentionLongContext)
#include "test_attention_long_context.moc"
