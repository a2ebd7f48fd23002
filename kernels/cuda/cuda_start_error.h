// Why CUDA cannot start, in the words a user needs: no NVIDIA driver, no NVIDIA GPU, a driver
// older than this build's CUDA runtime, or (otherwise) the runtime's own words with its code.
// Header-only and free of CUDA types, so that the plugin uses it and a test without CUDA checks it.
#pragma once

#include <string>
#include <string_view>

#include "kernels/backend_problem.h"

namespace hearth {

// What the loader learns from the NVIDIA driver library itself (libcuda.so.1, the driver API),
// without the plugin: whether it loads, cuInit(0)'s result, its CUDA version and device count.
struct CudaDriverFacts {
    bool driverLoaded = false;  // libcuda.so.1 could be opened (it ships with the driver)
    int initStatus = -1;  // cuInit(0)'s CUresult; -1: not called
    int driverVersion = 0;  // cuDriverGetVersion: 1000 * major + 10 * minor; 0: unknown
    int deviceCount = -1;  // cuDeviceGetCount; -1: unknown
    int buildVersion = 0;  // the CUDA this build's plugin was compiled with (same encoding); 0: unknown
};

// The plain reason CUDA is unavailable: no driver, no device, a driver of an older CUDA major
// version than the build (minor versions are compatible), else Other (the probe's words say
// it); None when the driver and a device are fine (the cause lies elsewhere).
inline BackendProblem cudaProblem(const CudaDriverFacts& f) {
    constexpr int kNoDevice = 100;  // CUDA_ERROR_NO_DEVICE (cuda.h)
    if (!f.driverLoaded) return BackendProblem::NoDriver;
    if (f.initStatus == kNoDevice || (f.initStatus == 0 && f.deviceCount == 0)) return BackendProblem::NoDevice;
    if (f.buildVersion > 0 && f.driverVersion > 0 && f.driverVersion / 1000 < f.buildVersion / 1000)
        return BackendProblem::DriverTooOld;
    if (f.initStatus == 0 && f.deviceCount > 0) return BackendProblem::None;
    return BackendProblem::Other;
}

// status: what cudaGetDeviceCount returned (cudaError_t as int); driverVersion /
// runtimeVersion: cudaDriverGetVersion / cudaRuntimeGetVersion (1000 * major + 10 * minor;
// the driver's is 0 when no driver is installed); runtimeText: cudaGetErrorString(status).
inline std::string describeCudaStartError(int status, int driverVersion, int runtimeVersion,
                                          std::string_view runtimeText) {
    constexpr int kInsufficientDriver = 35, kNoDevice = 100, kStubLibrary = 34;  // cudaError_t values (driver_types.h)
    const auto version = [](int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); };
    if (driverVersion == 0 || status == kStubLibrary) return "no NVIDIA driver is installed";
    if (status == kInsufficientDriver)
        return "the NVIDIA driver supports CUDA " + version(driverVersion) + ", older than this build's CUDA " +
            version(runtimeVersion) + ": update the driver";
    if (status == kNoDevice) return "no NVIDIA GPU was found";
    return "CUDA cannot start: " + std::string(runtimeText) + " (error " + std::to_string(status) + ")";
}

}  // namespace hearth
