// Device memory for the CUDA backend: owned buffers, grow-only scratch, the weight cache
// (uploaded once, keyed by host pointer) and the KV mirror (a device copy of each host KV
// block; the host stays authoritative: rows written here are copied back, rows the device
// does not hold, e.g. restored from disk, are uploaded before they are read).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace hearth::cuda {

// Throws std::runtime_error naming what failed when status is not cudaSuccess.
void check(cudaError_t status, const char* what);

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

// Weights copied to the device on first use; the host pointer (into the mapped model file)
// is the key, so the cache must not outlive the model (the engine makes one backend per model).
class WeightCache {
public:
    const uint8_t* get(const void* host, size_t bytes, cudaStream_t s);
    size_t bytesUploaded() const { return bytes_; }

private:
    std::unordered_map<const void*, DeviceBuffer> buffers_;
    size_t bytes_ = 0;
};

// Host KV blocks can change behind the backend's back: the pool copies a shared partial
// block into a free one, or a restore fills blocks from disk, and freed blocks come back at
// the same addresses. So each mirrored block remembers 8 bytes of its first and last valid
// rows as the host held them; verify() compares them (a KV row depends on every token before
// it, so a changed prefix changes them) and forgets the block's rows when they differ.
class KvMirror {
public:
    // Device copy of the host block region (blockSize rows of rowBytes), made on first sight.
    uint8_t* deviceBlock(const void* hostBlock, int blockSize, size_t rowBytes);
    // Forgets the device rows of a block whose host bytes changed since remember().
    void verify(const void* hostBlock, size_t rowBytes);
    // Rows slot..slot+n of a block were written on the device: copy them back to the host
    // (asynchronously: call remember() once the stream has finished).
    void wroteRows(const void* hostBlock, int slot, int n, size_t rowBytes, cudaStream_t s);
    // Uploads rows [0, nSlots) of a block that the device does not hold yet.
    void syncRows(const void* hostBlock, int nSlots, size_t rowBytes, cudaStream_t s);
    // Records the signature of the block's valid rows from the host's bytes.
    void remember(const void* hostBlock, size_t rowBytes);

private:
    struct Block {
        uint8_t* device = nullptr;
        std::vector<uint8_t> valid;  // [blockSize]: the device row holds the host's bytes
        int firstSlot = -1, lastSlot = -1;
        uint64_t firstSig = 0, lastSig = 0;
    };
    uint8_t* allocate(size_t bytes);
    std::unordered_map<const void*, Block> blocks_;
    std::vector<DeviceBuffer> slabs_;  // blocks are carved from 64 MiB slabs, never freed
    size_t slabUsed_ = 0;
};

}  // namespace hearth::cuda
