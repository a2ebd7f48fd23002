// The device read-bandwidth yardstick: a grid-stride loop summing 16-byte loads, timed with
// CUDA events. Decode speed is reported as a share of what this kernel reaches.
#include <algorithm>
#include <vector>

#include "kernels/cuda/plugin/device_memory.h"
#include "kernels/cuda/plugin/ops.h"

namespace hearth::cuda {
namespace {

__global__ void readKernel(const uint4* data, size_t n, float* sink) {
    uint32_t acc = 0;
    for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<size_t>(gridDim.x) * blockDim.x) {
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

double timeMatvec(DType t, int64_t rows, int64_t cols) {
    const bool planar = choosePlanarRows(t, cols);  // the layout packWeight would choose
    const size_t weightBytes = rowBytes(t, cols) * static_cast<size_t>(rows);
    DeviceBuffer w(weightBytes), x(static_cast<size_t>(cols) * sizeof(float)),
        y(static_cast<size_t>(rows) * sizeof(float));
    // 0x11 bytes: every half scale is 0x1111 (a small positive number), every quant 1.
    check(cudaMemset(w.get(), 0x11, weightBytes), "cudaMemset");
    check(cudaMemset(x.get(), 0, static_cast<size_t>(cols) * sizeof(float)), "cudaMemset");
    const ActSizes sizes = actSizes(1, cols);
    DeviceBuffer q(sizes.q), d(sizes.d), s(sizes.s), bsums(sizes.bsums), f(sizes.f);
    const ActBuffers a{q.as<int8_t>(), d.as<float>(), s.as<float>(), bsums.as<int16_t>(), f.as<float>()};
    cudaEvent_t start, stop;
    check(cudaEventCreate(&start), "cudaEventCreate");
    check(cudaEventCreate(&stop), "cudaEventCreate");
    std::vector<float> ms;
    for (int rep = 0; rep < 22; ++rep) {  // the first run warms up and is not counted
        cudaEventRecord(start, nullptr);
        quantizeActivations(t, x.as<float>(), 1, cols, a, nullptr);
        if (planar) {
            MatvecJobs jobs;
            jobs.w[0] = w.as<uint8_t>(), jobs.nRows[0] = rows, jobs.y[0] = y.as<float>(), jobs.count = 1;
            matvecPlanar(t, jobs, cols, a, 1, nullptr);
        } else {
            matvec(t, w.as<uint8_t>(), rows, cols, a, 1, y.as<float>(), nullptr);
        }
        cudaEventRecord(stop, nullptr);
        check(cudaEventSynchronize(stop), "the mat-vec kernels");
        float elapsed = 0.0f;
        cudaEventElapsedTime(&elapsed, start, stop);
        if (rep > 0) ms.push_back(elapsed);
    }
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    std::sort(ms.begin(), ms.end());
    const double median = ms[ms.size() / 2];
    return median > 0.0 ? static_cast<double>(weightBytes) / (median * 1e6) : -1.0;
}

}  // namespace hearth::cuda
