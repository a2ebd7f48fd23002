// A backend with "device" memory of its own, for proving without a GPU what a device backend
// sees (issue 24): it computes with a host backend (the reference, say) but answers
// operatesOnHostMemory() with false, hands out buffers it records, copies each matrix into such
// a buffer at packWeight, and checks on every operator that each pointer it gets lies inside
// one of its buffers (a matrix: inside its copy). A pointer outside is a violation, listed
// with the operator's name. Uploads, downloads and copies are counted (calls and bytes), as are
// operator calls. The paged KV blocks are counted apart (kvOutside: a block outside, or a
// layer without PagedKvLayer::nBlocks), as are calls whose block tables are not in this memory
// (tablesFromHost: PagedKvLayer::tablesOnBackend null) or differ from the host's (a violation).
#pragma once

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kernels/backend.h"

namespace hearth::test {

struct DeviceTransfers {
    int uploads = 0, downloads = 0, copies = 0, ops = 0;
    size_t bytesUp = 0, bytesDown = 0, bytesCopied = 0;
};

class DeviceMemoryBackend final : public Backend {
public:
    // A layout constant of this backend's matrix copies (WeightView::packed.layout).
    static constexpr uint32_t kDeviceCopy = 0x44455643;  // "DEVC"

    explicit DeviceMemoryBackend(Backend& inner) : inner_(inner), live_(std::make_shared<Live>()) {}

    std::string name() const override { return "device memory (test) over " + inner_.name(); }
    bool operatesOnHostMemory() const override { return false; }

    std::unique_ptr<BackendBuffer> allocate(size_t bytes) override {
        auto* p = static_cast<uint8_t*>(::operator new[](bytes == 0 ? 64 : bytes, std::align_val_t{64}));
        (*live_)[reinterpret_cast<uintptr_t>(p)] = bytes;
        return std::unique_ptr<BackendBuffer>(new Buffer(p, bytes, live_));
    }
    void upload(void* dst, const void* src, size_t bytes) override {
        check("upload", dst, bytes);
        ++t_.uploads, t_.bytesUp += bytes;
        std::memcpy(dst, src, bytes);
    }
    void download(void* dst, const void* src, size_t bytes) override {
        check("download", src, bytes);
        ++t_.downloads, t_.bytesDown += bytes;
        std::memcpy(dst, src, bytes);
    }
    void copy(void* dst, const void* src, size_t bytes) override {
        check("copy", dst, bytes), check("copy", src, bytes);
        ++t_.copies, t_.bytesCopied += bytes;
        std::memmove(dst, src, bytes);
    }

    // The matrix's rows copied into this backend's memory (an upload at load, counted apart).
    std::unique_ptr<WeightBuffer> packWeight(
        WeightView& w, const std::function<void(std::span<const uint8_t> rows)>& released) override {
        (void)released;
        const size_t bytes = rowBytes(w.type, w.nCols) * static_cast<size_t>(w.nRows);
        auto holder = std::make_unique<Weight>();
        holder->buffer = allocate(bytes);
        std::memcpy(holder->buffer->data(), w.data, bytes);
        loadBytes_ += bytes;
        w.packed = {holder->buffer->data(), kDeviceCopy, bytes};
        return holder;
    }

    void matmul(const WeightView& w, const float* x, int64_t n, float* y) override {
        op();
        inner_.matmul(onDevice("matmul", w), in("matmul x", x, n * w.nCols), n, out("matmul y", y, n * w.nRows));
    }
    void embeddingRows(const WeightView& t, const int32_t* ids, int64_t n, float* o) override {
        op();
        check("embedding ids", ids, static_cast<size_t>(n) * sizeof(int32_t));
        inner_.embeddingRows(onDevice("embedding", t), ids, n, out("embedding out", o, n * t.nCols));
    }
    void rmsNorm(const float* x, const float* w, int64_t r, int64_t n, float eps, float* y) override {
        op();
        inner_.rmsNorm(in("rmsNorm x", x, r * n), in("rmsNorm weight", w, n), r, n, eps, out("rmsNorm y", y, r * n));
    }
    void rope(float* x, int64_t n, int h, int d, int r, const int32_t* p, float b, RopeStyle s,
              const float* f) override {
        op();
        check("rope positions", p, static_cast<size_t>(n) * sizeof(int32_t));
        if (f != nullptr) in("rope factors", f, r / 2);
        inner_.rope(out("rope x", x, n * h * d), n, h, d, r, p, b, s, f);
    }
    void kvWrite(const PagedKvLayer& l, const float* k, const float* v, const int32_t* p, int64_t n) override {
        op();
        check("kvWrite slots", p, static_cast<size_t>(n) * sizeof(int32_t));
        kvBlocks(l);
        inner_.kvWrite(l, in("kvWrite k", k, n * l.rowStride), in("kvWrite v", v, n * l.rowStride), p, n);
    }
    void attention(const PagedKvLayer& l, const AttentionShape& s, const float* q, const int32_t* p, int64_t n,
                   float* o) override {
        op();
        check("attention positions", p, static_cast<size_t>(n) * sizeof(int32_t));
        kvBlocks(l);
        const int64_t qDim = int64_t{s.nHeads} * s.headDim;
        inner_.attention(l, s, in("attention q", q, n * qDim), p, n, out("attention out", o, n * qDim));
    }
    void swiglu(const float* g, const float* u, int64_t n, float* o) override {
        op();
        inner_.swiglu(in("swiglu gate", g, n), in("swiglu up", u, n), n, out("swiglu out", o, n));
    }
    void geglu(const float* g, const float* u, int64_t n, float* o) override {
        op();
        inner_.geglu(in("geglu gate", g, n), in("geglu up", u, n), n, out("geglu out", o, n));
    }
    void add(float* x, const float* y, int64_t n) override {
        op();
        inner_.add(out("add x", x, n), in("add y", y, n), n);
    }
    void scale(float* x, int64_t r, int64_t stride, int64_t n, float s) override {
        op();
        inner_.scale(out("scale x", x, r > 0 ? (r - 1) * stride + n : 0), r, stride, n, s);
    }
    void softcap(float* x, int64_t n, float cap) override {
        op();
        inner_.softcap(out("softcap x", x, n), n, cap);
    }

    const DeviceTransfers& transfers() const { return t_; }
    void resetCounts() {
        t_ = {};
        tablesFromHost_ = 0;
    }
    const std::vector<std::string>& violations() const { return violations_; }
    int kvOutside() const { return kvOutside_; }  // KV blocks read or written outside this memory
    int tablesFromHost() const { return tablesFromHost_; }  // KV calls without tablesOnBackend
    size_t loadBytes() const { return loadBytes_; }  // matrices copied in at packWeight

private:
    using Live = std::map<uintptr_t, size_t>;  // start -> bytes of each buffer alive
    class Buffer final : public BackendBuffer {
    public:
        Buffer(uint8_t* p, size_t bytes, std::shared_ptr<Live> live) : BackendBuffer(p, bytes), live_(std::move(live)) {}
        ~Buffer() override {
            live_->erase(reinterpret_cast<uintptr_t>(data()));
            ::operator delete[](data(), std::align_val_t{64});
        }

    private:
        std::shared_ptr<Live> live_;
    };
    struct Weight : WeightBuffer {
        std::unique_ptr<BackendBuffer> buffer;
    };

    bool inside(const void* p, size_t bytes) const {
        const auto a = reinterpret_cast<uintptr_t>(p);
        auto it = live_->upper_bound(a);
        if (it == live_->begin()) return false;
        --it;
        return a >= it->first && a + bytes <= it->first + std::max<size_t>(it->second, 1);
    }
    void check(const char* what, const void* p, size_t bytes) {
        if (p != nullptr && !inside(p, bytes) && violations_.size() < 64)
            violations_.push_back(std::string(what) + ": outside the backend's memory");
    }
    const float* in(const char* what, const float* p, int64_t n) {
        check(what, p, static_cast<size_t>(n) * sizeof(float));
        return p;
    }
    float* out(const char* what, float* p, int64_t n) {
        check(what, p, static_cast<size_t>(n) * sizeof(float));
        return p;
    }
    WeightView onDevice(const char* what, const WeightView& w) {
        if (w.packed.layout != kDeviceCopy) {
            if (violations_.size() < 64) violations_.push_back(std::string(what) + ": a matrix not copied in");
            return w;
        }
        WeightView copy = w;
        copy.data = w.packed.data;
        copy.packed = {};
        return copy;
    }
    // Every block the layer's tables name (nBlocks of them, set by KvCache::layerView and the
    // tree scratch; null entries are blocks a window released), K and V.
    void kvBlocks(const PagedKvLayer& l) {
        const size_t bytes = static_cast<size_t>(l.blockSize) * kvRowBytes(l);
        if (l.nBlocks <= 0) ++kvOutside_;  // a table without its length: nothing bounds it
        if (l.tablesOnBackend == nullptr) {
            ++tablesFromHost_;
        } else {
            check("block tables", l.tablesOnBackend, 2 * static_cast<size_t>(l.nBlocks) * sizeof(f16_t*));
            const bool same = l.nBlocks <= 0 ||
                (std::equal(l.kBlocks, l.kBlocks + l.nBlocks, l.tablesOnBackend) &&
                 std::equal(l.vBlocks, l.vBlocks + l.nBlocks, l.tablesOnBackend + l.nBlocks));
            if (!same && violations_.size() < 64) violations_.push_back("block tables: not the host's tables");
        }
        for (int b = 0; b < l.nBlocks; ++b)
            for (const f16_t* block : {l.kBlocks[b], l.vBlocks[b]})
                if (block != nullptr && !inside(block, bytes)) ++kvOutside_;
    }
    void op() { ++t_.ops; }

    Backend& inner_;
    std::shared_ptr<Live> live_;
    DeviceTransfers t_;
    std::vector<std::string> violations_;
    int kvOutside_ = 0;
    int tablesFromHost_ = 0;
    size_t loadBytes_ = 0;
};

}  // namespace hearth::test
