// The AVX2 backend: AVX2 matmul, attention and row-wise operators split over the engine's thread pool;
// the other operators run the reference's code (bitwise the same results), spread by rows.
// Create it only when cpuFeatures().canRunAvx2(); makeBestCpuBackend() (backend.h) does.
#pragma once

#include <memory>

#include "kernels/backend.h"

namespace hearth {

// nThreads <= 0: one per physical core. The backend owns its pool.
std::unique_ptr<Backend> makeCpuAvx2Backend(int nThreads = 0);

}  // namespace hearth
