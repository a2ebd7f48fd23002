// The device read-bandwidth yardstick: a grid-stride loop summing 16-byte loads, timed with
// CUDA events. Decode speed is reported as a share of what this kernel reaches.
#include "kernels/cuda/plugin/ops.h"

namespace hearth::cuda {
namespace {

__global__ void readKernel(const uint4* data, size_t n, float* sink) {
    uint32_t acc = 0;
    for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n; i += static_cast<size_t>(gridDim.x) * blockDim.x) {
        const uint4 v = data[i];
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == 0x12345678u) *sink = 1.0f;  // keeps the loads; practically never true
}

}  // namespace

float timeRead(const void* data, size_t bytes, float* sink, cudaStream_t s) {
    int device = 0, sms = 0;
    cudaGetDevice(&device);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    cudaEvent_t start, stop;
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    const auto n = bytes / 16;
    readKernel<<<static_cast<unsigned>(sms * 8), 512, 0, s>>>(static_cast<const uint4*>(data), n, sink);  // warm-up
    cudaEventRecord(start, s);
    readKernel<<<static_cast<unsigned>(sms * 8), 512, 0, s>>>(static_cast<const uint4*>(data), n, sink);
    cudaEventRecord(stop, s);
    cudaEventSynchronize(stop);
    float ms = 0.0f;
    cudaEventElapsedTime(&ms, start, stop);
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    return ms;
}

}  // namespace hearth::cuda
