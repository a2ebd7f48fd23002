// A tiny test driver for the gpu tests: plain executables (the device machine has no Qt), a
// named check per comparison, exit 0 (pass), 1 (a check failed) or 77 (skipped: CTest's
// SKIP_RETURN_CODE) when no CUDA device is usable, with the reason printed.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "kernels/backend.h"
#include "kernels/cuda/cuda_backend.h"

namespace hearth::gpu_test {

constexpr int kSkipped = 77;

struct Checks {
    int failures = 0, passes = 0;
    void expect(bool ok, const std::string& what) {
        if (ok) {
            ++passes;
        } else {
            ++failures;
            std::printf("FAIL: %s\n", what.c_str());
        }
    }
    int exitCode() const {
        std::printf("%d checks passed, %d failed\n", passes, failures);
        return failures == 0 ? 0 : 1;
    }
};

// The CUDA backend, or nullptr after printing why the test is skipped.
inline std::unique_ptr<Backend> cudaOrSkip() {
    std::string why;
    auto backend = makeCudaBackend(&why);
    if (!backend) std::printf("SKIP: no CUDA backend here: %s\n", why.c_str());
    return backend;
}

// What main returns when cudaOrSkip() found nothing: skipped, or failed where a device is
// required (HEARTH_GPU_REQUIRED=1: run-device-checks.sh on the lent GPU).
inline int noDeviceExit() {
    const char* required = std::getenv("HEARTH_GPU_REQUIRED");
    if (required != nullptr && std::string(required) == "1") {
        std::printf("FAIL: HEARTH_GPU_REQUIRED=1 but no CUDA backend\n");
        return 1;
    }
    return kSkipped;
}

// max |a - b| / max(max |b|, floor): the error relative to the reference's scale (as
// ggml's test-backend-ops normalises), so one tolerance fits outputs of any size.
inline double relativeError(const std::vector<float>& a, const std::vector<float>& b, double floor = 1e-6) {
    double maxDiff = 0.0, scale = floor;
    for (size_t i = 0; i < b.size(); ++i) {
        if (!std::isfinite(a[i]) || !std::isfinite(b[i])) return INFINITY;
        maxDiff = std::max(maxDiff, static_cast<double>(std::fabs(a[i] - b[i])));
        scale = std::max(scale, static_cast<double>(std::fabs(b[i])));
    }
    return a.size() == b.size() ? maxDiff / scale : INFINITY;
}

inline std::string describeError(const std::string& what, double err, double tol) {
    char buf[64];
    std::snprintf(buf, sizeof buf, ": error %.3g (tolerance %.3g)", err, tol);
    return what + buf;
}

}  // namespace hearth::gpu_test
