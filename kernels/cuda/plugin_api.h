// The C entry points of the CUDA plugin (libhearth_cuda.so), looked up by name with dlsym by
// cuda/loader/. Every function writes a NUL-terminated reason into why[whyCap] on failure.
// Plain C++17; the Backend crosses the boundary as a C++ object (same compiler, same ABI).
#pragma once

#include <cstddef>

namespace hearth {
class Backend;
}

// Bumped whenever these signatures or the Backend interface change, so that a stale plugin
// is refused instead of crashing.
#define HEARTH_CUDA_PLUGIN_ABI 5

extern "C" {
// HEARTH_CUDA_PLUGIN_ABI of the plugin.
typedef int (*HearthCudaAbiFn)(void);
// 1 when device 0 can run the backend (device[deviceCap] names it), else 0 and why.
typedef int (*HearthCudaProbeFn)(char* device, size_t deviceCap, char* why, size_t whyCap);
// A new CUDA backend (delete it through Backend's virtual destructor), or nullptr and why.
typedef hearth::Backend* (*HearthCudaCreateFn)(char* why, size_t whyCap);
// Read bandwidth of device 0 in GB/s over a buffer of `bytes`, or a negative value and why.
typedef double (*HearthCudaBandwidthFn)(size_t bytes, char* why, size_t whyCap);
// The decode mat-vec kernels alone, weights and activations already on device 0: GB/s of
// weights read by a (rows x cols, dtype) one-token product, or a negative value and why.
typedef double (*HearthCudaMatvecFn)(int dtype, long long rows, long long cols, char* why, size_t whyCap);
}
