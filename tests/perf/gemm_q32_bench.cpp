// Micro-benchmark of the 32-element block prefill gemm (kernels/cpu/avx2/gemm_q32.cpp) on one
// thread: ROWS x COLS weights of a type against TOKENS Q8 activations, REPS times (not a test).
// Prints the fastest repetition's time and GMAC/s (on a shared machine the minimum over many
// short repetitions is the stable figure), and checks a sample of values against ref::vecDot
// bitwise. `gemm_q32_bench TYPE ROWS COLS TOKENS REPS [pack|rows|packed|packed-panels]`; `pack`:
// the panel packing alone; `rows`: the matrix-vector tiles (matmulRows, the decode path of the
// file's layout) instead of the panels; `packed`: the weights repacked first (packRowsQ32, its
// time printed), then the repacked decode path (gemmPackedRows); `packed-panels`: the panels
// built from the repacked weights. Also prints the weight bytes read per second.
// Runs the builds the backend would (AVX-512 VNNI for the repacked rows where the CPU has it at
// level avx512, AVX-VNNI at avx2-vnni, AVX2 with HEARTH_CPU=avx2).
#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/avx2/kernels.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/reference/quants.h"

using namespace hearth;

namespace {

DType parseType(const std::string& s) {
    if (s == "q4_0") return DType::Q4_0;
    if (s == "q4_1") return DType::Q4_1;
    if (s == "q5_0") return DType::Q5_0;
    if (s == "q5_1") return DType::Q5_1;
    return DType::Q8_0;
}

}  // namespace

int main(int argc, char** argv) {
    if (!cpuFeatures().canRunAvx2()) {
        std::fprintf(stderr, "this CPU (or OS) lacks AVX2, FMA or F16C\n");
        return 2;
    }
    const DType t = parseType(argc > 1 ? argv[1] : "q4_0");
    const int64_t nRows = argc > 2 ? std::atoll(argv[2]) : 5632, nCols = argc > 3 ? std::atoll(argv[3]) : 2048;
    const int64_t nTokens = argc > 4 ? std::atoll(argv[4]) : 128;
    const int reps = argc > 5 ? std::atoi(argv[5]) : 3;
    const bool packOnly = argc > 6 && std::string(argv[6]) == "pack";
    const bool rowTiles = argc > 6 && std::string(argv[6]) == "rows";
    const bool packedRows = argc > 6 && std::string(argv[6]) == "packed";
    const bool packedPanels = argc > 6 && std::string(argv[6]) == "packed-panels";
    std::mt19937 rng(5);
    std::uniform_int_distribution<int> byte(0, 255);
    const size_t wRow = rowBytes(t, nCols);
    std::vector<uint8_t> w(wRow * static_cast<size_t>(nRows));
    for (auto& b : w) b = static_cast<uint8_t>(byte(rng));
    const size_t blockBytes = dtypeInfo(t).blockBytes;
    for (size_t b = 0; b < w.size() / blockBytes; ++b) {  // sane half scales
        const f16_t h[2] = {f32ToF16(0.01f + 0.001f * static_cast<float>(b % 17)), f32ToF16(-0.02f)};
        std::memcpy(&w[b * blockBytes], h, t == DType::Q4_1 || t == DType::Q5_1 ? 4 : 2);
    }
    const DType actType = ref::vecDotType(t);
    const size_t aRow = rowBytes(actType, nCols);
    std::vector<uint8_t> acts(aRow * static_cast<size_t>(nTokens));
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> x(static_cast<size_t>(nCols));
    for (int64_t k = 0; k < nTokens; ++k) {
        for (float& v : x) v = normal(rng);
        ref::quantizeRow(actType, x.data(), acts.data() + static_cast<size_t>(k) * aRow, nCols);
    }
    std::vector<float> y(static_cast<size_t>(nRows * nTokens));
    avx2::MatmulArgs m{t, w.data(), wRow, nCols, acts.data(), aRow, nTokens, y.data(), nRows, avxVnniEnabled()};
    m.vnniEvex = m.avxVnni && cpuFeatures().vnniNeedsEvex();  // as the backend chooses
    m.avx512Vnni = m.avxVnni && avx512Enabled() && cpuFeatures().canRunAvx512Vnni();
    std::vector<uint64_t> info(avx2::gemmActInfoBytes(t, nCols) / 8 * static_cast<size_t>(nTokens) + 1);
    std::vector<uint64_t> panel(avx2::gemmPanelBytes(t, nCols) / 8 + 8);
    void* scratch = reinterpret_cast<void*>((reinterpret_cast<uintptr_t>(panel.data()) + 31) & ~uintptr_t{31});
    if (packOnly) m.nTokens = 0;  // the panel packing alone
    std::vector<uint64_t> packed;
    size_t weightBytes = w.size();
    if (packedRows || packedPanels) {
        weightBytes = avx2::packedBytesQ32(t, nRows, nCols);
        packed.resize(weightBytes / 8 + 1);
        const auto start = std::chrono::steady_clock::now();
        avx2::packRowsQ32(t, w.data(), nRows, nCols, 0, (nRows + 7) / 8, packed.data());
        std::printf("repacked %zu bytes in %.4f s\n", weightBytes,
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
        m.packed = packed.data();
    }
    double s = 1e30;  // the fastest repetition (the machine is shared: the minimum is the least disturbed)
    for (int r = 0; r < reps; ++r) {
        const auto start = std::chrono::steady_clock::now();
        if (rowTiles) {
            avx2::matmulRows(m, 0, nRows);
        } else if (packedRows) {
            avx2::gemmActInfo(m, 0, m.nTokens, info.data());
            avx2::gemmPackedRows(m, info.data(), 0, nRows);
        } else {
            avx2::gemmActInfo(m, 0, m.nTokens, info.data());
            for (int64_t row0 = 0; row0 + 8 <= nRows; row0 += 8) avx2::gemmPanel(m, info.data(), row0, scratch);
        }
        s = std::min(s, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    int bad = 0;
    for (int64_t k = 0; k < m.nTokens; k += 7)
        for (int64_t r = 0; r < nRows; r += 13) {
            const float want = ref::vecDot(t, w.data() + static_cast<size_t>(r) * wRow,
                                           acts.data() + static_cast<size_t>(k) * aRow, nCols);
            if (std::bit_cast<uint32_t>(want) != std::bit_cast<uint32_t>(y[static_cast<size_t>(k * nRows + r)])) ++bad;
        }
    const double macs = static_cast<double>(nRows) * static_cast<double>(nCols) * static_cast<double>(m.nTokens);
    std::printf("%s %s %lldx%lld x %lld tokens x %d: best %.4f s, %.2f GMAC/s, %.2f GB/s of weights, mismatches %d\n",
                m.avx512Vnni ? "AVX-512 VNNI" : m.vnniEvex ? "VNNI (EVEX)" : m.avxVnni ? "AVX-VNNI" : "AVX2", dtypeInfo(t).name,
                static_cast<long long>(nRows),
                static_cast<long long>(nCols), static_cast<long long>(m.nTokens), reps, s, macs / s * 1e-9,
                static_cast<double>(weightBytes) / s * 1e-9, bad);
    return bad == 0 ? 0 : 1;
}
