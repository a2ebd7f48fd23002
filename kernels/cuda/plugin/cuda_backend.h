// The CUDA implementation of Backend (cuda_backend.cpp), made by the plugin's entry points.
#pragma once

namespace hearth {
class Backend;
}

namespace hearth::cuda {

// A backend on the current device. Throws std::runtime_error when CUDA or cuBLAS fails.
Backend* createBackend();

}  // namespace hearth::cuda
