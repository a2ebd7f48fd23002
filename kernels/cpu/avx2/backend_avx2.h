// The AVX2 CPU backend: AVX2 matmul split by rows over the engine's thread pool; the other
// operators are the reference's (bitwise the same results, since they are the same code).
// Create it only when cpuFeatures().canRunAvx2(); makeBestCpuBackend() (backend.h) does.
#pragma once

#include <memory>

#include "kernels/backend.h"

namespace hearth {

// nThreads <= 0: one per physical core. The backend owns its pool.
std::unique_ptr<Backend> makeCpuAvx2Backend(int nThreads = 0);

}  // namespace hearth
