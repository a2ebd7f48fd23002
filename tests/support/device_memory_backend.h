// A backend with "device" memory of its own, for proving without a GPU what a device backend
// sees (issue 24): it computes with a host backend (the reference, say) but answers
// operatesOnHostMemory() with false, hands out buffers it records, copies each matrix into such
// a buffer at packWeight, and checks on every operator that each pointer it gets lies inside
// one of its buffers (a matrix: inside its copy). A pointer outside is a violation, listed
// with the operator's name. Uploads, downloads and copies are counted (calls and bytes), as are
// operator calls. The paged KV blocks are counted apart (kvOutside: a block outside, or a
// layer without PagedKvLayer::nBlocks), as are calls whose block tables are not in this memory
// (tablesFromHost: PagedKvLayer::tablesOnBackend null) or differ from the host's (a violation).
// KV operators read their blocks through the tables in this memory when given, as a device does.
// Steps (Backend::beginStep) behave as CUDA graphs: a key's first step runs call by call, its
// second is recorded (the calls held, with their arguments, and run at endStep), later ones
// replay the recording on the memory's current contents; an operator call in a replayed step or
// a transfer inside a step is a violation. Recordings and replays are counted. A capacity for
// matrices makes it a small device: packWeight throws std::bad_alloc (as the CUDA plugin does
// out of memory) past it, while freeMemory() may claim more than there is, as a GPU shared with
// other processes does.
#pragma once

#include <algorithm>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/backend.h"

namespace hearth::test {

struct DeviceTransfers {
    int uploads = 0, downloads = 0, copies = 0, ops = 0;
    int recorded = 0, replayed = 0;  // steps recorded (Backend::StepMode::Record) and replayed
    size_t bytesUp = 0, bytesDown = 0, bytesCopied = 0;
};

class DeviceMemoryBackend final : public Backend {
public:
    // A layout constant of this backend's matrix copies (WeightView::packed.layout).
    static constexpr uint32_t kDeviceCopy = 0x44455643;  // "DEVC"

    explicit DeviceMemoryBackend(Backend& inner, bool recordSteps = true)
        : inner_(inner), live_(std::make_shared<Live>()), recordSteps_(recordSteps) {}
    // Over a backend it owns, with room for weightCapacity bytes of matrix copies alive at once
    // (0: no limit) and freeMemory() answering claimedFree.
    struct Limits {
        size_t weightCapacity = 0, claimedFree = 0;
    };
    DeviceMemoryBackend(std::unique_ptr<Backend> owned, Limits limits)
        : owned_(std::move(owned)), inner_(*owned_), live_(std::make_shared<Live>()), limits_(limits) {}

    std::string name() const override { return "device memory (test) over " + inner_.name(); }
    bool operatesOnHostMemory() const override { return false; }

    std::unique_ptr<BackendBuffer> allocate(size_t bytes) override {
        auto* p = static_cast<uint8_t*>(::operator new[](bytes == 0 ? 64 : bytes, std::align_val_t{64}));
        (*live_)[reinterpret_cast<uintptr_t>(p)] = bytes;
        return std::unique_ptr<BackendBuffer>(new Buffer(p, bytes, live_));
    }
    void upload(void* dst, const void* src, size_t bytes) override {
        check("upload", dst, bytes);
        inStep("upload");
        ++t_.uploads, t_.bytesUp += bytes;
        std::memcpy(dst, src, bytes);
    }
    void download(void* dst, const void* src, size_t bytes) override {
        check("download", src, bytes);
        inStep("download");
        ++t_.downloads, t_.bytesDown += bytes;
        std::memcpy(dst, src, bytes);
    }
    void copy(void* dst, const void* src, size_t bytes) override {
        check("copy", dst, bytes), check("copy", src, bytes);
        inStep("copy");
        ++t_.copies, t_.bytesCopied += bytes;
        std::memmove(dst, src, bytes);
    }

    // The matrix's rows copied into this backend's memory (an upload at load, counted apart).
    std::unique_ptr<WeightBuffer> packWeight(
        WeightView& w, const std::function<void(std::span<const uint8_t> rows)>& released) override {
        (void)released;
        const size_t bytes = rowBytes(w.type, w.nCols) * static_cast<size_t>(w.nRows);
        if (limits_.weightCapacity > 0 && *weightBytes_ + bytes > limits_.weightCapacity) throw std::bad_alloc();
        auto holder = std::make_unique<Weight>(weightBytes_, bytes);
        holder->buffer = allocate(bytes);
        std::memcpy(holder->buffer->data(), w.data, bytes);
        loadBytes_ += bytes;
        w.packed = {holder->buffer->data(), kDeviceCopy, bytes};
        return holder;
    }

    void matmul(const WeightView& w, const float* x, int64_t n, float* y) override {
        op();
        const WeightView dw = onDevice("matmul", w);
        const float* dx = in("matmul x", x, n * w.nCols);
        float* dy = out("matmul y", y, n * w.nRows);
        exec([=, this] { inner_.matmul(dw, dx, n, dy); });
    }
    void embeddingRows(const WeightView& t, const int32_t* ids, int64_t n, float* o) override {
        op();
        check("embedding ids", ids, static_cast<size_t>(n) * sizeof(int32_t));
        const WeightView dt = onDevice("embedding", t);
        float* dout = out("embedding out", o, n * t.nCols);
        exec([=, this] { inner_.embeddingRows(dt, ids, n, dout); });
    }
    void rmsNorm(const float* x, const float* w, int64_t r, int64_t n, float eps, float* y) override {
        op();
        const float* dx = in("rmsNorm x", x, r * n);
        const float* dw = in("rmsNorm weight", w, n);
        float* dy = out("rmsNorm y", y, r * n);
        exec([=, this] { inner_.rmsNorm(dx, dw, r, n, eps, dy); });
    }
    void rope(float* x, int64_t n, int h, int d, int r, const int32_t* p, float b, RopeStyle s,
              const float* f) override {
        op();
        check("rope positions", p, static_cast<size_t>(n) * sizeof(int32_t));
        if (f != nullptr) in("rope factors", f, r / 2);
        float* dx = out("rope x", x, n * h * d);
        exec([=, this] { inner_.rope(dx, n, h, d, r, p, b, s, f); });
    }
    void kvWrite(const PagedKvLayer& l, const float* k, const float* v, const int32_t* p, int64_t n) override {
        op();
        check("kvWrite slots", p, static_cast<size_t>(n) * sizeof(int32_t));
        const PagedKvLayer dl = kvBlocks(l);
        const float* dk = in("kvWrite k", k, n * l.rowStride);
        const float* dv = in("kvWrite v", v, n * l.rowStride);
        exec([=, this] { inner_.kvWrite(dl, dk, dv, p, n); });
    }
    void attention(const PagedKvLayer& l, const AttentionShape& s, const float* q, const int32_t* p, int64_t n,
                   float* o) override {
        op();
        check("attention positions", p, static_cast<size_t>(n) * sizeof(int32_t));
        const PagedKvLayer dl = kvBlocks(l);
        const int64_t qDim = int64_t{s.nHeads} * s.headDim;
        const float* dq = in("attention q", q, n * qDim);
        float* dout = out("attention out", o, n * qDim);
        exec([=, this] { inner_.attention(dl, s, dq, p, n, dout); });
    }
    void swiglu(const float* g, const float* u, int64_t n, float* o) override {
        op();
        const float *dg = in("swiglu gate", g, n), *du = in("swiglu up", u, n);
        float* dout = out("swiglu out", o, n);
        exec([=, this] { inner_.swiglu(dg, du, n, dout); });
    }
    void geglu(const float* g, const float* u, int64_t n, float* o) override {
        op();
        const float *dg = in("geglu gate", g, n), *du = in("geglu up", u, n);
        float* dout = out("geglu out", o, n);
        exec([=, this] { inner_.geglu(dg, du, n, dout); });
    }
    void add(float* x, const float* y, int64_t n) override {
        op();
        float* dx = out("add x", x, n);
        const float* dy = in("add y", y, n);
        exec([=, this] { inner_.add(dx, dy, n); });
    }
    void scale(float* x, int64_t r, int64_t stride, int64_t n, float s) override {
        op();
        float* dx = out("scale x", x, r > 0 ? (r - 1) * stride + n : 0);
        exec([=, this] { inner_.scale(dx, r, stride, n, s); });
    }
    void argmaxRows(const float* x, int64_t r, int64_t n, int32_t* o) override {
        op();
        const float* dx = in("argmax rows", x, r * n);
        check("argmax out", o, static_cast<size_t>(r) * sizeof(int32_t));
        exec([=, this] { inner_.argmaxRows(dx, r, n, o); });
    }
    void topKRows(const float* x, int64_t r, int64_t n, int32_t k, TopEntry* o, float* lse) override {
        op();
        const float* dx = in("top rows", x, r * n);
        check("top out", o, static_cast<size_t>(r * k) * sizeof(TopEntry));
        if (lse != nullptr) check("log-sum-exp out", lse, static_cast<size_t>(r) * sizeof(float));
        exec([=, this] {
            inner_.topKRows(dx, r, n, k, o, lse);
            for (int64_t i = 0; i < r && flagTopRows; ++i) o[i * k].id = -1;
        });
    }
    void softcap(float* x, int64_t n, float cap) override {
        op();
        float* dx = out("softcap x", x, n);
        exec([=, this] { inner_.softcap(dx, n, cap); });
    }

    StepMode beginStep(std::string_view key, int64_t nRows) override {
        (void)nRows;
        if (mode_ != StepMode::Run || step_ != nullptr) violation("beginStep inside a step");
        if (!recordSteps_) return StepMode::Run;
        Step& s = steps_[std::string(key)];
        step_ = &s;
        ++s.seen;
        if (s.recorded) mode_ = StepMode::Replay;
        else if (s.seen >= 2) mode_ = StepMode::Record, s.calls.clear();
        else mode_ = StepMode::Run;
        return mode_;
    }
    void endStep() override {
        if (step_ == nullptr && recordSteps_) violation("endStep without beginStep");
        if (mode_ == StepMode::Record) step_->recorded = true, ++t_.recorded;
        if (mode_ == StepMode::Replay) ++t_.replayed;
        const StepMode was = mode_;
        mode_ = StepMode::Run;  // the recorded calls run now, not recorded again
        if (was != StepMode::Run)
            for (const std::function<void()>& call : step_->calls) call();
        step_ = nullptr;
    }

    BackendCounters counters() const override {  // the transfers, as a device backend counts them
        BackendCounters c;
        c.uploads = static_cast<uint64_t>(t_.uploads), c.downloads = static_cast<uint64_t>(t_.downloads);
        c.copies = static_cast<uint64_t>(t_.copies);
        c.bytesUp = t_.bytesUp, c.bytesDown = t_.bytesDown, c.bytesCopied = t_.bytesCopied;
        c.waits = static_cast<uint64_t>(t_.downloads);
        return c;
    }
    const DeviceTransfers& transfers() const { return t_; }
    size_t stepKeys() const { return steps_.size(); }  // distinct keys beginStep has seen
    void resetCounts() {
        t_ = {};
        tablesFromHost_ = 0;
    }
    const std::vector<std::string>& violations() const { return violations_; }
    int kvOutside() const { return kvOutside_; }  // KV blocks read or written outside this memory
    int tablesFromHost() const { return tablesFromHost_; }  // KV calls without tablesOnBackend
    size_t loadBytes() const { return loadBytes_; }  // matrices copied in at packWeight
    size_t freeMemory() const override { return limits_.claimedFree; }

    // topKRows marks every row as one holding a NaN or an infinity (whose row then comes down).
    bool flagTopRows = false;

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
        Weight(std::shared_ptr<size_t> alive, size_t n) : total(std::move(alive)), bytes(n) { *total += bytes; }
        ~Weight() override { *total -= bytes; }
        std::shared_ptr<size_t> total;  // the backend's weightBytes_ (a copy may outlive it)
        size_t bytes;
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
    // Checks every block the layer's tables name (nBlocks of them, set by KvCache::layerView and
    // the tree scratch; null entries are blocks a window released), K and V; returns the layer
    // reading its tables from this memory when they are there (their contents when the call runs).
    PagedKvLayer kvBlocks(const PagedKvLayer& l) {
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
        PagedKvLayer onDevice = l;
        if (l.tablesOnBackend != nullptr) {
            onDevice.kBlocks = l.tablesOnBackend;
            onDevice.vBlocks = l.tablesOnBackend + l.nBlocks;
        }
        return onDevice;
    }
    void op() {
        ++t_.ops;
        if (mode_ == StepMode::Replay) violation("an operator call in a replayed step");
    }
    void violation(const std::string& what) {
        if (violations_.size() < 64) violations_.push_back(what);
    }
    void inStep(const char* what) {
        if (mode_ != StepMode::Run || step_ != nullptr) violation(std::string(what) + " inside a step");
    }
    // Runs a call now, or holds it for endStep while a step is recorded.
    void exec(std::function<void()> call) {
        if (mode_ == StepMode::Record) step_->calls.push_back(std::move(call));
        else if (mode_ == StepMode::Run) call();
    }
    struct Step {
        int seen = 0;
        bool recorded = false;
        std::vector<std::function<void()>> calls;
    };

    std::unique_ptr<Backend> owned_;
    Backend& inner_;
    std::shared_ptr<Live> live_;
    Limits limits_;
    std::shared_ptr<size_t> weightBytes_ = std::make_shared<size_t>(0);  // matrix copies alive
    DeviceTransfers t_;
    std::vector<std::string> violations_;
    int kvOutside_ = 0;
    int tablesFromHost_ = 0;
    bool recordSteps_ = true;
    std::map<std::string, Step> steps_;
    Step* step_ = nullptr;  // between beginStep and endStep (when recording steps)
    StepMode mode_ = StepMode::Run;
    size_t loadBytes_ = 0;
};

}  // namespace hearth::test
