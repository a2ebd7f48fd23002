// Runtime CPU feature detection (CPUID + XGETBV) and the physical core count.
#include "kernels/cpu/cpu_features.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <utility>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#if defined(__linux__)
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace hearth {
namespace {

#if defined(__x86_64__) || defined(__i386__)
// Whether the kernel offers AMX tile data to processes (arch_prctl ARCH_GET_XCOMP_SUPP, which
// only reads). Off Linux, XCR0 alone decides.
bool linuxOffersAmx() {
#if defined(__linux__) && defined(__x86_64__)
    constexpr long kArchGetXcompSupp = 0x1021;  // asm/prctl.h
    unsigned long long mask = 0;
    if (syscall(SYS_arch_prctl, kArchGetXcompSupp, &mask) != 0) return false;
    return ((mask >> 17) & 3u) == 3u;
#else
    return true;
#endif
}

// XGETBV is written as asm so that this file needs no -mxsave (it is built for baseline x86-64).
unsigned long long readXcr0() {
    unsigned int eax = 0, edx = 0;
    __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
    return (static_cast<unsigned long long>(edx) << 32) | eax;
}

// Intel SDM vol. 1, 14.3 "Detection of Intel AVX instructions": AVX needs OSXSAVE and the OS
// enabling XMM and YMM state in XCR0; AVX2 is CPUID.(7,0):EBX bit 5. AVX-VNNI is
// CPUID.(7,1):EAX bit 4 (Intel SDM vol. 2, CPUID; leaf 7's subleaf count is (7,0):EAX).
// AVX-512F is CPUID.(7,0):EBX bit 16, usable when XCR0 also enables the opmask, ZMM_Hi256 and
// Hi16_ZMM state (bits 5-7; SDM vol. 1, 15.2 "Detection of AVX-512 Foundation instructions").
CpuFeatures detect() {
    CpuFeatures f;
    unsigned int eax, ebx, ecx, edx;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return f;
    const bool osxsave = (ecx >> 27) & 1u, avx = (ecx >> 28) & 1u;
    f.fma = (ecx >> 12) & 1u;
    f.f16c = (ecx >> 29) & 1u;
    const unsigned long long xcr0 = osxsave && avx ? readXcr0() : 0;
    f.osSavesYmm = (xcr0 & 0x6u) == 0x6u;
    f.osSavesZmm = (xcr0 & 0xE6u) == 0xE6u;
    if (__get_cpuid_max(0, nullptr) < 7 || !__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return f;
    f.avx2 = (ebx >> 5) & 1u;
    f.avx512f = (ebx >> 16) & 1u;
    f.avx512bw = (ebx >> 30) & 1u;
    f.avx512vl = (ebx >> 31) & 1u;
    f.avx512Vnni = (ecx >> 11) & 1u;
    // AMX-TILE is CPUID.(7,0):EDX bit 24; its state is XCR0 bits 17 (XTILECFG) and 18
    // (XTILEDATA). Linux also gates it per process (ARCH_GET_XCOMP_SUPP lists what it offers).
    f.amxListed = (edx >> 24) & 1u;
    f.amxOsEnabled = f.amxListed && ((xcr0 >> 17) & 3u) == 3u && linuxOffersAmx();
    const unsigned int leaf7Count = eax;
    if (leaf7Count >= 1 && __get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx)) f.avxVnni = (eax >> 4) & 1u;
    return f;
}
#else
CpuFeatures detect() { return {}; }
#endif

int fallbackCount() { return std::max(1u, std::thread::hardware_concurrency()); }

#if defined(__linux__)
// Counts distinct (package, core) pairs among the CPUs this process may run on, so that a
// thread pool sized from it puts one thread per core even with SMT or a restricted cpuset.
int linuxPhysicalCores() {
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return 0;
    std::set<std::pair<int, int>> cores;
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
        if (!CPU_ISSET(cpu, &allowed)) continue;
        const std::string dir = "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/";
        std::ifstream coreFile(dir + "core_id"), packageFile(dir + "physical_package_id");
        int core = -1, package = -1;
        if (!(coreFile >> core) || !(packageFile >> package)) return 0;  // no topology: give up
        cores.insert({package, core});
    }
    return static_cast<int>(cores.size());
}
#endif

}  // namespace

const CpuFeatures& cpuFeatures() {
    static const CpuFeatures features = detect();
    return features;
}

const char* cpuLevelName(CpuLevel level) {
    switch (level) {
    case CpuLevel::Reference: return "reference";
    case CpuLevel::Avx2: return "avx2";
    case CpuLevel::Avx2Vnni: return "avx2-vnni";
    case CpuLevel::Avx512: return "avx512";
    }
    return "reference";
}

bool parseCpuLevel(const char* name, CpuLevel* level) {
    if (name == nullptr) return false;
    for (CpuLevel l : kCpuLevels)
        if (std::strcmp(name, cpuLevelName(l)) == 0) {
            *level = l;
            return true;
        }
    return false;
}

bool hostRuns(CpuLevel level) {
    const CpuFeatures& f = cpuFeatures();
    switch (level) {
    case CpuLevel::Reference: return true;
    case CpuLevel::Avx2: return f.canRunAvx2();
    case CpuLevel::Avx2Vnni: return f.canRunVnni();
    case CpuLevel::Avx512: return f.canRunAvx512();
    }
    return false;
}

CpuLevel bestHostLevel() {
    CpuLevel best = CpuLevel::Reference;
    for (CpuLevel l : kCpuLevels)
        if (hostRuns(l)) best = l;
    return best;
}

CpuLevelChoice cpuLevelChoice() {
    CpuLevelChoice c;
    const char* env = std::getenv("HEARTH_CPU");
    c.requested = env != nullptr ? env : "";
    const CpuLevel best = bestHostLevel();
    CpuLevel cap = best;
    if (c.requested.empty() || c.requested == "best") {
        c.why = best == CpuLevel::Reference ? "the CPU (or OS) lacks AVX2, FMA or F16C" : "the best this CPU runs";
        c.used = best;
        return c;
    }
    if (!parseCpuLevel(env, &cap)) {
        c.valid = false;
        c.used = best;
        c.why = "HEARTH_CPU=" + c.requested +
            " names no level (reference, avx2, avx2-vnni, avx512): the best this CPU runs";
        return c;
    }
    // The highest level at or below the cap that the host runs (the reference always runs).
    c.used = CpuLevel::Reference;
    for (CpuLevel l : kCpuLevels)
        if (l <= cap && hostRuns(l)) c.used = l;
    c.why = c.used == cap ? "HEARTH_CPU=" + c.requested
                          : "HEARTH_CPU=" + c.requested + ", which this CPU (or OS) cannot run";
    return c;
}

bool avx2Enabled() { return cpuLevelChoice().used >= CpuLevel::Avx2; }

bool avxVnniEnabled() { return cpuFeatures().canRunVnni() && cpuLevelChoice().used >= CpuLevel::Avx2Vnni; }

bool avx512Enabled() { return cpuFeatures().canRunAvx512() && cpuLevelChoice().used >= CpuLevel::Avx512; }

int physicalCoreCount() {
#if defined(__linux__)
    static const int count = [] {
        const int n = linuxPhysicalCores();
        return n > 0 ? n : fallbackCount();
    }();
    return count;
#else
    return fallbackCount();
#endif
}

}  // namespace hearth
