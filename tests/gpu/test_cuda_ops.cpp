// CUDA vs the CPU reference, operator by operator and weight type by weight type, with the
// tolerances stated next to each check (relative to the reference output's largest value).
// Also: a token's result does not depend on its batch (mat-vec, attention). The CUDA backend
// computes in device memory only, so each call goes through tests/support/host_operands_backend.h
// (operands up, results down). Skips (77) without a CUDA device. Built a second time as
// test_host_operands (HEARTH_OPS_ON_TEST_DEVICE): the same checks with the reference behind
// tests/support/device_memory_backend.h instead of CUDA, which proves on any machine that the
// adapter hands the backend only its own memory and brings back what it wrote.
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <list>
#include <random>
#include <string_view>

#include "engine/model/synth.h"
#include "kernels/cpu/reference/quants.h"
#include "tests/gpu/gpu_check.h"
#include "tests/support/device_memory_backend.h"
#include "tests/support/host_operands_backend.h"

using namespace hearth;
using namespace hearth::gpu_test;

namespace {

std::vector<float> randomFloats(size_t n, uint32_t seed, float scale = 1.0f) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> dist(0.0f, scale);
    std::vector<float> v(n);
    for (float& x : v) x = dist(rng);
    return v;
}

struct Weights {
    std::vector<uint8_t> bytes;
    WeightView view;
};

// The adapter keeps a device copy of each weight keyed by its host address, as a model's
// mapped tensors stay put while a backend uses them; so every weight here lives until the end
// (a freed vector's address reused by the next one would read the old device copy).
std::list<Weights> allWeights;

const Weights& quantized(DType t, int64_t nRows, int64_t nCols, uint32_t seed) {
    const std::vector<float> f = randomFloats(static_cast<size_t>(nRows * nCols), seed, 0.05f);
    Weights& w = allWeights.emplace_back();
    const size_t rowSize = rowBytes(t, nCols);
    w.bytes.resize(rowSize * static_cast<size_t>(nRows));
    for (int64_t r = 0; r < nRows; ++r) synthQuantizeRow(t, f.data() + r * nCols, w.bytes.data() + rowSize * r, nCols);
    w.view = {t, w.bytes.data(), nRows, nCols};
    return w;
}

const DType kWeightTypes[] = {DType::F32,  DType::F16,  DType::BF16, DType::Q4_0, DType::Q4_1, DType::Q5_0,
                              DType::Q5_1, DType::Q8_0, DType::Q4_K, DType::Q5_K, DType::Q6_K};

void checkMatmulShape(Backend& cpu, Backend& gpu, Checks& c, DType t, int64_t nRows, int64_t nCols) {
    const Weights& w = quantized(t, nRows, nCols, 11);
    const char* planar = std::getenv("HEARTH_CUDA_PLANAR");
    const std::string name = std::string(dtypeInfo(t).name) + " " + std::to_string(nRows) + "x" +
        std::to_string(nCols) + (planar != nullptr && std::string_view(planar) == "0" ? " (GGUF's blocks)" : "");
    std::vector<float> single;
    for (int64_t nTokens : {1, 3, 20}) {
        const std::vector<float> x = randomFloats(static_cast<size_t>(nTokens * nCols), 5);
        std::vector<float> want(static_cast<size_t>(nTokens * nRows)), got(want.size());
        cpu.matmul(w.view, x.data(), nTokens, want.data());
        gpu.matmul(w.view, x.data(), nTokens, got.data());
        // Same activation quantization, float vs in-order accumulation: 1e-3. cuBLAS
        // multiplies the same quantized activations and the weights as halves (each
        // rounded to F16, 2^-11 relative), summed in float: 5e-3.
        const double tol = nTokens >= 16 ? 5e-3 : 1e-3;
        std::printf("matmul %s x%lld: error %.3g\n", name.c_str(), static_cast<long long>(nTokens),
                    relativeError(got, want));
        c.expect(relativeError(got, want) < tol,
                 describeError("matmul " + name + " x" + std::to_string(nTokens), relativeError(got, want), tol));
        if (nTokens == 1) single = got;
        if (nTokens == 3)  // token 0 of the batch equals the same token alone, bit for bit
            c.expect(std::memcmp(got.data(), single.data(), single.size() * sizeof(float)) == 0,
                     "matmul " + name + ": batch of 3 gives token 0 the bits it gets alone");
    }
}

// Mat-vec (1 and 3 tokens: dp4a kernels) and GEMM (20 tokens: F16 tiles + cuBLAS). Rows of 512
// are planar for the 32-element block types and Q4_K (the planar mat-vec); rows of 288 are not
// (the kernel over GGUF's blocks); 4,226 rows of 256 make the planar kernel take 4 rows a block
// (on GPUs of up to 132 SMs) with 2 rows left over. Then rows of 512 again uploaded as GGUF's
// blocks (HEARTH_CUDA_PLANAR=0), for the kernels that read those; Q6_K is planar in rows of 2,048.
void checkMatmul(Backend& cpu, Backend& gpu, Checks& c) {
    struct Shape {
        int64_t nRows, nCols;
        bool blocks32Only;
        const char* planar;
    };
    for (const Shape& shape : {Shape{96, 512, false, "1"}, Shape{96, 288, true, "1"}, Shape{4226, 256, true, "1"},
                               Shape{96, 512, false, "0"}}) {
        setenv("HEARTH_CUDA_PLANAR", shape.planar, 1);
        for (DType t : kWeightTypes) {
            const bool blocks32 = dtypeInfo(t).blockElems == 32;
            if (shape.blocks32Only && !blocks32 && !(shape.nCols % 256 == 0 && t == DType::Q4_K)) continue;
            if (shape.nRows > 1000 && t != DType::Q4_0 && t != DType::Q8_0 && t != DType::Q4_K) continue;
            checkMatmulShape(cpu, gpu, c, t, shape.nRows, shape.nCols);
        }
    }
    unsetenv("HEARTH_CUDA_PLANAR");
    for (DType t : {DType::Q4_K, DType::Q6_K})
        checkMatmulShape(cpu, gpu, c, t, 40, 2048);  // Q6_K planar from 8 super-blocks
}

void checkEmbedding(Backend& cpu, Backend& gpu, Checks& c) {
    const int32_t ids[] = {3, 0, 77, 3, 95};
    for (DType t : kWeightTypes) {
        const Weights& w = quantized(t, 96, 512, 13);
        std::vector<float> want(5 * 512), got(want.size());
        cpu.embeddingRows(w.view, ids, 5, want.data());
        gpu.embeddingRows(w.view, ids, 5, got.data());
        c.expect(relativeError(got, want) < 1e-6,
                 describeError(std::string("embedding ") + dtypeInfo(t).name, relativeError(got, want), 1e-6));
    }
}

void checkElementwise(Backend& cpu, Backend& gpu, Checks& c) {
    const int64_t n = 3 * 640;
    const std::vector<float> x = randomFloats(n, 1), y = randomFloats(n, 2), w = randomFloats(640, 3);
    std::vector<float> want(n), got(n);
    cpu.rmsNorm(x.data(), w.data(), 3, 640, 1e-6f, want.data());
    gpu.rmsNorm(x.data(), w.data(), 3, 640, 1e-6f, got.data());
    c.expect(relativeError(got, want) < 1e-5, describeError("rmsNorm", relativeError(got, want), 1e-5));
    cpu.swiglu(x.data(), y.data(), n, want.data());
    gpu.swiglu(x.data(), y.data(), n, got.data());
    c.expect(relativeError(got, want) < 1e-5, describeError("swiglu", relativeError(got, want), 1e-5));
    // GeGLU goes through F16 (the reference's table): CUDA's tanhf may land an element one F16
    // step away where glibc's is an ulp apart near a rounding boundary; allow that for 1 in 256.
    const std::vector<float> gate = randomFloats(n, 4, 3.0f);
    cpu.geglu(gate.data(), y.data(), n, want.data());
    gpu.geglu(gate.data(), y.data(), n, got.data());
    int64_t differ = 0, farther = 0;
    for (int64_t i = 0; i < n; ++i) {
        if (got[i] == want[i]) continue;
        ++differ;
        if (std::fabs(got[i] - want[i]) > std::fabs(want[i]) * 0x1p-10f + 1e-30f) ++farther;
    }
    c.expect(farther == 0 && differ <= n / 256,
             "geglu: " + std::to_string(differ) + " of " + std::to_string(n) + " elements differ, " +
                 std::to_string(farther) + " by more than one F16 step");
    want = x;
    got = x;
    cpu.add(want.data(), y.data(), n);
    gpu.add(got.data(), y.data(), n);
    c.expect(relativeError(got, want) < 1e-6, describeError("add", relativeError(got, want), 1e-6));
    const int32_t positions[] = {0, 17, 4000};  // large angles: sin/cos of big arguments
    std::vector<float> factors(32);  // per-pair divisors (rope_freqs.weight), Llama 3.1-like
    for (size_t i = 0; i < factors.size(); ++i) factors[i] = i < 8 ? 1.0f : i < 12 ? 0.5f + 0.25f * float(i - 8) : 8.0f;
    for (const float* ff : {static_cast<const float*>(nullptr), static_cast<const float*>(factors.data())})
        for (RopeStyle style : {RopeStyle::Pairwise, RopeStyle::HalfSplit}) {
            want = x;
            got = x;
            cpu.rope(want.data(), 3, 5, 128, 64, positions, 10000.0f, style, ff);  // 5 heads of 128, 64 rotated
            gpu.rope(got.data(), 3, 5, 128, 64, positions, 10000.0f, style, ff);
            const std::string name = std::string(style == RopeStyle::Pairwise ? "rope pairwise" : "rope half-split") +
                (ff != nullptr ? " with frequency factors" : "");
            c.expect(relativeError(got, want) < 1e-4, describeError(name, relativeError(got, want), 1e-4));
        }
}

// Backend::matmulFused (the normalised or gated input and the residual add fused into the
// mat-vec) against the same backend's separate calls: the same bits, the products and the
// prepared input. Planar rows (Q4_0, Q8_0, Q4_K 512 wide, Q6_K 2,048), GGUF's blocks (Q4_0 288
// wide: the add after the mat-vec) and F16 (the rounded input); two types on one input (Q5_0 and
// Q8_0 planar, then in GGUF's blocks as Gemma 3 270M's Q/K/V; planar Q4_K with Q6_K in blocks);
// 1 and 3 tokens (mat-vec) and 20 (cuBLAS: the separate calls).
void checkFused(Backend& gpu, Checks& c) {
    struct Shape {
        DType t;
        int64_t nCols;
        DType second;  // the second matrix's type (one quantized input for both)
    };
    using Kind = MatmulInput::Kind;
    for (const Shape& shape : {Shape{DType::Q4_0, 512, DType::Q4_0}, Shape{DType::Q8_0, 512, DType::Q8_0},
                               Shape{DType::Q4_K, 512, DType::Q4_K}, Shape{DType::Q6_K, 2048, DType::Q6_K},
                               Shape{DType::Q4_0, 288, DType::Q4_0}, Shape{DType::F16, 512, DType::F16},
                               Shape{DType::Q5_0, 512, DType::Q8_0}, Shape{DType::Q5_0, 640, DType::Q8_0},
                               Shape{DType::Q4_K, 512, DType::Q6_K}}) {
        const int64_t nCols = shape.nCols;
        const Weights& a = quantized(shape.t, 96, nCols, 21);
        const Weights& b = quantized(shape.second, 40, nCols, 22);
        const std::vector<float> norm = randomFloats(static_cast<size_t>(nCols), 23);
        for (int64_t n : {1, 3, 20}) {
            const auto count = static_cast<size_t>(n * nCols);
            const std::vector<float> x = randomFloats(count, 24), upRows = randomFloats(count, 25);
            const std::vector<float> gate = randomFloats(count, 26, 3.0f);
            const std::vector<float> residual = randomFloats(static_cast<size_t>(n * 96), 27);
            for (Kind kind : {Kind::Plain, Kind::RmsNorm, Kind::SwiGlu, Kind::GeGlu})
                for (bool accumulate : {false, true}) {
                    if (kind == Kind::Plain && !accumulate) continue;  // matmulMany, checked above
                    const std::vector<float>& in = kind == Kind::GeGlu ? gate : x;
                    std::vector<float> preparedWant(count), preparedGot(count);
                    std::vector<float> ya(residual), yb(static_cast<size_t>(n * 40)), sums(residual.size());
                    std::vector<float> wantA(residual), wantB(yb.size());
                    const WeightView both[] = {a.view, b.view};
                    const std::span<const WeightView> ws = accumulate ? std::span(both, 1) : std::span(both);
                    // The separate calls.
                    const float* input = in.data();
                    if (kind == Kind::RmsNorm)
                        gpu.rmsNorm(in.data(), norm.data(), n, nCols, 1e-6f, preparedWant.data());
                    if (kind == Kind::SwiGlu) gpu.swiglu(in.data(), upRows.data(), n * nCols, preparedWant.data());
                    if (kind == Kind::GeGlu) gpu.geglu(in.data(), upRows.data(), n * nCols, preparedWant.data());
                    if (kind != Kind::Plain) input = preparedWant.data();
                    if (accumulate) {
                        gpu.matmul(a.view, input, n, sums.data());
                        gpu.add(wantA.data(), sums.data(), n * 96);
                    } else {
                        float* const outs[] = {wantA.data(), wantB.data()};
                        gpu.matmulMany(ws, input, n, outs);
                    }
                    // Fused.
                    MatmulInput fused{kind, in.data(), norm.data(), 1e-6f, upRows.data(), preparedGot.data()};
                    float* const outs[] = {ya.data(), yb.data()};
                    gpu.matmulFused(fused, ws, n, std::span(outs, ws.size()), accumulate, sums.data());
                    const std::string name = std::string(dtypeInfo(shape.t).name) + "/" + dtypeInfo(shape.second).name +
                        " " + std::to_string(nCols) + " wide, kind " + std::to_string(static_cast<int>(kind)) +
                        (accumulate ? " accumulated" : "") + " x" + std::to_string(n);
                    const auto same = [](const std::vector<float>& u, const std::vector<float>& v) {
                        return std::memcmp(u.data(), v.data(), u.size() * sizeof(float)) == 0;
                    };
                    c.expect(same(ya, wantA) && (accumulate || same(yb, wantB)),
                             "matmulFused " + name + ": the separate calls' products, bit for bit");
                    if (kind != Kind::Plain)
                        c.expect(same(preparedGot, preparedWant),
                                 "matmulFused " + name + ": the separate calls' input, bit for bit");
                }
        }
    }
}

// qkRope and addRmsNormed against the same backend's separate calls, bit for bit: heads of 64,
// 128 and 256 (all or half rotated), with and without the per-head norms, both RoPE styles,
// frequency factors and an attention factor.
void checkFusedRope(Backend& gpu, Checks& c) {
    struct Shape {
        int nHeads, nKvHeads, headDim, nRot;
    };
    const int32_t positions[] = {0, 17, 4000};
    std::vector<float> factors(128);
    for (size_t i = 0; i < factors.size(); ++i) factors[i] = 1.0f + 0.05f * static_cast<float>(i % 9);
    for (const Shape& sh : {Shape{8, 2, 64, 64}, Shape{4, 1, 256, 256}, Shape{6, 3, 128, 64}})
        for (bool norms : {false, true})
            for (RopeStyle style : {RopeStyle::Pairwise, RopeStyle::HalfSplit})
                for (float attnFactor : {1.0f, 0.75f}) {
                    const int64_t n = 3;
                    const auto qn = static_cast<size_t>(n * sh.nHeads * sh.headDim),
                               kn = static_cast<size_t>(n * sh.nKvHeads * sh.headDim);
                    const std::vector<float> q = randomFloats(qn, 31), k = randomFloats(kn, 32);
                    const std::vector<float> qNorm = randomFloats(static_cast<size_t>(sh.headDim), 33),
                                             kNorm = randomFloats(static_cast<size_t>(sh.headDim), 34);
                    QkRope r;
                    r.nHeads = sh.nHeads, r.nKvHeads = sh.nKvHeads, r.headDim = sh.headDim, r.nRot = sh.nRot;
                    r.qNorm = norms ? qNorm.data() : nullptr, r.kNorm = norms ? kNorm.data() : nullptr;
                    r.eps = 1e-6f, r.freqBase = 500000.0f, r.style = style, r.attnFactor = attnFactor;
                    r.freqFactors = sh.headDim == 128 ? factors.data() : nullptr;
                    std::vector<float> wantQ(q), wantK(k), gotQ(q), gotK(k);
                    r.q = wantQ.data(), r.k = wantK.data();
                    gpu.Backend::qkRope(r, positions, n);  // the separate calls
                    r.q = gotQ.data(), r.k = gotK.data();
                    gpu.qkRope(r, positions, n);
                    const std::string name = "qkRope " + std::to_string(sh.nHeads) + "/" + std::to_string(sh.nKvHeads) +
                        " x" + std::to_string(sh.headDim) + " rot " + std::to_string(sh.nRot) +
                        (norms ? " normed" : "") + (style == RopeStyle::Pairwise ? " pairwise" : " half-split") +
                        " factor " + std::to_string(attnFactor);
                    c.expect(std::memcmp(gotQ.data(), wantQ.data(), qn * sizeof(float)) == 0 &&
                                 std::memcmp(gotK.data(), wantK.data(), kn * sizeof(float)) == 0,
                             name + ": the separate calls' bits");
                }
    for (int64_t width : {640, 4096}) {
        const std::vector<float> x = randomFloats(static_cast<size_t>(3 * width), 41),
                                 y = randomFloats(static_cast<size_t>(3 * width), 42),
                                 w = randomFloats(static_cast<size_t>(width), 43);
        std::vector<float> wantX(x), wantY(y), gotX(x), gotY(y);
        gpu.Backend::addRmsNormed(wantX.data(), wantY.data(), w.data(), 3, width, 1e-6f);
        gpu.addRmsNormed(gotX.data(), gotY.data(), w.data(), 3, width, 1e-6f);
        c.expect(wantX == gotX && wantY == gotY,
                 "addRmsNormed 3x" + std::to_string(width) + ": the separate calls' bits");
    }
}

// argmaxRows against the host scan (Backend's default): wide and narrow rows, ties (the lower
// index), -0 against +0, NaNs (passed over; at index 0 the answer is 0), rows of -inf.
void checkArgmax(Backend& gpu, Checks& c) {
    for (int64_t n : {int64_t{5}, int64_t{49152}, int64_t{262144}}) {
        const int64_t rows = 8;
        std::vector<float> x = randomFloats(static_cast<size_t>(rows * n), 51);
        const auto at = [&](int64_t r, int64_t i) -> float& { return x[static_cast<size_t>(r * n + i)]; };
        at(1, n / 2) = 100.0f, at(1, n - 1) = 100.0f;  // a tie: the first
        at(2, 0) = NAN;  // a NaN first: 0
        at(3, n / 3) = NAN, at(3, n / 4) = 50.0f;  // NaNs passed over
        at(4, 1 % n) = -0.0f, at(4, 0) = 0.0f;  // +0 and -0 tie
        for (int64_t i = 0; i < n; ++i) at(4, i) = i < 2 ? at(4, i) : -1.0f, at(5, i) = -INFINITY;
        at(6, n - 1) = INFINITY;
        std::vector<int32_t> want(static_cast<size_t>(rows)), got(want.size());
        gpu.Backend::argmaxRows(x.data(), rows, n, want.data());
        gpu.argmaxRows(x.data(), rows, n, got.data());
        c.expect(got == want, "argmaxRows " + std::to_string(rows) + "x" + std::to_string(n) + ": the host scan's ids");
    }
}

// topKRows against the host's partial sort (Backend::topKRows' default), entry for entry: rows
// with ties across chunks, ±0, a NaN or an infinity (flagged), k from 1 to 256, widths from 5
// to 262,144 (chunks of 4,096 and a short last one); with k = 40 the log-sum-exps too.
void checkTopK(Backend& gpu, Checks& c) {
    for (int64_t n : {int64_t{5}, int64_t{4097}, int64_t{49152}, int64_t{262144}})
        for (int32_t k : {1, 40, 256}) {
            if (k > n) continue;
            const int64_t rows = 6;
            std::vector<float> x = randomFloats(static_cast<size_t>(rows * n), 53 + static_cast<unsigned>(k));
            const auto at = [&](int64_t r, int64_t i) -> float& { return x[static_cast<size_t>(r * n + i)]; };
            for (int64_t i = 0; i < n; ++i) at(1, i) = std::round(at(1, i) * 2.0f);  // ties everywhere
            at(2, n - 1) = 100.0f, at(2, 0) = 100.0f, at(2, n / 2) = -0.0f, at(2, n / 3) = 0.0f;
            at(3, n / 2) = NAN;
            at(4, n - 1) = INFINITY;
            for (int64_t i = 0; i < n; ++i) at(5, i) = i % 2 == 0 ? -0.0f : 0.0f;
            std::vector<Backend::TopEntry> want(static_cast<size_t>(rows * k)), got(want.size(), {-9, 0.0f});
            // With k = 40 (the chat's top-k), the rows' log-sum-exps too: the same sum of
            // exponentials in double, in another order, so within a unit or two of the float's
            // last place.
            const bool sums = k == 40;
            std::vector<float> wantLse(static_cast<size_t>(rows)), gotLse(wantLse.size(), NAN);
            gpu.Backend::topKRows(x.data(), rows, n, k, want.data(), sums ? wantLse.data() : nullptr);
            gpu.topKRows(x.data(), rows, n, k, got.data(), sums ? gotLse.data() : nullptr);
            int wrong = 0, wrongLse = 0;
            for (int64_t r = 0; r < rows; ++r) {
                const bool flagged = want[static_cast<size_t>(r * k)].id < 0;
                for (int32_t j = 0; j < k; ++j) {
                    const Backend::TopEntry &a = got[static_cast<size_t>(r * k + j)],
                                            &b = want[static_cast<size_t>(r * k + j)];
                    if (flagged && j == 0) wrong += a.id != -1;
                    else if (!flagged) wrong += a.id != b.id || std::memcmp(&a.value, &b.value, sizeof(float)) != 0;
                }
                const float a = gotLse[static_cast<size_t>(r)], b = wantLse[static_cast<size_t>(r)];
                if (sums && !flagged) wrongLse += !(std::abs(a - b) <= 2e-7f * std::max(1.0f, std::abs(b)));
            }
            c.expect(wrong == 0 && wrongLse == 0,
                     "topKRows " + std::to_string(rows) + "x" + std::to_string(n) + " k " + std::to_string(k) + ": " +
                         std::to_string(wrong) + " entries and " + std::to_string(wrongLse) +
                         " log-sum-exps differ from the host's");
        }
}

}  // namespace

void checkAttention(Backend& cpu, Backend& gpu, Checks& c);  // test_cuda_attention.cpp

int main() {
    auto cpu = makeCpuReferenceBackend();
#ifdef HEARTH_OPS_ON_TEST_DEVICE
    auto inner = makeCpuReferenceBackend();
    test::DeviceMemoryBackend device(*inner);
#else
    auto cuda = cudaOrSkip();
    if (!cuda) return noDeviceExit();
    Backend& device = *cuda;
#endif
    test::HostOperandsBackend gpu(device);
    Checks c;
    try {
        checkElementwise(*cpu, gpu, c);
        checkEmbedding(*cpu, gpu, c);
        checkMatmul(*cpu, gpu, c);
        checkFused(gpu, c);
        checkFusedRope(gpu, c);
        checkArgmax(gpu, c);
        checkTopK(gpu, c);
        checkAttention(*cpu, gpu, c);
    } catch (const std::exception& e) {
        c.expect(false, std::string("exception: ") + e.what());
    }
#ifdef HEARTH_OPS_ON_TEST_DEVICE
    c.expect(device.violations().empty(),
             "every operand in the backend's memory" +
                 (device.violations().empty() ? std::string() : ": " + device.violations().front()));
    c.expect(device.kvOutside() == 0, "every KV block in the backend's memory");
    c.expect(device.tablesFromHost() > 0 && device.transfers().uploads > 0 && gpu.callBuffers() > 0,
             "the adapter moved the operands (host tables for kvWrite, uploads, buffers)");
#endif
    const BackendCounters counts = device.counters();
    std::printf("backend counters: %llu uploads (%llu bytes), %llu downloads (%llu bytes), %llu launches, %llu waits\n",
                static_cast<unsigned long long>(counts.uploads), static_cast<unsigned long long>(counts.bytesUp),
                static_cast<unsigned long long>(counts.downloads), static_cast<unsigned long long>(counts.bytesDown),
                static_cast<unsigned long long>(counts.launches), static_cast<unsigned long long>(counts.waits));
    return c.exitCode();
}
