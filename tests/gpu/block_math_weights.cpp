// Weight rows for test_cuda_block_math (a .cu file, which cannot include the C++23 engine
// headers): random values quantized as synth.h quantizes them.
#include <random>
#include <vector>

#include "engine/model/synth.h"

namespace hearth::gpu_test {

std::vector<unsigned char> quantizedRow(DType t, int n, unsigned seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> dist(0.0f, 1.0f);
    std::vector<float> x(static_cast<size_t>(n));
    for (float& v : x) v = dist(rng);
    std::vector<unsigned char> out(rowBytes(t, n));
    synthQuantizeRow(t, x.data(), out.data(), n);
    return out;
}

}  // namespace hearth::gpu_test
