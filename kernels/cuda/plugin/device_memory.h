// Device memory for the CUDA backend: owned buffers and grow-only scratch, and the count of
// kernels the plugin launched.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace hearth::cuda {

// Throws std::runtime_error naming what failed when status is not cudaSuccess.
void check(cudaError_t status, const char* what);

// Kernels launched by this plugin in this process so far (every launcher adds its own; a cuBLAS
// call counts as one), for BackendCounters::launches.
uint64_t launches();
void countLaunches(uint64_t n);

class DeviceBuffer {
public:
    DeviceBuffer() = default;
    explicit DeviceBuffer(size_t bytes);
    DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(o.ptr_), bytes_(o.bytes_) {
        o.ptr_ = nullptr;
        o.bytes_ = 0;
    }
    DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    ~DeviceBuffer();
    void* get() const { return ptr_; }
    size_t size() const { return bytes_; }
    // Grows (contents lost) to hold at least bytes.
    void reserve(size_t bytes);
    template <class T>
    T* as() const {
        return static_cast<T*>(ptr_);
    }

private:
    void* ptr_ = nullptr;
    size_t bytes_ = 0;
};

}  // namespace hearth::cuda
