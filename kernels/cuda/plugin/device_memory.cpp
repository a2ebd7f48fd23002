// Device buffers, the weight cache and the KV mirror (device_memory.h).
#include "kernels/cuda/plugin/device_memory.h"

#include <algorithm>

#include <cstring>
#include <stdexcept>
#include <string>

namespace hearth::cuda {

void check(cudaError_t status, const char* what) {
    if (status != cudaSuccess)
        throw std::runtime_error(std::string("CUDA: ") + what + " failed: " + cudaGetErrorString(status));
}

DeviceBuffer::DeviceBuffer(size_t bytes) : bytes_(bytes) {
    if (bytes > 0) check(cudaMalloc(&ptr_, bytes), "cudaMalloc");
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

const uint8_t* WeightCache::get(const void* host, size_t bytes, cudaStream_t s) {
    auto it = buffers_.find(host);
    if (it != buffers_.end() && it->second.size() >= bytes) return it->second.as<uint8_t>();
    DeviceBuffer buffer(bytes);
    check(cudaMemcpyAsync(buffer.get(), host, bytes, cudaMemcpyHostToDevice, s), "uploading a weight");
    bytes_ += bytes;
    const auto* device = buffer.as<uint8_t>();
    buffers_[host] = std::move(buffer);
    return device;
}

uint8_t* KvMirror::allocate(size_t bytes) {
    constexpr size_t kSlab = size_t{64} << 20, kAlign = 256;
    bytes = (bytes + kAlign - 1) / kAlign * kAlign;
    if (bytes > kSlab) {
        slabs_.emplace_back(bytes);
        return slabs_.back().as<uint8_t>();
    }
    if (slabs_.empty() || slabUsed_ + bytes > slabs_.back().size()) {
        slabs_.emplace_back(kSlab);
        slabUsed_ = 0;
    }
    uint8_t* p = slabs_.back().as<uint8_t>() + slabUsed_;
    slabUsed_ += bytes;
    return p;
}

uint8_t* KvMirror::deviceBlock(const void* hostBlock, int blockSize, size_t rowBytes) {
    auto it = blocks_.find(hostBlock);
    if (it != blocks_.end()) return it->second.device;
    Block b;
    b.device = allocate(static_cast<size_t>(blockSize) * rowBytes);
    b.valid.assign(static_cast<size_t>(blockSize), 0);
    return blocks_.emplace(hostBlock, std::move(b)).first->second.device;
}

namespace {
uint64_t rowSample(const void* hostBlock, int slot, size_t rowBytes) {
    uint64_t v = 0;
    std::memcpy(&v, static_cast<const uint8_t*>(hostBlock) + static_cast<size_t>(slot) * rowBytes,
                std::min<size_t>(sizeof v, rowBytes));
    return v;
}
}  // namespace

void KvMirror::verify(const void* hostBlock, size_t rowBytes) {
    Block& b = blocks_.at(hostBlock);
    if (b.lastSlot < 0) return;
    if (rowSample(hostBlock, b.firstSlot, rowBytes) == b.firstSig &&
        rowSample(hostBlock, b.lastSlot, rowBytes) == b.lastSig)
        return;
    b.valid.assign(b.valid.size(), 0);
    b.firstSlot = b.lastSlot = -1;
}

void KvMirror::remember(const void* hostBlock, size_t rowBytes) {
    Block& b = blocks_.at(hostBlock);
    b.firstSlot = b.lastSlot = -1;
    for (int i = 0; i < static_cast<int>(b.valid.size()); ++i)
        if (b.valid[static_cast<size_t>(i)] != 0) {
            if (b.firstSlot < 0) b.firstSlot = i;
            b.lastSlot = i;
        }
    if (b.lastSlot < 0) return;
    b.firstSig = rowSample(hostBlock, b.firstSlot, rowBytes);
    b.lastSig = rowSample(hostBlock, b.lastSlot, rowBytes);
}

void KvMirror::wroteRows(const void* hostBlock, int slot, int n, size_t rowBytes, cudaStream_t s) {
    Block& b = blocks_.at(hostBlock);
    for (int i = slot; i < slot + n; ++i) b.valid[static_cast<size_t>(i)] = 1;
    const size_t offset = static_cast<size_t>(slot) * rowBytes;
    check(cudaMemcpyAsync(static_cast<uint8_t*>(const_cast<void*>(hostBlock)) + offset, b.device + offset,
                          static_cast<size_t>(n) * rowBytes, cudaMemcpyDeviceToHost, s),
          "copying KV rows back to the host");
}

void KvMirror::syncRows(const void* hostBlock, int nSlots, size_t rowBytes, cudaStream_t s) {
    verify(hostBlock, rowBytes);
    Block& b = blocks_.at(hostBlock);
    bool uploaded = false;
    for (int i = 0; i < nSlots;) {
        if (b.valid[static_cast<size_t>(i)] != 0) {
            ++i;
            continue;
        }
        int j = i;
        while (j < nSlots && b.valid[static_cast<size_t>(j)] == 0) b.valid[static_cast<size_t>(j++)] = 1;
        const size_t offset = static_cast<size_t>(i) * rowBytes;
        check(cudaMemcpyAsync(b.device + offset, static_cast<const uint8_t*>(hostBlock) + offset,
                              static_cast<size_t>(j - i) * rowBytes, cudaMemcpyHostToDevice, s),
              "uploading KV rows restored on the host");
        uploaded = true;
        i = j;
    }
    if (uploaded) remember(hostBlock, rowBytes);
}

}  // namespace hearth::cuda
