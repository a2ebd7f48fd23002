// Device buffers and the launch count (device_memory.h).
#include "kernels/cuda/plugin/device_memory.h"

#include <atomic>
#include <new>
#include <stdexcept>
#include <string>

namespace hearth::cuda {

void check(cudaError_t status, const char* what) {
    if (status != cudaSuccess)
        throw std::runtime_error(std::string("CUDA: ") + what + " failed: " + cudaGetErrorString(status));
}

namespace {
std::atomic<uint64_t> launchCount{0};
}  // namespace

uint64_t launches() { return launchCount.load(std::memory_order_relaxed); }
void countLaunches(uint64_t n) { launchCount.fetch_add(n, std::memory_order_relaxed); }

DeviceBuffer::DeviceBuffer(size_t bytes) : bytes_(bytes) {
    if (bytes == 0) return;
    const cudaError_t status = cudaMalloc(&ptr_, bytes);
    if (status == cudaErrorMemoryAllocation) {
        cudaGetLastError();  // not sticky: cleared; out of memory is std::bad_alloc (Backend::packWeight)
        throw std::bad_alloc();
    }
    check(status, "cudaMalloc");
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
        if (ptr_ != nullptr) cudaFree(ptr_);
        ptr_ = o.ptr_;
        bytes_ = o.bytes_;
        o.ptr_ = nullptr;
        o.bytes_ = 0;
    }
    return *this;
}

DeviceBuffer::~DeviceBuffer() {
    if (ptr_ != nullptr) cudaFree(ptr_);
}

void DeviceBuffer::reserve(size_t bytes) {
    if (bytes <= bytes_) return;
    *this = DeviceBuffer(bytes + bytes / 4);  // some headroom against many small growths
}

}  // namespace hearth::cuda
