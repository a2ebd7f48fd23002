// Why CUDA cannot start, in the words a user needs: no NVIDIA driver, no NVIDIA GPU, a driver
// older than this build's CUDA runtime, or (otherwise) the runtime's own words with its code.
// Header-only and free of CUDA types, so that the plugin uses it and a test without CUDA checks it.
#pragma once

#include <string>
#include <string_view>

namespace hearth {

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
