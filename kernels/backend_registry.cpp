// Lists the backends Hearth knows and whether each can run here, with the reason when not;
// picks the best CPU backend.
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

#include "kernels/backend.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cuda/cuda_backend.h"
#if defined(__x86_64__) || defined(__i386__)
#include "kernels/cpu/avx2/backend_avx2.h"
#define HEARTH_HAVE_AVX2_BACKEND 1
#endif

namespace hearth {

namespace {

// Empty when the AVX2 backend can run here, else why not.
std::string avx2Unavailable() {
#if defined(HEARTH_HAVE_AVX2_BACKEND)
    const CpuFeatures& f = cpuFeatures();
    if (!f.avx2 || !f.fma || !f.f16c) return "CPU lacks AVX2, FMA or F16C";
    if (!f.osSavesYmm) return "the operating system does not save AVX registers (XGETBV)";
    return "";
#else
    return "not an x86 CPU";
#endif
}

bool backendVariableIs(const char* value) {
    const char* v = std::getenv("HEARTH_BACKEND");
    return v != nullptr && std::strcmp(v, value) == 0;
}

// HEARTH_THREADS=N (N >= 1) overrides the physical-core default.
int defaultThreads() {
    const char* v = std::getenv("HEARTH_THREADS");
    const int n = v != nullptr ? std::atoi(v) : 0;
    return n > 0 ? n : physicalCoreCount();
}

}  // namespace

bool cudaRequestedByEnvironment() { return backendVariableIs("cuda"); }
bool cpuRequestedByEnvironment() { return backendVariableIs("cpu"); }

std::vector<BackendInfo> listBackends() {
    std::vector<BackendInfo> out;
    const CudaProbe cuda = probeCuda();
    out.push_back({"CUDA", cuda.available, cuda.reason, cuda.problem});
    const std::string avx2Reason = avx2Unavailable();
    if (avx2Reason.empty()) out.push_back({"CPU (AVX2, " + std::to_string(defaultThreads()) + " threads)", true, ""});
    else out.push_back({"CPU (AVX2)", false, avx2Reason, BackendProblem::Other});
    out.push_back({"CPU (reference)", true, ""});
    return out;
}

std::string cpuFallbackNote() {
    const std::string unavailable = avx2Unavailable();
    if (!unavailable.empty()) return unavailable + ": the slower portable kernels";
    const CpuLevelChoice c = cpuLevelChoice();
    if (c.used == CpuLevel::Reference) return c.why + ": the portable kernels";
    return "";
}

std::unique_ptr<Backend> makeBestCpuBackend(int nThreads) {
#if defined(HEARTH_HAVE_AVX2_BACKEND)
    if (avx2Enabled())  // implies the host runs it (cpu_features.h)
        return makeCpuAvx2Backend(nThreads > 0 ? nThreads : defaultThreads());
#endif
    return makeCpuReferenceBackend();
}

}  // namespace hearth
