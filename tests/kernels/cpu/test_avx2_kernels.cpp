// Parity of the AVX2 kernels (kernels/cpu/avx2) with the reference: activation quantizers,
// dot products of every weight type and the threaded, tiled matmul, all bit for bit, on
// seeded random data with edge cases (all-zero blocks, largest half scales, rounding ties,
// subnormals, NaN and infinity in activations). Skipped on a CPU without AVX2/FMA/F16C.
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
#include "kernels/cpu/reference/matmul.h"
#include "kernels/cpu/reference/quants.h"
#include "tests/support/same_float.h"
#include "tests/support/scoped_env.h"

using namespace hearth;
using hearth::test::sameFloat;

namespace {

const DType kWeightTypes[] = {DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1, DType::Q8_0, DType::Q4_K,
                              DType::Q5_K, DType::Q6_K, DType::F16,  DType::BF16, DType::F32};

// Equal bits, or both NaN (x86 may pick either NaN operand's payload; the value is NaN).
std::string describe(DType t, const char* what, int64_t i, float got, float want) {
    return std::string(dtypeInfo(t).name) + " " + what + " #" + std::to_string(i) + ": avx2 " +
        std::to_string(std::bit_cast<uint32_t>(got)) + " ref " + std::to_string(std::bit_cast<uint32_t>(want));
}

// A half scale: usually small, sometimes an edge (0, ±largest finite, smallest subnormal).
f16_t edgyHalf(std::mt19937& rng, float lo, float hi) {
    const f16_t edges[] = {0x0000, 0x7bff, 0xfbff, 0x0001, 0x8001, 0x0400};
    if (std::uniform_int_distribution<int>(0, 9)(rng) == 0) return edges[std::uniform_int_distribution<int>(0, 5)(rng)];
    return f32ToF16(std::uniform_real_distribution<float>(lo, hi)(rng));
}

// The byte offsets of a block's half scales (d, then m/dmin) per weight type.
std::vector<int> halfFields(DType t) {
    switch (t) {
    case DType::Q4_0:
    case DType::Q5_0:
    case DType::Q8_0: return {0};
    case DType::Q4_1:
    case DType::Q5_1:
    case DType::Q4_K:
    case DType::Q5_K: return {0, 2};
    case DType::Q6_K: return {offsetof(BlockQ6_K, d)};
    default: return {};
    }
}

// Random weights: random quant bytes, scales from edgyHalf, every 7th block all zero.
// F16/BF16/F32 rows: random finite values with some zeros and extremes.
std::vector<uint8_t> randomWeights(DType t, int64_t n, std::mt19937& rng) {
    std::vector<uint8_t> bytes(rowBytes(t, n));
    std::uniform_int_distribution<int> byte(0, 255);
    for (auto& b : bytes) b = static_cast<uint8_t>(byte(rng));
    std::uniform_real_distribution<float> value(-3.0f, 3.0f);
    if (t == DType::F32 || t == DType::F16 || t == DType::BF16) {
        for (int64_t i = 0; i < n; ++i) {
            float v = value(rng);
            if (i % 13 == 0) v = 0.0f;
            if (i % 29 == 0) v = (i % 2 ? -1.0f : 1.0f) * (t == DType::F16 ? 65504.0f : 1e30f);
            if (t == DType::F32) std::memcpy(&bytes[4 * i], &v, 4);
            const uint16_t h = t == DType::F16 ? f32ToF16(v) : f32ToBf16(v);
            if (t != DType::F32) std::memcpy(&bytes[2 * i], &h, 2);
        }
        return bytes;
    }
    const size_t blockBytes = dtypeInfo(t).blockBytes;
    for (size_t b = 0; b * blockBytes < bytes.size(); ++b) {
        uint8_t* block = &bytes[b * blockBytes];
        if (b % 7 == 3) std::memset(block, 0, blockBytes);
        for (int off : halfFields(t)) {
            const f16_t h = b % 7 == 3 ? 0 : edgyHalf(rng, -0.1f, 0.1f);
            std::memcpy(block + off, &h, 2);
        }
    }
    return bytes;
}

// Activations with per-block magnitudes from 1e-30 to 1e30, all-zero blocks, rounding ties
// (a block whose largest magnitude is 127, so that x·(1/d) lands on halves) and, when asked,
// NaN and infinity.
std::vector<float> randomActivations(int64_t n, std::mt19937& rng, bool nonFinite) {
    std::vector<float> x(static_cast<size_t>(n));
    std::normal_distribution<float> normal(0.0f, 1.0f);
    const float magnitudes[] = {1.0f, 1e-30f, 1e30f, 1e-3f, 40.0f};
    for (int64_t b = 0; b < n / 32; ++b) {
        const int kind = static_cast<int>(b % 9);
        const float mag = magnitudes[std::uniform_int_distribution<int>(0, 4)(rng)];
        for (int j = 0; j < 32; ++j) {
            float& v = x[static_cast<size_t>(32 * b + j)];
            if (kind == 0) v = 0.0f;
            else if (kind == 1) v = j == 0 ? 127.0f : static_cast<float>(j % 8) - 3.5f;  // ties
            else if (kind == 2) v = j == 5 ? -127.0f : 0.5f * static_cast<float>(j % 6);
            else v = mag * normal(rng);
        }
    }
    if (nonFinite && n >= 256) {
        x[40] = NAN;
        x[100] = INFINITY;
        x[200] = -INFINITY;
    }
    return x;
}

std::vector<uint8_t> quantizedRef(DType actType, const std::vector<float>& x) {
    std::vector<uint8_t> out(rowBytes(actType, static_cast<int64_t>(x.size())));
    ref::quantizeRow(actType, x.data(), out.data(), static_cast<int64_t>(x.size()));
    return out;
}

}  // namespace

class TestAvx2Kernels : public QObject {
    Q_OBJECT
private slots:
    void init() {
        if (!cpuFeatures().canRunAvx2()) QSKIP("this CPU (or OS) lacks AVX2, FMA or F16C");
    }

    void quantizeRowIsBitwiseReference() {
        std::mt19937 rng(1234);
        const DType actTypes[] = {DType::Q8_0, DType::Q8_1, DType::Q8_K, DType::F16, DType::BF16, DType::F32};
        for (int round = 0; round < 40; ++round)
            for (DType t : actTypes) {
                const int64_t n = 256 * (1 + round % 3) + (t == DType::F16 || t == DType::BF16 ? round % 7 : 0);
                const std::vector<float> x = randomActivations(n, rng, round % 2 == 1);
                std::vector<uint8_t> got(rowBytes(t, n), 0xa5);
                avx2::quantizeRow(t, x.data(), got.data(), n);
                QVERIFY2(got == quantizedRef(t, x), dtypeInfo(t).name);
            }
    }

    void roundingTiesAndSignedMax() {
        // Q8_0 with amax 127: d = 1, so q = roundf(x) (half away from zero).
        std::vector<float> x(256, 0.0f);
        for (int j = 0; j < 32; ++j) x[static_cast<size_t>(j)] = j == 0 ? 127.0f : -0.5f * static_cast<float>(j);
        // Q8_K: two elements of equal magnitude and opposite signs: the first one is the max.
        x[64] = 3.0f, x[65] = -3.0f, x[66] = 1.5f;
        for (DType t : {DType::Q8_0, DType::Q8_1, DType::Q8_K}) {
            std::vector<uint8_t> got(rowBytes(t, 256));
            avx2::quantizeRow(t, x.data(), got.data(), 256);
            QVERIFY2(got == quantizedRef(t, x), dtypeInfo(t).name);
        }
    }

    void vecDotIsBitwiseReference() {
        std::mt19937 rng(42);
        for (DType t : kWeightTypes) {
            const DType actType = ref::vecDotType(t);
            for (int64_t n : {256, 512, 2304}) {
                for (int row = 0; row < 24; ++row) {
                    const std::vector<uint8_t> w = randomWeights(t, n, rng);
                    const std::vector<uint8_t> a = quantizedRef(actType, randomActivations(n, rng, row % 5 == 4));
                    const float want = ref::vecDot(t, w.data(), a.data(), n);
                    const float got = avx2::vecDot(t, w.data(), a.data(), n);
                    QVERIFY2(sameFloat(got, want), describe(t, "row", row, got, want).c_str());
                }
            }
        }
    }

    void floatDotsWithTails() {  // F16/BF16/F32 rows of any length: lanes i % 8 continue in the tail
        std::mt19937 rng(7);
        for (DType t : {DType::F16, DType::BF16, DType::F32})
            for (int64_t n = 1; n < 40; ++n) {
                const std::vector<uint8_t> w = randomWeights(t, n, rng);
                const std::vector<uint8_t> a = quantizedRef(t, randomActivations(64, rng, false));
                const float want = ref::vecDot(t, w.data(), a.data(), n);
                const float got = avx2::vecDot(t, w.data(), a.data(), n);
                QVERIFY2(sameFloat(got, want), describe(t, "n", n, got, want).c_str());
            }
    }

    // Every (row, token) of the threaded, tiled matmul equals the reference matmul: for one
    // token (decode tiles), 3 and 17 tokens (prefill tiles with odd leftovers), 37 rows (a
    // ragged last row group) and 1, 2 or 3 threads.
    void matmulIsBitwiseReferenceForAnyBatchAndThreads() {
        std::mt19937 rng(99);
        const int64_t nRows = 37, nCols = 512;
        for (DType t : kWeightTypes) {
            std::vector<uint8_t> w;
            for (int64_t r = 0; r < nRows; ++r) {
                const std::vector<uint8_t> row = randomWeights(t, nCols, rng);
                w.insert(w.end(), row.begin(), row.end());
            }
            const WeightView view{t, w.data(), nRows, nCols};
            for (int64_t nTokens : {1, 3, 17}) {
                const std::vector<float> x = randomActivations(nTokens * nCols, rng, nTokens == 3);
                std::vector<float> want(static_cast<size_t>(nTokens * nRows));
                ref::matmul(t, w.data(), nRows, nCols, x.data(), nTokens, want.data());
                for (int threads : {1, 2, 3}) {
                    auto backend = makeCpuAvx2Backend(threads);
                    std::vector<float> got(want.size(), -1.0f);
                    backend->matmul(view, x.data(), nTokens, got.data());
                    for (size_t i = 0; i < got.size(); ++i)
                        QVERIFY2(sameFloat(got[i], want[i]),
                                 (describe(t, "value", static_cast<int64_t>(i), got[i], want[i]) + " tokens " +
                                  std::to_string(nTokens) + " threads " + std::to_string(threads))
                                     .c_str());
                }
            }
        }
    }

    // The prefill panels (gemmPanel) directly, for every type they take: each (row, token) is
    // bitwise the vecDot of that row and token, for 1 to 9 tokens (every tile width and
    // remainder) and for 33 tokens, in panels at any row offset.
    void panelsAreBitwiseVecDot() {
        std::mt19937 rng(77);
        const int64_t nRows = 24, nCols = 768;
        for (DType t : kWeightTypes) {
            if (avx2::gemmPanelBytes(t, nCols) == 0) continue;
            const DType actType = ref::vecDotType(t);
            const size_t wRow = rowBytes(t, nCols), aRow = rowBytes(actType, nCols);
            std::vector<uint8_t> w;
            for (int64_t r = 0; r < nRows; ++r) {
                const std::vector<uint8_t> row = randomWeights(t, nCols, rng);
                w.insert(w.end(), row.begin(), row.end());
            }
            for (int64_t nTokens : {1, 2, 3, 4, 5, 6, 7, 8, 9, 33}) {
                std::vector<uint8_t> acts;
                for (int64_t k = 0; k < nTokens; ++k) {
                    const std::vector<uint8_t> a = quantizedRef(actType, randomActivations(nCols, rng, k % 4 == 1));
                    acts.insert(acts.end(), a.begin(), a.end());
                }
                avx2::MatmulArgs m{t, w.data(), wRow, nCols, acts.data(), aRow, nTokens, nullptr, nRows};
                std::vector<float> y(static_cast<size_t>(nTokens * nRows), -1.0f);
                m.y = y.data();
                std::vector<uint64_t> info(avx2::gemmActInfoBytes(t, nCols) / 8 * static_cast<size_t>(nTokens) + 1);
                avx2::gemmActInfo(m, 0, nTokens, info.data());
                std::vector<uint64_t> panel(avx2::gemmPanelBytes(t, nCols) / 8 + 8);
                void* aligned =
                    reinterpret_cast<void*>((reinterpret_cast<uintptr_t>(panel.data()) + 31) & ~uintptr_t{31});
                for (int64_t row0 = 0; row0 < nRows; row0 += avx2::kPanelRows)
                    avx2::gemmPanel(m, info.data(), row0, aligned);
                for (int64_t k = 0; k < nTokens; ++k)
                    for (int64_t r = 0; r < nRows; ++r) {
                        const float want = ref::vecDot(t, w.data() + static_cast<size_t>(r) * wRow,
                                                       acts.data() + static_cast<size_t>(k) * aRow, nCols);
                        const float got = y[static_cast<size_t>(k * nRows + r)];
                        QVERIFY2(sameFloat(got, want),
                                 (describe(t, "row", r, got, want) + " token " + std::to_string(k) + " of " +
                                  std::to_string(nTokens))
                                     .c_str());
                    }
            }
        }
    }

    // Float rows whose lane sums cancel (lane 0 = +big², lane 4 = -big², lane 2 = tiny²): only
    // the reference's lane order ((l0+l4)+(l2+l6)) + ... keeps tiny², so a kernel that combines
    // lanes in another order fails here. Decode tiles and panels, 9 rows × 5 tokens.
    void floatLaneOrderUnderCancellation() {
        const int64_t nRows = 9, nCols = 16, nTokens = 5;
        for (DType t : {DType::F16, DType::BF16, DType::F32}) {
            const float big = t == DType::F16 ? 65504.0f : 1e15f,
                        tiny = t == DType::F16 ? 0x1p-24f : 1e-15f;  // big² finite
            std::vector<float> wf(static_cast<size_t>(nRows * nCols), 0.0f),
                x(static_cast<size_t>(nTokens * nCols), 0.0f);
            for (int64_t r = 0; r < nRows; ++r) wf[r * nCols] = big, wf[r * nCols + 4] = -big, wf[r * nCols + 2] = tiny;
            for (int64_t k = 0; k < nTokens; ++k) x[k * nCols] = big, x[k * nCols + 4] = big, x[k * nCols + 2] = tiny;
            std::vector<uint8_t> w(rowBytes(t, nCols) * static_cast<size_t>(nRows));
            for (int64_t r = 0; r < nRows; ++r)
                ref::quantizeRow(t, wf.data() + r * nCols, w.data() + static_cast<size_t>(r) * rowBytes(t, nCols),
                                 nCols);
            std::vector<float> want(static_cast<size_t>(nRows * nTokens)), got(want.size());
            ref::matmul(t, w.data(), nRows, nCols, x.data(), nTokens, want.data());
            QVERIFY(want[0] > 0.0f);  // tiny² survived in the reference
            makeCpuAvx2Backend(2)->matmul(WeightView{t, w.data(), nRows, nCols}, x.data(), nTokens, got.data());
            for (size_t i = 0; i < got.size(); ++i)
                QVERIFY2(sameFloat(got[i], want[i]),
                         describe(t, "value", static_cast<int64_t>(i), got[i], want[i]).c_str());
            makeCpuAvx2Backend(1)->matmul(WeightView{t, w.data(), nRows, nCols}, x.data(), 1, got.data());
            for (int64_t r = 0; r < nRows; ++r)
                QVERIFY2(sameFloat(got[r], want[r]), describe(t, "decode row", r, got[r], want[r]).c_str());
        }
    }

    // Through the backend: a batch of tokens (panels, with a ragged last row group) gives
    // each token bitwise the values it gets alone (decode tiles), for 1, 2 and 3 threads.
    void batchedMatmulEqualsOneTokenAtATime() {
        std::mt19937 rng(31);
        const int64_t nRows = 45, nCols = 512, nTokens = 11;
        for (DType t : kWeightTypes) {
            std::vector<uint8_t> w;
            for (int64_t r = 0; r < nRows; ++r) {
                const std::vector<uint8_t> row = randomWeights(t, nCols, rng);
                w.insert(w.end(), row.begin(), row.end());
            }
            const WeightView view{t, w.data(), nRows, nCols};
            const std::vector<float> x = randomActivations(nTokens * nCols, rng, false);
            for (int threads : {1, 2, 3}) {
                auto backend = makeCpuAvx2Backend(threads);
                std::vector<float> batch(static_cast<size_t>(nTokens * nRows)), single(batch.size());
                backend->matmul(view, x.data(), nTokens, batch.data());
                for (int64_t k = 0; k < nTokens; ++k)
                    backend->matmul(view, x.data() + k * nCols, 1, single.data() + k * nRows);
                for (size_t i = 0; i < batch.size(); ++i)
                    QVERIFY2(sameFloat(batch[i], single[i]),
                             (describe(t, "value", static_cast<int64_t>(i), batch[i], single[i]) + " threads " +
                              std::to_string(threads))
                                 .c_str());
            }
        }
    }

    // Repacked weights (packWeight, as a model does at load) through the backend's thread shares:
    // matrices of 200 and 72 rows (whole 16-row tiles and a half one, in shares of 16-row groups
    // where the AVX-512 VNNI tiles take them, of 8 elsewhere), alone (matmul) and together
    // (matmulMany), for 1, 2, 3 and 17 tokens (17: quantized in more than one block of tokens)
    // and 1, 2 and 3 threads: every value bitwise the reference's.
    void repackedMatmulSharesAreBitwiseReference() {
        std::mt19937 rng(57);
        const int64_t nCols = 256, rows1 = 200, rows2 = 72;
        for (DType t : {DType::Q4_0, DType::Q4_1, DType::Q5_1, DType::Q8_0, DType::Q4_K, DType::Q6_K}) {
            std::vector<uint8_t> w1, w2;
            for (int64_t r = 0; r < rows1 + rows2; ++r) {
                const std::vector<uint8_t> row = randomWeights(t, nCols, rng);
                (r < rows1 ? w1 : w2).insert((r < rows1 ? w1 : w2).end(), row.begin(), row.end());
            }
            for (int64_t nTokens : {1, 2, 3, 17}) {
                const std::vector<float> x = randomActivations(nTokens * nCols, rng, false);
                std::vector<float> want1(static_cast<size_t>(nTokens * rows1)), want2(static_cast<size_t>(nTokens * rows2));
                ref::matmul(t, w1.data(), rows1, nCols, x.data(), nTokens, want1.data());
                ref::matmul(t, w2.data(), rows2, nCols, x.data(), nTokens, want2.data());
                for (int threads : {1, 2, 3}) {
                    auto backend = makeCpuAvx2Backend(threads);
                    WeightView v1{t, w1.data(), rows1, nCols}, v2{t, w2.data(), rows2, nCols};
                    const std::unique_ptr<WeightBuffer> b1 = backend->packWeight(v1), b2 = backend->packWeight(v2);
                    std::vector<float> alone(want1.size(), -1.0f), many1(want1.size(), -1.0f),
                        many2(want2.size(), -1.0f);
                    backend->matmul(v1, x.data(), nTokens, alone.data());
                    const WeightView both[] = {v1, v2};
                    float* const outs[] = {many1.data(), many2.data()};
                    backend->matmulMany(both, x.data(), nTokens, outs);
                    const auto check = [&](const std::vector<float>& got, const std::vector<float>& want,
                                           const char* what) {
                        for (size_t i = 0; i < got.size(); ++i)
                            QVERIFY2(sameFloat(got[i], want[i]),
                                     (describe(t, what, static_cast<int64_t>(i), got[i], want[i]) + " tokens " +
                                      std::to_string(nTokens) + " threads " + std::to_string(threads) +
                                      (v1.packed.data ? " (repacked)" : " (file layout)"))
                                         .c_str());
                    };
                    check(alone, want1, "matmul");
                    check(many1, want1, "matmulMany, first");
                    check(many2, want2, "matmulMany, second");
                }
            }
        }
    }

    // Paged F16 KV with random contents, GQA (3 query heads per KV head), queries at
    // scattered positions, a prefill run of consecutive positions (queries computed together)
    // and one decode token (heads split over threads), with and without a sliding window; head
    // sizes 64 and 8 take the AVX2 path, 12 the reference fallback; K token-major and
    // dimension-major (a window's first position off a chunk of eight), V token-major and head-major. Equal bits to the
    // reference for 1, 2 and 3 threads, whether the tokens come in one call or as several
    // sequences' calls in one attentionMany.
    void attentionIsBitwiseReference_data() {
        QTest::addColumn<std::vector<int32_t>>("positions");
        QTest::newRow("scattered") << std::vector<int32_t>{0, 7, 8, 33, 64, 95, 17};
        std::vector<int32_t> run;
        for (int32_t p = 3; p < 45; ++p) run.push_back(p);
        QTest::newRow("prefill run") << run;
        QTest::newRow("decode") << std::vector<int32_t>{90};
        QTest::newRow("decodes of several sequences") << std::vector<int32_t>{90, 3, 41, 77, 12, 95};
    }

    void attentionIsBitwiseReference() {
        QFETCH(std::vector<int32_t>, positions);
        std::mt19937 rng(5);
        std::normal_distribution<float> normal(0.0f, 1.0f);
        for (int headDim : {64, 8, 12})
            for (int window : {0, 20})
                for (int order = 0; order < 4; ++order) {
                    const bool dimMajor = order % 2 == 1, vHeads = order >= 2;
                    const int nKvHeads = 2, nHeads = 6, blockSize = 16, nBlocks = 6, rowStride = nKvHeads * headDim;
                    std::vector<std::vector<f16_t>> kData(nBlocks), vData(nBlocks);
                    std::vector<f16_t*> kBlocks, vBlocks;
                    for (int b = 0; b < nBlocks; ++b) {
                        for (auto* data : {&kData[b], &vData[b]}) {
                            data->resize(static_cast<size_t>(blockSize * rowStride));
                            for (f16_t& h : *data) h = f32ToF16(3.0f * normal(rng));
                        }
                        kBlocks.push_back(kData[b].data());
                        vBlocks.push_back(vData[b].data());
                    }
                    const PagedKvLayer layer{.kBlocks = kBlocks.data(),
                                             .vBlocks = vBlocks.data(),
                                             .blockSize = blockSize,
                                             .rowStride = rowStride,
                                             .kDimMajor = dimMajor,
                                             .vHeadDim = vHeads ? headDim : 0};
                    const AttentionShape shape{nHeads, nKvHeads, headDim, 1.0f / std::sqrt(float(headDim)), window};
                    const auto nTokens = static_cast<int64_t>(positions.size());
                    std::vector<float> q(static_cast<size_t>(nTokens * nHeads * headDim));
                    for (float& v : q) v = 2.0f * normal(rng);
                    std::vector<float> want(q.size());
                    makeCpuReferenceBackend()->attention(layer, shape, q.data(), positions.data(), nTokens,
                                                         want.data());
                    for (int threads : {1, 2, 3}) {
                        std::vector<float> got(q.size(), -1.0f);
                        makeCpuAvx2Backend(threads)->attention(layer, shape, q.data(), positions.data(), nTokens,
                                                               got.data());
                        for (size_t i = 0; i < got.size(); ++i)
                            QVERIFY2(sameFloat(got[i], want[i]),
                                     ("head size " + std::to_string(headDim) + " window " + std::to_string(window) +
                                      (dimMajor ? " K dimension-major" : "") + (vHeads ? " V head-major" : "") +
                                      " value " + std::to_string(i))
                                         .c_str());
                        // The same tokens as several sequences' calls in one attentionMany: one
                        // token each (a batch of decodes), and runs of up to five (verifications).
                        const int64_t rowFloats = int64_t{nHeads} * headDim;
                        for (int64_t runLength : {1, 5}) {
                            std::vector<Backend::AttentionCall> calls;
                            for (int64_t t = 0; t < nTokens; t += runLength)
                                calls.push_back({&layer, q.data() + t * rowFloats, positions.data() + t,
                                                 std::min(runLength, nTokens - t), got.data() + t * rowFloats});
                            std::fill(got.begin(), got.end(), -1.0f);
                            makeCpuAvx2Backend(threads)->attentionMany(calls, shape);
                            for (size_t i = 0; i < got.size(); ++i)
                                QVERIFY2(sameFloat(got[i], want[i]),
                                         ("attentionMany, runs of " + std::to_string(runLength) + ", head size " +
                                          std::to_string(headDim) + " value " + std::to_string(i))
                                             .c_str());
                        }
                    }
                }
    }

    void bestBackendAndRegistry() {
        {
            const test::ScopedEnv level("HEARTH_CPU", "reference");
            QCOMPARE(QString::fromStdString(makeBestCpuBackend()->name()), QStringLiteral("CPU (reference)"));
            QVERIFY(!cpuFallbackNote().empty());
        }
        const test::ScopedEnv best("HEARTH_CPU", std::nullopt);
        QCOMPARE(QString::fromStdString(makeBestCpuBackend(2)->name()), QStringLiteral("CPU (AVX2)"));
        QVERIFY(cpuFallbackNote().empty());
        bool listed = false;
        for (const BackendInfo& b : listBackends())
            if (b.name.rfind("CPU (AVX2, ", 0) == 0) listed = b.available && b.reason.empty();  // "..., N threads)"
        QVERIFY(listed);
    }
};

QTEST_APPLESS_MAIN(TestAvx2Kernels)
#include "test_avx2_kernels.moc"
