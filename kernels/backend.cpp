// Backend's defaults for backends that compute in host memory (backend.h): host buffers,
// memcpy transfers, and the two element-wise operators on host memory. Compiled without ISA
// flags, as the loops they replaced in the forward pass were: the same bits.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <new>
#include <stdexcept>

#include "kernels/backend.h"

namespace hearth {
namespace {

// Ids count up from a start drawn from this counter's own address: the CUDA plugin links its own
// copy of this file (hidden symbols), so the two copies must not hand out the same ids.
std::atomic<uint64_t> nextBackendId{0};

uint64_t idStart() {
    uint64_t z = reinterpret_cast<uintptr_t>(&nextBackendId) + 0x9e3779b97f4a7c15ULL;  // splitmix64
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

class HostBuffer final : public BackendBuffer {
public:
    HostBuffer(void* data, size_t size) : BackendBuffer(data, size) {}
    ~HostBuffer() override { ::operator delete[](data(), std::align_val_t{64}); }
};

}  // namespace

float softcapScore(float s, float cap) { return cap > 0.0f ? cap * std::tanh(s / cap) : s; }

Backend::Backend() : id_(idStart() + nextBackendId.fetch_add(1, std::memory_order_relaxed)) {}

std::unique_ptr<BackendBuffer> allocateHostBuffer(size_t bytes) {
    void* p = ::operator new[](bytes == 0 ? 64 : bytes, std::align_val_t{64}, std::nothrow);
    if (p == nullptr) return nullptr;
    return std::make_unique<HostBuffer>(p, bytes);
}

std::unique_ptr<BackendBuffer> Backend::allocate(size_t bytes) { return allocateHostBuffer(bytes); }

void Backend::upload(void* dst, const void* hostSrc, size_t bytes) {
    if (bytes > 0) std::memcpy(dst, hostSrc, bytes);
}

void Backend::download(void* hostDst, const void* src, size_t bytes) {
    if (bytes > 0) std::memcpy(hostDst, src, bytes);
}

void Backend::copy(void* dst, const void* src, size_t bytes) {
    if (bytes > 0) std::memmove(dst, src, bytes);
}

void Backend::matmulFused(const MatmulInput& in, std::span<const WeightView> ws, int64_t nTokens,
                          std::span<float* const> ys, bool accumulate, float* sums) {
    if (ws.empty()) return;
    const int64_t nCols = ws[0].nCols;
    const float* x = in.x;
    switch (in.kind) {
    case MatmulInput::Kind::Plain: break;
    case MatmulInput::Kind::RmsNorm: rmsNorm(in.x, in.normWeight, nTokens, nCols, in.eps, in.prepared); break;
    case MatmulInput::Kind::SwiGlu: swiglu(in.x, in.up, nTokens * nCols, in.prepared); break;
    case MatmulInput::Kind::GeGlu: geglu(in.x, in.up, nTokens * nCols, in.prepared); break;
    }
    if (in.kind != MatmulInput::Kind::Plain) x = in.prepared;
    if (!accumulate) return matmulMany(ws, x, nTokens, ys);
    if (ws.size() != 1 || sums == nullptr)
        throw std::invalid_argument("matmulFused: accumulate takes one matrix and sums");
    matmul(ws[0], x, nTokens, sums);
    add(ys[0], sums, nTokens * ws[0].nRows);
}

void Backend::qkRope(const QkRope& r, const int32_t* positions, int64_t nTokens) {
    if (r.qNorm != nullptr) rmsNorm(r.q, r.qNorm, nTokens * r.nHeads, r.headDim, r.eps, r.q);
    if (r.kNorm != nullptr) rmsNorm(r.k, r.kNorm, nTokens * r.nKvHeads, r.headDim, r.eps, r.k);
    rope(r.q, nTokens, r.nHeads, r.headDim, r.nRot, positions, r.freqBase, r.style, r.freqFactors);
    rope(r.k, nTokens, r.nKvHeads, r.headDim, r.nRot, positions, r.freqBase, r.style, r.freqFactors);
    if (r.attnFactor == 1.0f) return;
    scale(r.q, nTokens * r.nHeads, r.headDim, r.nRot, r.attnFactor);
    scale(r.k, nTokens * r.nKvHeads, r.headDim, r.nRot, r.attnFactor);
}

void Backend::scale(float* x, int64_t nRows, int64_t rowStride, int64_t n, float s) {
    for (int64_t r = 0; r < nRows; ++r)
        for (int64_t i = 0; i < n; ++i) x[r * rowStride + i] *= s;
}

void Backend::argmaxRows(const float* x, int64_t nRows, int64_t n, int32_t* out) {
    for (int64_t r = 0; r < nRows; ++r) {
        const float* row = x + r * n;
        int64_t best = 0;
        if (n > 0 && !std::isnan(row[0]))
            for (int64_t i = 1; i < n; ++i)
                if (row[i] > row[best]) best = i;
        out[r] = static_cast<int32_t>(best);
    }
}

float logSumExp(const float* x, int64_t n) {
    const float maxValue = *std::max_element(x, x + n);
    double sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += std::exp(static_cast<double>(x[i]) - maxValue);
    return static_cast<float>(maxValue + std::log(sum));
}

void Backend::firstValues(const float* x, int64_t n, int32_t k, std::vector<TopEntry>& scratch, TopEntry* out) {
    scratch.resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) scratch[static_cast<size_t>(i)] = {static_cast<int32_t>(i), x[i]};
    std::partial_sort(scratch.begin(), scratch.begin() + k, scratch.end(), [](const TopEntry& a, const TopEntry& b) {
        return a.value > b.value || (a.value == b.value && a.id < b.id);
    });
    std::copy_n(scratch.begin(), k, out);
}

void Backend::topKRows(const float* x, int64_t nRows, int64_t n, int32_t k, TopEntry* out, float* lse) {
    std::vector<TopEntry> scratch;
    for (int64_t r = 0; r < nRows; ++r) {
        const float* v = x + r * n;
        TopEntry* o = out + r * k;
        if (!std::all_of(v, v + n, [](float f) { return std::isfinite(f); })) {
            o[0].id = -1;
            continue;
        }
        firstValues(v, n, k, scratch, o);
        if (lse != nullptr) lse[r] = logSumExp(v, n);
    }
}

void Backend::softcap(float* x, int64_t n, float cap) {
    for (int64_t i = 0; i < n; ++i) x[i] = softcapScore(x[i], cap);
}

void* BackendScratch::reserve(Backend& b, size_t bytes) {
    if (owner_ != b.id() || !buffer_ || buffer_->size() < bytes) {
        // Growing on the same backend: at least double, so that slowly growing steps remake it
        // a few times only.
        const size_t want = owner_ == b.id() && buffer_ ? std::max(bytes, 2 * buffer_->size()) : bytes;
        buffer_.reset();  // the old one is freed before its successor is made
        buffer_ = b.allocate(want);
        owner_ = buffer_ ? b.id() : 0;
    }
    return buffer_ ? buffer_->data() : nullptr;
}

}  // namespace hearth
