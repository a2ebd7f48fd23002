// Machine probes (machine_probe.h): buffers, threads and timing here (baseline code); the AVX2
// inner loops in machine_probe_avx2.cpp, chosen at run time; scalar loops otherwise.
#include "kernels/cpu/machine_probe.h"

#if defined(_WIN32)
#define WIN32_LEAN_AND_MEAN
#ifndef NOMINMAX  // libstdc++'s mingw configuration defines it already
#define NOMINMAX
#endif
#include <windows.h>
#else
#include <sys/mman.h>
#endif

#include <algorithm>
#include <atomic>
#include <chrono>
#include <utility>

#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/thread_pool.h"

namespace hearth {
#if defined(__x86_64__) || defined(__i386__)
namespace probe {
float readSumAvx2(const float* p, int64_t n);
void triadAvx2(float* a, const float* b, const float* c, float s, int64_t n);
float fmaChainsAvx2(int64_t iters);
void fmaPlainAsm(int64_t iters);
float fmaChainsAvx512(int64_t iters);
}  // namespace probe
constexpr bool kHaveAvx2Probes = true;
#else
namespace probe {
inline float readSumAvx2(const float*, int64_t) { return 0; }
inline void triadAvx2(float*, const float*, const float*, float, int64_t) {}
inline float fmaChainsAvx2(int64_t) { return 0; }
inline void fmaPlainAsm(int64_t) {}
inline float fmaChainsAvx512(int64_t) { return 0; }
}  // namespace probe
constexpr bool kHaveAvx2Probes = false;
#endif

namespace {

using Clock = std::chrono::steady_clock;

bool useAvx2() { return kHaveAvx2Probes && cpuFeatures().canRunAvx2(); }

float readSumScalar(const float* p, int64_t n) {
    float acc[8] = {};
    for (int64_t i = 0; i < n; i += 8)
        for (int k = 0; k < 8; ++k) acc[k] += p[i + k];
    return acc[0] + acc[1] + acc[2] + acc[3] + acc[4] + acc[5] + acc[6] + acc[7];
}

void triadScalar(float* a, const float* b, const float* c, float s, int64_t n) {
    for (int64_t i = 0; i < n; ++i) a[i] = b[i] + s * c[i];
}

float fmaChainsScalar(int64_t iters) {
    float acc[12];
    for (int k = 0; k < 12; ++k) acc[k] = static_cast<float>(k);
    for (int64_t i = 0; i < iters; ++i)
        for (float& x : acc) x = x * 0.999999f + 1e-6f;
    return acc[0] + acc[11];
}

// Anonymous memory, unmapped on destruction (not a std::vector: its pages are returned to the
// system at once, so the probe does not stay in the process's resident memory).
class MappedFloats {
public:
#if defined(_WIN32)
    explicit MappedFloats(uint64_t bytes) : bytes_(bytes) {
        data_ = static_cast<float*>(VirtualAlloc(nullptr, bytes, MEM_COMMIT | MEM_RESERVE, PAGE_READWRITE));
    }
    ~MappedFloats() {
        if (data_) VirtualFree(data_, 0, MEM_RELEASE);
    }
#else
    explicit MappedFloats(uint64_t bytes) : bytes_(bytes) {
        void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        data_ = p == MAP_FAILED ? nullptr : static_cast<float*>(p);
    }
    ~MappedFloats() {
        if (data_) munmap(data_, bytes_);
    }
#endif
    MappedFloats(const MappedFloats&) = delete;
    MappedFloats& operator=(const MappedFloats&) = delete;
    float* data() const { return data_; }

private:
    uint64_t bytes_;
    float* data_ = nullptr;
};

double secondsOf(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

constexpr int64_t kChunkFloats = int64_t{1} << 18;  // 1 MiB of floats per task

// Best-of-nPasses time of fn(begin, end) over nFloats floats in chunks on the pool.
template <class Fn>
double bestPassSeconds(ThreadPool& pool, int64_t nFloats, int nPasses, Fn fn) {
    double best = 1e30;
    for (int pass = 0; pass < nPasses; ++pass) {
        const auto t0 = Clock::now();
        pool.parallelFor(nFloats / kChunkFloats,
                         [&](int64_t b, int64_t e) { fn(b * kChunkFloats, (e - b) * kChunkFloats); });
        best = std::min(best, secondsOf(t0));
    }
    return best;
}

}  // namespace

BandwidthSample measureBandwidth(ThreadPool& pool, uint64_t bufferBytes, int nPasses) {
    const int64_t nFloats = static_cast<int64_t>(bufferBytes / 4) / (3 * kChunkFloats) * (3 * kChunkFloats);
    if (nFloats < 3 * kChunkFloats) return {};
    MappedFloats buffer(static_cast<uint64_t>(nFloats) * 4);
    float* p = buffer.data();
    if (p == nullptr) return {};
    // First touch by the threads that will read (the pages land near them on NUMA machines).
    pool.parallelFor(nFloats / kChunkFloats,
                     [&](int64_t b, int64_t e) { std::fill(p + b * kChunkFloats, p + e * kChunkFloats, 1.0f); });
    const bool avx2 = useAvx2();
    std::atomic<float> sink{0};
    const double readS = bestPassSeconds(pool, nFloats, nPasses, [&](int64_t at, int64_t n) {
        sink.store(avx2 ? probe::readSumAvx2(p + at, n) : readSumScalar(p + at, n), std::memory_order_relaxed);
    });
    // Triad over three arrays of a third each: a = b + s·c.
    const int64_t third = nFloats / 3;
    float *a = p, *b = p + third, *c = p + 2 * third;
    const double triadS = bestPassSeconds(pool, third, nPasses, [&](int64_t at, int64_t n) {
        if (avx2) probe::triadAvx2(a + at, b + at, c + at, 3.0f, n);
        else triadScalar(a + at, b + at, c + at, 3.0f, n);
    });
    BandwidthSample s;
    s.readGBps = static_cast<double>(nFloats) * 4 / readS / 1e9;
    s.triadGBps = static_cast<double>(third) * 4 * 3 / triadS / 1e9;
    return s;
}

namespace {

constexpr int64_t kItersPerTask = 1 << 16;

// Seconds of loop(kItersPerTask) run nTasks times over the pool.
template <class Loop>
double runSeconds(ThreadPool& pool, int64_t nTasks, Loop& loop) {
    const auto t0 = Clock::now();
    pool.parallelFor(nTasks, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) loop(kItersPerTask);
    });
    return secondsOf(t0);
}

// The task count for which a run of loop lasts about `seconds`.
template <class Loop>
int64_t calibrate(ThreadPool& pool, double seconds, Loop& loop) {
    for (int64_t nTasks = pool.size();; nTasks *= 2) {  // double until a run takes a tenth of the target
        const double s = runSeconds(pool, nTasks, loop);
        if (s > seconds / 10 || nTasks > (int64_t{1} << 24))
            return std::max<int64_t>(pool.size(),
                                     static_cast<int64_t>(static_cast<double>(nTasks) * seconds / std::max(s, 1e-6)));
    }
}

// Best flops per second of two loops over three rounds, the loops alternating so that both
// see the same share of a busy machine.
template <class LoopA, class LoopB>
std::pair<double, double> bestFlops(ThreadPool& pool, double seconds, double flopsPerIter, LoopA a, LoopB b) {
    const int64_t nA = calibrate(pool, seconds, a), nB = calibrate(pool, seconds, b);
    double bestA = 0, bestB = 0;
    for (int round = 0; round < 3; ++round) {
        bestA = std::max(bestA, static_cast<double>(nA) * kItersPerTask * flopsPerIter / runSeconds(pool, nA, a));
        bestB = std::max(bestB, static_cast<double>(nB) * kItersPerTask * flopsPerIter / runSeconds(pool, nB, b));
    }
    return {bestA, bestB};
}

}  // namespace

FmaPeak measureFmaPeak(ThreadPool& pool, double seconds) {
    FmaPeak peak;
    peak.avx2 = useAvx2();
    std::atomic<float> sink{0};
    if (peak.avx2) {
        constexpr double kFlopsPerIter = 12.0 * 8 * 2;  // 12 FMAs of 8 lanes, 2 flops each
        const auto [chains, plain] = bestFlops(
            pool, seconds, kFlopsPerIter,
            [&](int64_t n) { sink.store(probe::fmaChainsAvx2(n), std::memory_order_relaxed); },
            [](int64_t n) { probe::fmaPlainAsm(n); });
        peak.gflops = chains / 1e9;
        peak.plainGflops = plain / 1e9;
        if (cpuFeatures().canRunAvx512()) {
            auto zmm = [&](int64_t n) { sink.store(probe::fmaChainsAvx512(n), std::memory_order_relaxed); };
            peak.avx512Gflops = bestFlops(pool, seconds, kFlopsPerIter * 2, zmm, zmm).first / 1e9;
        }
    } else {
        auto scalar = [&](int64_t n) { sink.store(fmaChainsScalar(n), std::memory_order_relaxed); };
        peak.gflops = peak.plainGflops = bestFlops(pool, seconds, 12.0 * 2, scalar, scalar).first / 1e9;
    }
    return peak;
}

}  // namespace hearth
