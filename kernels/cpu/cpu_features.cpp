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
#endif

namespace hearth {
namespace {

#if defined(__x86_64__) || defined(__i386__)
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
    if (eax >= 1 && __get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx)) f.avxVnni = (eax >> 4) & 1u;
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

namespace {
bool plainAvx2Requested() {
    const char* cpu = std::getenv("HEARTH_CPU");
    return cpu != nullptr && std::strcmp(cpu, "avx2") == 0;
}
}  // namespace

bool avxVnniEnabled() { return cpuFeatures().canRunAvxVnni() && !plainAvx2Requested(); }

bool avx512Enabled() { return cpuFeatures().canRunAvx512() && !plainAvx2Requested(); }

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
