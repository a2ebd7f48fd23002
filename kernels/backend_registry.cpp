// Lists the backends Hearth knows and whether each can run here, with the reason when not.
#include "kernels/backend.h"
#include "kernels/cuda/cuda_backend.h"

namespace hearth {
namespace {

bool cpuHasAvx2Fma() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
           __builtin_cpu_supports("f16c");
#else
    return false;
#endif
}

}  // namespace

std::vector<BackendInfo> listBackends() {
    std::vector<BackendInfo> out;
    const CudaProbe cuda = probeCuda();
    out.push_back({"CUDA", cuda.available, cuda.reason});
    out.push_back({"CPU (AVX2)", false,
                   cpuHasAvx2Fma() ? "CPU supports AVX2/FMA/F16C; fast kernels not built yet (issue 5)"
                                   : "CPU lacks AVX2, FMA or F16C"});
    out.push_back({"CPU (reference)", true, ""});
    return out;
}

}  // namespace hearth
