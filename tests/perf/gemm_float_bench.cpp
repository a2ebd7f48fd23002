// Micro-benchmark of the float-type prefill gemm (kernels/cpu/avx2/gemm_float.cpp) on one
// thread (the AVX-512 build where avx512Enabled(); HEARTH_CPU=avx2 for the AVX2 one): ROWS x COLS weights of F32/F16/BF16 against TOKENS activations, REPS times (not a
// test; a timing under load is noisy). Prints time, GFLOP/s (2 per multiply-add) and the
// number of sampled values that differ from ref::vecDot (bitwise; exit code 1 if any).
#include <bit>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/avx2/kernels.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/machine_probe.h"
#include "kernels/cpu/thread_pool.h"
#include "kernels/cpu/reference/quants.h"

using namespace hearth;

namespace {

DType parseType(const std::string& s) {
    if (s == "f32") return DType::F32;
    if (s == "bf16") return DType::BF16;
    return DType::F16;
}

std::vector<uint8_t> randomRows(DType t, int64_t nRows, int64_t nCols, std::mt19937& rng) {
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> x(static_cast<size_t>(nCols));
    const size_t rowSize = rowBytes(t, nCols);
    std::vector<uint8_t> out(rowSize * static_cast<size_t>(nRows));
    for (int64_t r = 0; r < nRows; ++r) {
        for (float& v : x) v = normal(rng);
        ref::quantizeRow(t, x.data(), out.data() + static_cast<size_t>(r) * rowSize, nCols);
    }
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    const DType t = parseType(argc > 1 ? argv[1] : "f16");
    const int64_t nRows = argc > 2 ? std::atoll(argv[2]) : 5632, nCols = argc > 3 ? std::atoll(argv[3]) : 2048;
    const int64_t nTokens = argc > 4 ? std::atoll(argv[4]) : 128;
    const int reps = argc > 5 ? std::atoi(argv[5]) : 3;
    std::mt19937 rng(5);
    const std::vector<uint8_t> w = randomRows(t, nRows, nCols, rng), acts = randomRows(t, nTokens, nCols, rng);
    const size_t wRow = rowBytes(t, nCols);
    std::vector<float> y(static_cast<size_t>(nRows * nTokens));
    avx2::MatmulArgs m{t, w.data(), wRow, nCols, acts.data(), wRow, nTokens, y.data(), nRows};
    m.avx512 = avx512Enabled();
    std::vector<uint64_t> info(avx2::gemmActInfoBytes(t, nCols) / 8 * static_cast<size_t>(nTokens) + 1);
    std::vector<uint64_t> panel(avx2::gemmPanelBytes(t, nCols) / 8 + 8);
    void* scratch = reinterpret_cast<void*>((reinterpret_cast<uintptr_t>(panel.data()) + 31) & ~uintptr_t{31});
    // Each panel is timed alone too: the fastest one is the figure least disturbed by other
    // processes on a shared machine.
    double fastestPanel = 1e30;
    const auto start = std::chrono::steady_clock::now();
    for (int r = 0; r < reps; ++r) {
        avx2::gemmActInfo(m, 0, nTokens, info.data());
        for (int64_t row0 = 0; row0 + 8 <= nRows; row0 += 8) {
            const auto panelStart = std::chrono::steady_clock::now();
            avx2::gemmPanel(m, info.data(), row0, scratch);
            const double p = std::chrono::duration<double>(std::chrono::steady_clock::now() - panelStart).count();
            fastestPanel = p < fastestPanel ? p : fastestPanel;
        }
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    int bad = 0;
    for (int64_t k = 0; k < nTokens; k += 7)
        for (int64_t r = 0; r + 8 <= nRows / 8 * 8; r += 13) {
            const float want = ref::vecDot(t, w.data() + static_cast<size_t>(r) * wRow,
                                           acts.data() + static_cast<size_t>(k) * wRow, nCols);
            if (std::bit_cast<uint32_t>(want) != std::bit_cast<uint32_t>(y[static_cast<size_t>(k * nRows + r)])) ++bad;
        }
    const double flops =
        2.0 * static_cast<double>(nRows / 8 * 8) * static_cast<double>(nCols) * static_cast<double>(nTokens) * reps;
    ThreadPool pool(1);
    const double peak = measureFmaPeak(pool).gflops;  // right after, to see the load of the moment
    const double fastest = 2.0 * 8 * static_cast<double>(nCols) * static_cast<double>(nTokens) / fastestPanel * 1e-9;
    std::printf(
        "%s%s %lldx%lld x %lld tokens x %d: %.3f s, %.2f GFLOP/s (fastest panel %.2f; FMA peak %.1f), "
        "mismatches %d\n",
        m.avx512 ? "[avx-512] " : "[avx2] ", dtypeInfo(t).name, static_cast<long long>(nRows),
        static_cast<long long>(nCols), static_cast<long long>(nTokens), reps, s, flops / s * 1e-9, fastest, peak, bad);
    return bad == 0 ? 0 : 1;
}
