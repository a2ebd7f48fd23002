// Micro-benchmark of the K-quant prefill gemm (kernels/cpu/avx2/gemm_kquants.cpp) on one
// thread: ROWS x COLS weights of Q4_K, Q5_K or Q6_K against TOKENS Q8_K activations, REPS
// times (not a test; run it under callgrind or perf). Usage: gemm_kquant_bench [q4_k|q5_k|q6_k]
// [ROWS COLS TOKENS REPS] [MODE[,vnni]]. MODE: none (the panels), `quant` (the Q8_K
// quantization alone), `vnni` (the panels' AVX-VNNI tiles, if the CPU has them), `rows` (the
// matrix-vector tiles of the file's layout, matmulRows: the decode path without repacking),
// `packed` (the weights repacked first, packRows, its time printed, then the repacked decode
// path, gemmPackedRows), `packed-panels` (the panels built from the repacked weights); `,vnni`
// after packed or packed-panels takes the AVX-VNNI sums, `,avx512` after packed the AVX-512 VNNI
// tiles. Prints GMAC/s by wall time, by this
// thread's CPU time (steadier on a shared machine) and by the fastest repetition's product
// alone (with the weight bytes read per second), and the number of sampled values that differ from
// ref::vecDot (bitwise; exit code 1 if any).
#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <ctime>
#include <string>
#include <vector>

#include "kernels/cpu/avx2/kernels.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/reference/quants.h"

using namespace hearth;

namespace {

DType parseType(const std::string& s) {
    if (s == "q5_k") return DType::Q5_K;
    if (s == "q6_k") return DType::Q6_K;
    return DType::Q4_K;
}

// Random quant bytes with sane half scales (d, and dmin for Q4_K/Q5_K).
std::vector<uint8_t> randomWeights(DType t, int64_t nRows, int64_t nCols, std::mt19937& rng) {
    std::uniform_int_distribution<int> byte(0, 255);
    std::vector<uint8_t> w(rowBytes(t, nCols) * static_cast<size_t>(nRows));
    for (auto& b : w) b = static_cast<uint8_t>(byte(rng));
    const size_t blockBytes = dtypeInfo(t).blockBytes;
    for (size_t b = 0; b < w.size() / blockBytes; ++b) {
        const f16_t h[2] = {f32ToF16(0.01f + 0.001f * static_cast<float>(b % 17)), f32ToF16(0.02f)};
        if (t == DType::Q6_K) std::memcpy(&w[b * blockBytes + offsetof(BlockQ6_K, d)], h, 2);
        else std::memcpy(&w[b * blockBytes], h, 4);
    }
    return w;
}

// CPU time of this thread: on a loaded machine, time spent descheduled does not count.
double threadSeconds() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

}  // namespace

int main(int argc, char** argv) {
    const DType t = parseType(argc > 1 ? argv[1] : "q4_k");
    const int64_t nRows = argc > 2 ? std::atoll(argv[2]) : 5632, nCols = argc > 3 ? std::atoll(argv[3]) : 2048;
    const int64_t nTokens = argc > 4 ? std::atoll(argv[4]) : 128;
    const int reps = argc > 5 ? std::atoi(argv[5]) : 3;
    const std::string mode = argc > 6 ? argv[6] : "";
    const bool quantOnly = mode == "quant";
    const bool vnni = mode == "vnni" || mode.ends_with(",vnni");  // the AVX-VNNI tiles (if the CPU has them)
    const bool rowTiles = mode == "rows";
    const bool packedRows = mode.starts_with("packed") && !mode.starts_with("packed-panels");
    const bool packedPanels = mode.starts_with("packed-panels");
    std::mt19937 rng(5);
    const size_t wRow = rowBytes(t, nCols), aRow = rowBytes(DType::Q8_K, nCols);
    const std::vector<uint8_t> w = randomWeights(t, nRows, nCols, rng);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> x(static_cast<size_t>(nCols * nTokens));
    for (float& v : x) v = normal(rng);
    std::vector<uint8_t> acts(aRow * static_cast<size_t>(nTokens));
    std::vector<float> y(static_cast<size_t>(nRows * nTokens));
    avx2::MatmulArgs m{t, w.data(), wRow, nCols, acts.data(), aRow, nTokens, y.data(), nRows};
    m.avxVnni = vnni && cpuFeatures().canRunAvxVnni();
    // `,avx512` after packed: the AVX-512 VNNI decode tiles (gemm_kquants_avx512vnni.cpp), as the
    // backend runs them at level avx512.
    m.avx512Vnni = packedRows && mode.ends_with(",avx512") && cpuFeatures().canRunAvx512Vnni();
    std::vector<uint64_t> info(avx2::gemmActInfoBytes(t, nCols) / 8 * static_cast<size_t>(nTokens) + 1);
    std::vector<uint64_t> panel(avx2::gemmPanelBytes(t, nCols) / 8 + 8);
    void* scratch = reinterpret_cast<void*>((reinterpret_cast<uintptr_t>(panel.data()) + 31) & ~uintptr_t{31});
    std::vector<uint64_t> packed;
    size_t weightBytes = w.size();
    if (packedRows || packedPanels) {
        weightBytes = avx2::packedBytes(t, nRows, nCols);
        packed.resize(weightBytes / 8 + 8);
        void* aligned = reinterpret_cast<void*>((reinterpret_cast<uintptr_t>(packed.data()) + 63) & ~uintptr_t{63});
        const auto packStart = std::chrono::steady_clock::now();
        avx2::packRows(t, w.data(), nRows, nCols, 0, (nRows + 7) / 8, aligned);
        std::printf("repacked %zu bytes (the file's: %zu) in %.4f s\n", weightBytes, w.size(),
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - packStart).count());
        m.packed = aligned;
    }
    const auto start = std::chrono::steady_clock::now();
    const double cpuStart = threadSeconds();
    double best = 1e30;  // the fastest repetition (the machine is shared: the least disturbed)
    for (int r = 0; r < reps; ++r) {
        for (int64_t k = 0; k < nTokens; ++k)
            avx2::quantizeRow(DType::Q8_K, x.data() + k * nCols, acts.data() + static_cast<size_t>(k) * aRow, nCols);
        if (quantOnly) continue;
        const auto repStart = std::chrono::steady_clock::now();  // the product alone
        if (rowTiles) {
            avx2::matmulRows(m, 0, nRows);
        } else if (packedRows) {
            avx2::gemmActInfo(m, 0, nTokens, info.data());
            avx2::gemmPackedRows(m, info.data(), 0, nRows);
        } else {
            avx2::gemmActInfo(m, 0, nTokens, info.data());
            for (int64_t row0 = 0; row0 + 8 <= nRows; row0 += 8) avx2::gemmPanel(m, info.data(), row0, scratch);
        }
        best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - repStart).count());
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double cpu = threadSeconds() - cpuStart;
    int bad = 0;
    for (int64_t k = 0; k < nTokens && !quantOnly; k += 7)
        for (int64_t r = 0; r + 8 <= nRows; r += 13) {
            const float want = ref::vecDot(t, w.data() + static_cast<size_t>(r) * wRow,
                                           acts.data() + static_cast<size_t>(k) * aRow, nCols);
            if (std::bit_cast<uint32_t>(want) != std::bit_cast<uint32_t>(y[static_cast<size_t>(k * nRows + r)])) ++bad;
        }
    const double macs = static_cast<double>(nRows) * static_cast<double>(nCols) * static_cast<double>(nTokens) * reps;
    const char* path = quantOnly ? " (Q8_K quantization only)"
        : rowTiles               ? " rows"
        : packedRows             ? " packed"
        : packedPanels           ? " packed-panels"
                                 : " panels";
    std::printf(
        "%s %lldx%lld x %lld tokens x %d%s%s: %.3f s, %.2f GMAC/s (thread CPU time: %.2f GMAC/s; "
        "fastest repetition: %.2f GMAC/s, %.2f GB/s of weights), mismatches %d\n",
        dtypeInfo(t).name, static_cast<long long>(nRows), static_cast<long long>(nCols),
        static_cast<long long>(nTokens), reps, path,
        m.avx512Vnni    ? " AVX-512 VNNI"
            : m.avxVnni ? " AVX-VNNI"
                        : "",
        s, macs / s * 1e-9, macs / cpu * 1e-9, macs / reps / best * 1e-9,
        static_cast<double>(weightBytes) / best * 1e-9, bad);
    return bad == 0 ? 0 : 1;
}
