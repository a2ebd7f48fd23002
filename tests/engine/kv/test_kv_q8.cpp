// The Q8_0 KV element type: memory per token, refusal of rows that are not whole Q8_0 blocks,
// AVX2 attention over a Q8_0 cache bitwise equal to the reference's, both close to exact
// attention over the dequantized K/V, and end-to-end generation on a tiny random Llama (head
// size 32) with a Q8_0 cache close to the F16 one (the first 16 greedy tokens equal; next-token
// distributions within a total variation distance of 0.05 on average, 0.3 at worst).
#include <QTemporaryDir>
#include <QtTest>

#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "kernels/backend.h"
#include "kernels/cpu/avx2/backend_avx2.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/reference/quants.h"
#include "tests/support/tiny_llama.h"

using namespace hearth;

namespace {

// A paged layer of random K/V in Q8_0 (quantized from normal floats), and those floats.
struct Q8Layer {
    std::vector<std::vector<uint8_t>> k, v;
    std::vector<f16_t*> kPtr, vPtr;
    PagedKvLayer layer;
    Q8Layer(std::mt19937& rng, int nBlocks, int blockSize, int rowStride) {
        std::normal_distribution<float> normal(0.0f, 2.0f);
        const size_t rowSize = rowBytes(DType::Q8_0, rowStride);
        std::vector<float> row(static_cast<size_t>(rowStride));
        for (int b = 0; b < nBlocks; ++b)
            for (auto* data : {&k, &v}) {
                data->emplace_back(rowSize * static_cast<size_t>(blockSize));
                for (int s = 0; s < blockSize; ++s) {
                    for (float& x : row) x = normal(rng);
                    ref::quantizeRow(DType::Q8_0, row.data(), data->back().data() + rowSize * static_cast<size_t>(s),
                                     rowStride);
                }
            }
        for (int b = 0; b < nBlocks; ++b) {
            kPtr.push_back(reinterpret_cast<f16_t*>(k[static_cast<size_t>(b)].data()));
            vPtr.push_back(reinterpret_cast<f16_t*>(v[static_cast<size_t>(b)].data()));
        }
        layer = PagedKvLayer{kPtr.data(), vPtr.data(), blockSize, rowStride, DType::Q8_0};
    }
    // Element i of the row at position p, dequantized.
    float at(bool isK, int p, int i) const {
        const auto& blocks = isK ? k : v;
        const uint8_t* row = blocks[static_cast<size_t>(p / layer.blockSize)].data() +
            kvRowBytes(layer) * static_cast<size_t>(p % layer.blockSize);
        float out[kQK];
        ref::dequantizeRow(DType::Q8_0, row + static_cast<size_t>(i / kQK) * sizeof(BlockQ8_0), out, kQK);
        return out[i % kQK];
    }
};

// Softmax attention in double over the dequantized cache: what Q8_0 attention approximates.
std::vector<double> exactAttention(const Q8Layer& kv, const AttentionShape& shape, const float* q, int position) {
    const int nCtx = position + 1, first = shape.slidingWindow > 0 ? std::max(0, nCtx - shape.slidingWindow) : 0;
    std::vector<double> out(static_cast<size_t>(shape.nHeads * shape.headDim), 0.0);
    for (int h = 0; h < shape.nHeads; ++h) {
        const int kvOffset = h / (shape.nHeads / shape.nKvHeads) * shape.headDim;
        std::vector<double> w;
        for (int p = first; p < nCtx; ++p) {
            double dot = 0;
            for (int i = 0; i < shape.headDim; ++i)
                dot += double(q[h * shape.headDim + i]) * kv.at(true, p, kvOffset + i);
            w.push_back(dot * shape.scale);
        }
        const double m = *std::max_element(w.begin(), w.end());
        double sum = 0;
        for (double& x : w) sum += (x = std::exp(x - m));
        for (int p = first; p < nCtx; ++p)
            for (int i = 0; i < shape.headDim; ++i)
                out[static_cast<size_t>(h * shape.headDim + i)] +=
                    w[static_cast<size_t>(p - first)] / sum * kv.at(false, p, kvOffset + i);
    }
    return out;
}

constexpr int kSameTokens = 16;
// This random model attends sharply (scores of several units), so quantizing q and K moves
// near-ties: the bounds are loose on the worst step and tight on the mean.
constexpr double kMeanTvTolerance = 0.05;
constexpr double kWorstTvTolerance = 0.3;

bool sameFloat(float a, float b) {
    return std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b) || (std::isnan(a) && std::isnan(b));
}

struct Run {
    std::vector<TokenId> tokens;
    std::vector<std::vector<double>> probs;  // softmax of each step's logits, by token id
};

std::vector<double> softmaxById(const std::vector<std::pair<TokenId, float>>& logits) {
    std::vector<double> p(logits.size());
    double maxLogit = -INFINITY, sum = 0;
    for (const auto& [id, l] : logits) maxLogit = std::max(maxLogit, double(l));
    for (const auto& [id, l] : logits) sum += (p[static_cast<size_t>(id)] = std::exp(double(l) - maxLogit));
    for (double& x : p) x /= sum;
    return p;
}

Run greedyRun(const std::string& path, KvElementType type, const std::vector<TokenId>& prompt, int n) {
    EngineOptions options;
    options.kvType = type;
    auto engine = Engine::load(path, options);
    if (!engine) qFatal("%s", engine.error().message.c_str());
    GenerateRequest req;
    req.prompt = prompt;
    req.maxTokens = n;
    req.sampling.temperature = 0;
    req.sampling.logitBias.push_back({2, -std::numeric_limits<float>::infinity()});  // no </s>: full length
    req.nTopLogits = (*engine)->config().nVocab;  // all of them
    auto result = (*engine)->generate(req, [](TokenId, std::string_view) { return true; });
    if (!result) qFatal("%s", result.error().message.c_str());
    Run run{result->tokens, {}};
    for (const auto& logits : result->topLogits) run.probs.push_back(softmaxById(logits));
    return run;
}

}  // namespace

class TestKvQ8 : public QObject {
    Q_OBJECT
private slots:
    void memoryPerTokenIs34Of64() {
        KvLayout layout{4, 2 * 64, 16, KvElementType::F16};
        auto f16 = KvCache::create(layout, 256);
        layout.elementType = KvElementType::Q8_0;
        auto q8 = KvCache::create(layout, 256);
        QVERIFY(f16 && q8);
        // Per token and layer: K and V rows of 128 elements, 2 bytes each or 4 blocks of 34 bytes.
        QCOMPARE((*f16)->bytesPerBlock() / 16, size_t{4 * 2 * 128 * 2});
        QCOMPARE((*q8)->bytesPerBlock() / 16, size_t{4 * 2 * 4 * 34});
        QVERIFY(describe(layout) != describe(KvLayout{4, 128, 16, KvElementType::F16}));  // chain roots differ
    }

    void refusesRowsThatAreNotWholeBlocks() {
        auto bad = KvCache::create(KvLayout{2, 48, 16, KvElementType::Q8_0}, 64);
        QVERIFY(!bad);
        QCOMPARE(bad.error().code, ErrorCode::InvalidArgument);
        QVERIFY(QString::fromStdString(bad.error().message).contains("multiple of 32"));
        QVERIFY(parseKvElementType("q8_0") == KvElementType::Q8_0);
        QVERIFY(!parseKvElementType("q4_0"));
    }

    // The write path stores what ref::quantizeRow makes of the row, and attention reads it back.
    void writeThenAttendOneToken() {
        KvLayout layout{1, 32, 16, KvElementType::Q8_0};
        auto cache = KvCache::create(layout, 32);
        QVERIFY(cache);
        KvSequence seq;
        QVERIFY((*cache)->reserve(seq, 1));
        std::vector<float> k(32), v(32), q(32, 0.5f), out(32);
        for (int i = 0; i < 32; ++i) k[static_cast<size_t>(i)] = v[static_cast<size_t>(i)] = 0.1f * float(i - 16);
        const PagedKvLayer view = (*cache)->layerView(seq, 0);
        QCOMPARE(view.type, DType::Q8_0);
        const int32_t pos = 0;
        makeCpuReferenceBackend()->kvWrite(view, k.data(), v.data(), &pos, 1);
        BlockQ8_0 want;
        ref::quantizeRow(DType::Q8_0, v.data(), &want, 32);
        QCOMPARE(std::memcmp(view.vBlocks[0], &want, sizeof want), 0);
        // One position: the output is that position's V row, dequantized.
        makeCpuReferenceBackend()->attention(view, AttentionShape{1, 1, 32, 0.2f, 0}, q.data(), &pos, 1, out.data());
        for (int i = 0; i < 32; ++i) QCOMPARE(out[static_cast<size_t>(i)], float(want.qs[i]) * f16ToF32(want.d));
    }

    // GQA (3 query heads per KV head), scattered positions, with and without a window.
    void avx2IsBitwiseReferenceAndCloseToExact() {
        std::mt19937 rng(11);
        std::normal_distribution<float> normal(0.0f, 1.0f);
        const bool avx2 = cpuFeatures().canRunAvx2();
        double worst = 0;
        for (int headDim : {32, 64, 256})
            for (int window : {0, 20}) {
                const int nKvHeads = 2, nHeads = 6, blockSize = 16;
                const Q8Layer kv(rng, 7, blockSize, nKvHeads * headDim);
                const AttentionShape shape{nHeads, nKvHeads, headDim, 1.0f / std::sqrt(float(headDim)), window};
                const int32_t positions[] = {0, 7, 8, 33, 64, 95, 17, 111};
                const int64_t nTokens = 8;
                std::vector<float> q(static_cast<size_t>(nTokens * nHeads * headDim));
                for (float& x : q) x = 2.0f * normal(rng);
                std::vector<float> want(q.size());
                makeCpuReferenceBackend()->attention(kv.layer, shape, q.data(), positions, nTokens, want.data());
                for (int64_t t = 0; t < nTokens; ++t) {
                    const size_t row = static_cast<size_t>(t * nHeads * headDim);
                    const std::vector<double> exact = exactAttention(kv, shape, q.data() + row, positions[t]);
                    for (size_t i = 0; i < exact.size(); ++i)
                        worst = std::max(worst, std::abs(exact[i] - want[row + i]));
                }
                if (!avx2) continue;
                for (int threads : {1, 3}) {
                    std::vector<float> got(q.size(), -1.0f);
                    makeCpuAvx2Backend(threads)->attention(kv.layer, shape, q.data(), positions, nTokens, got.data());
                    for (size_t i = 0; i < got.size(); ++i)
                        QVERIFY2(sameFloat(got[i], want[i]),
                                 ("head size " + std::to_string(headDim) + " window " + std::to_string(window) +
                                  " value " + std::to_string(i))
                                     .c_str());
                }
            }
        // V values are N(0, 2); the error comes from quantizing q to Q8_0 (the scores move).
        qInfo("largest |Q8_0 attention - exact over dequantized K/V|: %g", worst);
        QVERIFY(worst < 0.2);  // a tenth of V's standard deviation
        if (!avx2) QSKIP("no AVX2/FMA/F16C: the reference was checked against exact attention only");
    }

    // Ranges over several attention pieces (256 positions each, attention_pieces.h): a decode
    // token at 639 (its pieces spread over the threads) and tokens 250..261 across a boundary,
    // with and without a window that starts mid-piece.
    void piecesAcrossBoundaries() {
        std::mt19937 rng(5);
        std::normal_distribution<float> normal(0.0f, 1.0f);
        const int nKvHeads = 2, nHeads = 6, headDim = 64;
        const Q8Layer kv(rng, 40, 16, nKvHeads * headDim);
        for (int window : {0, 300}) {
            const AttentionShape shape{nHeads, nKvHeads, headDim, 1.0f / std::sqrt(float(headDim)), window};
            for (const std::vector<int32_t>& positions :
                 {std::vector<int32_t>{639},
                  std::vector<int32_t>{250, 251, 252, 253, 254, 255, 256, 257, 258, 259, 260, 261}}) {
                const auto nTokens = static_cast<int64_t>(positions.size());
                std::vector<float> q(static_cast<size_t>(nTokens * nHeads * headDim));
                for (float& x : q) x = 2.0f * normal(rng);
                std::vector<float> want(q.size());
                makeCpuReferenceBackend()->attention(kv.layer, shape, q.data(), positions.data(), nTokens, want.data());
                double worst = 0;
                for (int64_t t = 0; t < nTokens; ++t) {
                    const size_t row = static_cast<size_t>(t * nHeads * headDim);
                    const std::vector<double> exact =
                        exactAttention(kv, shape, q.data() + row, positions[static_cast<size_t>(t)]);
                    for (size_t i = 0; i < exact.size(); ++i)
                        worst = std::max(worst, std::abs(exact[i] - want[row + i]));
                }
                QVERIFY2(worst < 0.2, std::to_string(worst).c_str());
                if (!cpuFeatures().canRunAvx2()) continue;
                for (int threads : {1, 2, 3}) {
                    std::vector<float> got(q.size(), -1.0f);
                    makeCpuAvx2Backend(threads)->attention(kv.layer, shape, q.data(), positions.data(), nTokens,
                                                           got.data());
                    for (size_t i = 0; i < got.size(); ++i)
                        QVERIFY2(sameFloat(got[i], want[i]),
                                 ("window " + std::to_string(window) + ", " + std::to_string(nTokens) + " tokens, " +
                                  std::to_string(threads) + " threads, value " + std::to_string(i))
                                     .c_str());
                }
            }
        }
    }

    void engineRefusesHeadSizeNot32() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("tiny16.gguf").toStdString();
        QVERIFY(test::tinyLlama().writeFile(path));  // head size 64 / 4 = 16
        EngineOptions options;
        options.kvType = KvElementType::Q8_0;
        auto engine = Engine::load(path, options);
        QVERIFY(!engine);
        QVERIFY2(QString::fromStdString(engine.error().message).contains("head size"), engine.error().message.c_str());
    }

    // Tiny random Llama with head size 32 (nEmbd 128, 4 heads, 2 KV heads): 40 greedy tokens.
    void generationCloseToF16() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("tiny32.gguf").toStdString();
        test::TinyLlamaShape shape;
        shape.nEmbd = 128;
        shape.seed = 7;
        QVERIFY(test::tinyLlama(shape).writeFile(path));
        std::vector<TokenId> prompt{1};
        for (int i = 0; i < 30; ++i) prompt.push_back(3 + (i * 53) % 256);
        const int n = 40;
        const Run f16 = greedyRun(path, KvElementType::F16, prompt, n);
        const Run q8 = greedyRun(path, KvElementType::Q8_0, prompt, n);
        QCOMPARE(q8.tokens.size(), size_t(n));
        size_t same = 0;
        while (same < size_t(n) && q8.tokens[same] == f16.tokens[same]) ++same;
        // Total variation distance of the next-token distributions, over the steps whose
        // contexts are still equal (the first differing step included).
        double worst = 0, sum = 0;
        const size_t nSteps = std::min(same + 1, size_t(n));
        for (size_t i = 0; i < nSteps; ++i) {
            double tv = 0;
            for (size_t t = 0; t < f16.probs[i].size(); ++t) tv += 0.5 * std::abs(f16.probs[i][t] - q8.probs[i][t]);
            worst = std::max(worst, tv);
            sum += tv;
        }
        qInfo(
            "first %zu of %d greedy tokens equal; total variation distance of the next-token distributions, "
            "F16 vs Q8_0 KV, over %zu steps: mean %g, largest %g",
            same, n, nSteps, sum / double(nSteps), worst);
        QVERIFY(same >= size_t(kSameTokens));
        QVERIFY(sum / double(nSteps) < kMeanTvTolerance);
        QVERIFY(worst < kWorstTvTolerance);
    }
};

QTEST_GUILESS_MAIN(TestKvQ8)
#include "test_kv_q8.moc"
