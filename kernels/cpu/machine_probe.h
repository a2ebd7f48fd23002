// Measures what the machine gives with a number of threads: memory read bandwidth (wide loads
// into independent accumulators), STREAM triad bandwidth, and the fp32 FMA peak, against which
// `hearth-cli bench` states its decode and prefill speeds. AVX2 loops when the CPU has them
// (machine_probe_avx2.cpp), scalar loops otherwise. Each call runs for about a second or less;
// call from one thread at a time.
#pragma once

#include <cstdint>

namespace hearth {

class ThreadPool;

struct BandwidthSample {
    double readGBps = 0;  // 10^9 bytes read per second, best of the passes
    double triadGBps = 0;  // STREAM triad a = b + s·c: 3 arrays moved per element (2 read, 1 written), as STREAM counts
};

// bufferBytes: the read buffer (the triad uses three arrays of a third each); far larger than
// the caches for a memory figure (1 GiB by default). The buffers are mapped, touched by the
// pool's threads (first touch), measured over nPasses passes each, and unmapped before return.
// Returns zeros when the memory cannot be mapped.
BandwidthSample measureBandwidth(ThreadPool& pool, uint64_t bufferBytes = uint64_t{1} << 30, int nPasses = 3);

struct FmaPeak {
    double gflops = 0;  // 2 flops per lane per FMA; independent chains on every thread (the peak)
    double plainGflops = 0;  // the same threads each running a plain loop of 12 vfmadd231ps chains (asm)
    bool avx2 = false;  // false: scalar loops, no FMA instructions measured
    // The same chains on ZMM registers where the CPU has AVX-512 (0 otherwise): the ceiling of
    // the kernels that have an AVX-512 build (the float types' prefill).
    double avx512Gflops = 0;
};

// Runs each loop on all of the pool's threads for about seconds each, best of 3.
FmaPeak measureFmaPeak(ThreadPool& pool, double seconds = 0.2);

}  // namespace hearth
