// What the CPU and the OS let Hearth use, found once at run time (CPUID + XGETBV), and how
// many physical cores there are. The fast kernels are chosen from this, never from the
// compiler's target flags: packaged builds are baseline x86-64 (DESIGN.md, kernels/).
#pragma once

namespace hearth {

struct CpuFeatures {
    bool avx2 = false;
    bool fma = false;
    bool f16c = false;
    bool osSavesYmm = false;  // XCR0 has the SSE and AVX state bits: YMM registers survive a context switch
    bool avxVnni = false;     // AVX-VNNI: VEX-encoded vpdpbusd on YMM (needs no more OS state than AVX2)
    bool avx512f = false;     // AVX-512 Foundation
    bool osSavesZmm = false;  // XCR0 also has the opmask and both ZMM state bits
    // True when the AVX2 kernels may run: all four above.
    bool canRunAvx2() const { return avx2 && fma && f16c && osSavesYmm; }
    // True when the AVX-VNNI builds of some AVX2 kernels (kernels/cpu/avx2/*_vnni.cpp) may run.
    bool canRunAvxVnni() const { return canRunAvx2() && avxVnni; }
    // True when the AVX-512 builds of some AVX2 kernels (kernels/cpu/avx2/*_avx512.cpp) may run.
    bool canRunAvx512() const { return canRunAvx2() && avx512f && osSavesZmm; }
};

// Detected on the first call and cached; thread-safe.
const CpuFeatures& cpuFeatures();

// Whether the AVX2 backend should use its AVX-VNNI kernels: canRunAvxVnni(), unless the
// environment says HEARTH_CPU=avx2 (to compare or benchmark the plain AVX2 kernels on a VNNI
// CPU; the results are bitwise the same). Reads the environment on every call: callers decide
// once, e.g. when a backend is constructed.
bool avxVnniEnabled();
// Likewise for the AVX-512 kernels: canRunAvx512(), unless HEARTH_CPU=avx2.
bool avx512Enabled();

// Physical cores this process may run on (hyper-threads of one core count once), at least 1.
// Linux: sysfs topology of the CPUs in the affinity mask; elsewhere, or when that cannot be
// read, std::thread::hardware_concurrency().
int physicalCoreCount();

}  // namespace hearth
