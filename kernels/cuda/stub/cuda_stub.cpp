// The CUDA backend when Hearth was built without the CUDA toolkit (the one stub file:
// STYLE.md 8). The real plugin is the CUDA issue's work.
#include "kernels/cuda/cuda_backend.h"

namespace hearth {

CudaProbe probeCuda() { return {false, "not compiled with CUDA"}; }

}  // namespace hearth
