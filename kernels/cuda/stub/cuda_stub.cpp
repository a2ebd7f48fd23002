// The CUDA backend when Hearth was built without the CUDA toolkit (the one stub file:
// STYLE.md 8). With the toolkit, cuda/loader/cuda_loader.cpp takes its place.
#include "kernels/cuda/cuda_backend.h"

#include "kernels/backend.h"

namespace hearth {

namespace {
constexpr const char* kNotCompiled = "not compiled with CUDA";
}

CudaProbe probeCuda() { return {false, kNotCompiled, "", BackendProblem::NotBuilt}; }

std::unique_ptr<Backend> makeCudaBackend(std::string* whyNot) {
    if (whyNot != nullptr) *whyNot = kNotCompiled;
    return nullptr;
}

double measureCudaReadBandwidth(size_t, std::string* whyNot) {
    if (whyNot != nullptr) *whyNot = kNotCompiled;
    return 0.0;
}

double measureCudaMatvec(int, long long, long long, std::string* whyNot) {
    if (whyNot != nullptr) *whyNot = kNotCompiled;
    return 0.0;
}

}  // namespace hearth
