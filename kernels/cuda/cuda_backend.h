// What the app may know of CUDA: whether a CUDA backend can run here, and why not, and the
// backend itself (from the plugin, loaded at run time). Plain C++17 (nvcc compiles what
// includes it). Without the toolkit, cuda/stub/ answers; with it, cuda/loader/.
#pragma once

#include <memory>
#include <string>

#include "kernels/backend_problem.h"

namespace hearth {

class Backend;

struct CudaProbe {
    bool available = false;
    std::string reason;  // why not available
    std::string device;  // "NVIDIA H200 (sm_90, 139 GiB)" when available
    BackendProblem problem = BackendProblem::None;  // the reason as a value (cuda_start_error.h)
};

CudaProbe probeCuda();

// The CUDA backend on device 0, or nullptr with *whyNot set (plugin or libraries missing, no
// device, not compiled with CUDA). The plugin stays loaded for the life of the process.
std::unique_ptr<Backend> makeCudaBackend(std::string* whyNot);

// Device read bandwidth in GB/s, measured by the plugin's streaming-read kernel over `bytes`
// (for the benchmark: decode speed as a share of it). 0 with *whyNot set when CUDA is absent.
double measureCudaReadBandwidth(size_t bytes, std::string* whyNot);

// The one-token mat-vec kernels alone (quantizing the activation, then the dp4a product) on a
// rows x cols matrix of `dtype` (a DType value) already on the device, in GB/s of weights:
// what decode could reach without host round trips. 0 with *whyNot set when CUDA is absent.
double measureCudaMatvec(int dtype, long long rows, long long cols, std::string* whyNot);

}  // namespace hearth
