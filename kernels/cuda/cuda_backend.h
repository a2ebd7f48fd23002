// What the app may know of CUDA: whether a CUDA backend can run here, and why not.
// Plain C++17 (nvcc compiles what includes it). Without the toolkit, cuda/stub/ answers.
#pragma once

#include <string>

namespace hearth {

struct CudaProbe {
    bool available = false;
    std::string reason;  // why not available
};

CudaProbe probeCuda();

}  // namespace hearth
