// The plugin's C entry points (plugin_api.h): probing device 0, creating the backend and the
// bandwidth yardstick, each turning CUDA errors into a reason string instead of a crash.
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include "kernels/backend.h"
#include "kernels/cuda/cuda_start_error.h"
#include "kernels/cuda/plugin/cuda_backend.h"
#include "kernels/cuda/plugin/device_memory.h"
#include "kernels/cuda/plugin/ops.h"
#include "kernels/cuda/plugin_api.h"

namespace {

void copyOut(const std::string& text, char* out, size_t cap) {
    if (out == nullptr || cap == 0) return;
    std::snprintf(out, cap, "%s", text.c_str());
}

// Empty when device 0 can run the kernels, else why not; fills `device` with its name.
std::string deviceProblem(std::string& device) {
    int count = 0;  // cudaGetDeviceCount leaves it untouched on error (TOOLCHAIN.md)
    const cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess) {
        int driverVersion = 0, runtimeVersion = 0;  // left 0 when they cannot be read
        cudaDriverGetVersion(&driverVersion);
        cudaRuntimeGetVersion(&runtimeVersion);
        return hearth::describeCudaStartError(static_cast<int>(status), driverVersion, runtimeVersion,
                                              cudaGetErrorString(status));
    }
    if (count == 0) return "no NVIDIA GPU was found";
    cudaDeviceProp prop{};
    if (const cudaError_t e = cudaGetDeviceProperties(&prop, 0); e != cudaSuccess)
        return std::string("cannot query CUDA device 0: ") + cudaGetErrorString(e);
    device = std::string(prop.name) + " (sm_" + std::to_string(prop.major) + std::to_string(prop.minor) + ", " +
        std::to_string(prop.totalGlobalMem >> 30) + " GiB)";
    if (prop.major * 10 + prop.minor < 75)
        return device + " is older than the oldest GPU this build supports (sm_75, Turing)";
    return "";
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) int hearth_cuda_abi(void) { return HEARTH_CUDA_PLUGIN_ABI; }

__attribute__((visibility("default"))) int hearth_cuda_probe(char* device, size_t deviceCap, char* why, size_t whyCap) {
    std::string name;
    const std::string problem = deviceProblem(name);
    copyOut(name, device, deviceCap);
    copyOut(problem, why, whyCap);
    return problem.empty() ? 1 : 0;
}

__attribute__((visibility("default"))) hearth::Backend* hearth_cuda_create(char* why, size_t whyCap) {
    std::string name;
    if (const std::string problem = deviceProblem(name); !problem.empty()) {
        copyOut(problem, why, whyCap);
        return nullptr;
    }
    try {
        return hearth::cuda::createBackend();
    } catch (const std::exception& e) {
        copyOut(e.what(), why, whyCap);
        return nullptr;
    }
}

__attribute__((visibility("default"))) double hearth_cuda_read_bandwidth(size_t bytes, char* why, size_t whyCap) {
    std::string name;
    if (const std::string problem = deviceProblem(name); !problem.empty()) {
        copyOut(problem, why, whyCap);
        return -1.0;
    }
    try {
        bytes = bytes / 16 * 16;
        hearth::cuda::DeviceBuffer data(bytes), sink(sizeof(float));
        hearth::cuda::check(cudaMemset(data.get(), 1, bytes), "cudaMemset");
        const float ms = hearth::cuda::timeRead(data.get(), bytes, sink.as<float>(), nullptr);
        hearth::cuda::check(cudaGetLastError(), "the read kernel");
        return ms > 0.0f ? static_cast<double>(bytes) / (static_cast<double>(ms) * 1e6) : -1.0;
    } catch (const std::exception& e) {
        copyOut(e.what(), why, whyCap);
        return -1.0;
    }
}

__attribute__((visibility("default"))) double hearth_cuda_matvec_bandwidth(int dtype, long long rows, long long cols,
                                                                           char* why, size_t whyCap) {
    std::string name;
    if (const std::string problem = deviceProblem(name); !problem.empty()) {
        copyOut(problem, why, whyCap);
        return -1.0;
    }
    try {
        return hearth::cuda::timeMatvec(static_cast<hearth::DType>(dtype), rows, cols);
    } catch (const std::exception& e) {
        copyOut(e.what(), why, whyCap);
        return -1.0;
    }
}

}  // extern "C"
