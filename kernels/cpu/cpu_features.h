// What the CPU and the OS let Hearth use, found once at run time (CPUID + XGETBV), and how
// many physical cores there are. The fast kernels are chosen from this, never from the
// compiler's target flags: packaged builds are baseline x86-64 (DESIGN.md, kernels/).
#pragma once

#include <string>

namespace hearth {

struct CpuFeatures {
    bool avx2 = false;
    bool fma = false;
    bool f16c = false;
    bool osSavesYmm = false;  // XCR0 has the SSE and AVX state bits: YMM registers survive a context switch
    bool avxVnni = false;  // AVX-VNNI: VEX-encoded vpdpbusd on YMM (needs no more OS state than AVX2)
    bool avx512f = false;  // AVX-512 Foundation
    bool avx512bw = false, avx512vl = false;  // byte/word instructions; their 128/256-bit forms
    bool avx512Vnni = false;  // AVX512_VNNI: vpdpbusd on ZMM
    bool osSavesZmm = false;  // XCR0 also has the opmask and both ZMM state bits
    bool amxListed = false;  // CPUID lists AMX-TILE (Hearth has no AMX kernels; reported by `info` only)
    bool amxOsEnabled = false;  // ...and XCR0 has the tile state bits (17, 18) and, on Linux, the kernel offers
        // them (some VMs fault on AMX code all the same: Hearth never runs any)
    // True when the AVX2 kernels may run: all four above.
    bool canRunAvx2() const { return avx2 && fma && f16c && osSavesYmm; }
    // True when the AVX-VNNI builds of some AVX2 kernels (kernels/cpu/avx2/*_vnni.cpp) may run.
    bool canRunAvxVnni() const { return canRunAvx2() && avxVnni; }
    // True when the AVX-512 builds of some AVX2 kernels (kernels/cpu/avx2/*_avx512.cpp) may run.
    bool canRunAvx512() const { return canRunAvx2() && avx512f && osSavesZmm; }
    // True when the AVX-512 VNNI build of the repacked 32-block decode tiles may run (level
    // avx512 on a host that also has AVX512BW, AVX512VL and AVX512_VNNI).
    bool canRunAvx512Vnni() const { return canRunAvx512() && avx512bw && avx512vl && avx512Vnni; }
    // True when the VNNI builds of the 32-block kernels may run: VEX-encoded where the CPU has
    // AVX-VNNI, else EVEX on YMM where it has AVX512_VNNI (vnniNeedsEvex: AMD Zen 4).
    bool canRunVnni() const { return canRunAvxVnni() || canRunAvx512Vnni(); }
    bool vnniNeedsEvex() const { return !canRunAvxVnni() && canRunAvx512Vnni(); }
};

// Detected on the first call and cached; thread-safe.
const CpuFeatures& cpuFeatures();

// The CPU kernel levels, each a superset of the one before: the scalar reference, the AVX2
// backend, its VNNI builds (32-block and K-quant integer gemms; VEX or EVEX encoded, as the
// CPU has AVX-VNNI or only AVX512_VNNI), its AVX-512 builds (float gemm, AVX-512 VNNI tiles). Every level gives bitwise the same results. The one definition of HEARTH_CPU: the
// environment variable names the highest level to use (reference, avx2, avx2-vnni, avx512);
// unset, empty or "best" means the best this host runs. A level the host lacks is capped to the
// best below it that it has. A later issue that adds a level adds it here.
enum class CpuLevel { Reference = 0, Avx2 = 1, Avx2Vnni = 2, Avx512 = 3 };
inline constexpr CpuLevel kCpuLevels[] = {CpuLevel::Reference, CpuLevel::Avx2, CpuLevel::Avx2Vnni, CpuLevel::Avx512};

// "reference", "avx2", "avx2-vnni", "avx512".
const char* cpuLevelName(CpuLevel level);
// The level a name (as above) means; false for anything else.
bool parseCpuLevel(const char* name, CpuLevel* level);
// Whether this host can run what the level adds: AVX2 + FMA + F16C with YMM state for avx2, and
// also AVX-VNNI or AVX512_VNNI (canRunVnni) for avx2-vnni, AVX-512F with ZMM state for avx512
// (not necessarily any VNNI).
bool hostRuns(CpuLevel level);
// The best level this host runs.
CpuLevel bestHostLevel();

// What HEARTH_CPU asked for and what is used, read from the environment on every call (callers
// decide once, e.g. when a backend is constructed).
struct CpuLevelChoice {
    CpuLevel used = CpuLevel::Reference;
    std::string requested;  // HEARTH_CPU as given; empty when unset
    std::string why;  // how `used` was chosen, in words, e.g. "the best this CPU runs"
    bool valid = true;  // false when HEARTH_CPU names no level (the best level is used)
};
CpuLevelChoice cpuLevelChoice();

// The AVX2 backend's switches, from cpuLevelChoice(): whether it may be used at all, and
// whether it uses its VNNI and AVX-512 builds (only where the host runs them and the level
// allows them; the results are bitwise the same either way).
bool avx2Enabled();
bool avxVnniEnabled();
bool avx512Enabled();

// Physical cores this process may run on (hyper-threads of one core count once), at least 1.
// Linux: sysfs topology of the CPUs in the affinity mask; elsewhere, or when that cannot be
// read, std::thread::hardware_concurrency().
int physicalCoreCount();

}  // namespace hearth
