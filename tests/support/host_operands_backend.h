// Operator tests over host pointers for a backend that computes in memory of its own
// (Backend::operatesOnHostMemory false, the CUDA plugin): each call uploads its operands into
// that backend's memory, runs the operator there and downloads what it wrote. Matrices are
// uploaded once through packWeight (keyed by their host rows, which must outlive the adapter);
// a paged KV layer's host blocks are uploaded whole before a call and, after kvWrite, come back
// whole, so the host blocks hold exactly what the backend wrote. Attention gets its block tables
// in the backend's memory (PagedKvLayer::tablesOnBackend, as a forward pass gives them); kvWrite
// gets host tables only, so the backend's own table upload is exercised too. Slow by design:
// for parity tests of the operators, never for speed.
#pragma once

#include <cstring>
#include <map>
#include <memory>
#include <stdexcept>
#include <span>
#include <string>
#include <vector>

#include "kernels/backend.h"

namespace hearth::test {

class HostOperandsBackend final : public Backend {
public:
    explicit HostOperandsBackend(Backend& device) : d_(device) {}

    std::string name() const override { return d_.name() + " (host operands)"; }

    void matmul(const WeightView& w, const float* x, int64_t n, float* y) override {
        const WeightView dw = weight(w);
        float* dx = up(x, n * w.nCols);
        float* dy = scratch(n * w.nRows);
        d_.matmul(dw, dx, n, dy);
        down(y, dy, n * w.nRows);
    }
    void matmulMany(std::span<const WeightView> ws, const float* x, int64_t n, std::span<float* const> ys) override {
        if (ws.empty()) return;
        const std::vector<WeightView> dws = weights(ws);
        std::vector<float*> dys;
        for (const WeightView& w : ws) dys.push_back(scratch(n * w.nRows));
        d_.matmulMany(dws, up(x, n * ws[0].nCols), n, dys);
        for (size_t i = 0; i < ws.size(); ++i) down(ys[i], dys[i], n * ws[i].nRows);
    }
    // The prepared input comes back too (a gated input may be written over x, as the engine
    // asks); accumulated outputs go up first.
    void matmulFused(const MatmulInput& in, std::span<const WeightView> ws, int64_t n, std::span<float* const> ys,
                     bool accumulate, float* sums) override {
        if (ws.empty()) return;
        const int64_t nCols = ws[0].nCols;
        const std::vector<WeightView> dws = weights(ws);
        MatmulInput d = in;
        float* dx = up(in.x, n * nCols);
        d.x = dx;
        if (in.normWeight != nullptr) d.normWeight = up(in.normWeight, nCols);
        if (in.up != nullptr) d.up = up(in.up, n * nCols);
        if (in.prepared != nullptr) d.prepared = in.prepared == in.x ? dx : scratch(n * nCols);
        std::vector<float*> dys;
        for (size_t i = 0; i < ws.size(); ++i)
            dys.push_back(accumulate ? up(ys[i], n * ws[i].nRows) : scratch(n * ws[i].nRows));
        d_.matmulFused(d, dws, n, dys, accumulate, sums != nullptr ? scratch(n * ws[0].nRows) : nullptr);
        for (size_t i = 0; i < ws.size(); ++i) down(ys[i], dys[i], n * ws[i].nRows);
        if (in.prepared != nullptr && in.kind != MatmulInput::Kind::Plain) down(in.prepared, d.prepared, n * nCols);
    }
    void embeddingRows(const WeightView& t, const int32_t* ids, int64_t n, float* out) override {
        const WeightView dt = weight(t);
        const int32_t* dids = upInts(ids, n);
        float* dout = scratch(n * t.nCols);
        d_.embeddingRows(dt, dids, n, dout);
        down(out, dout, n * t.nCols);
    }
    void rmsNorm(const float* x, const float* w, int64_t r, int64_t n, float eps, float* y) override {
        float* dx = up(x, r * n);
        const float* dw = up(w, n);
        float* dy = scratch(r * n);
        d_.rmsNorm(dx, dw, r, n, eps, dy);
        down(y, dy, r * n);
    }
    void rope(float* x, int64_t n, int h, int hd, int nRot, const int32_t* p, float base, RopeStyle s,
              const float* f) override {
        float* dx = up(x, n * h * hd);
        const int32_t* dp = upInts(p, n);
        const float* df = f != nullptr ? up(f, nRot / 2) : nullptr;
        d_.rope(dx, n, h, hd, nRot, dp, base, s, df);
        down(x, dx, n * h * hd);
    }
    void kvWrite(const PagedKvLayer& l, const float* k, const float* v, const int32_t* p, int64_t n) override {
        const Mirror m = mirror(l, false);
        d_.kvWrite(m.layer, up(k, n * l.rowStride), up(v, n * l.rowStride), upInts(p, n), n);
        downBlocks(l, m);
    }
    void attention(const PagedKvLayer& l, const AttentionShape& s, const float* q, const int32_t* p, int64_t n,
                   float* out) override {
        const Mirror m = mirror(l, true);
        const int64_t qDim = int64_t{s.nHeads} * s.headDim;
        float* dout = scratch(n * qDim);
        d_.attention(m.layer, s, up(q, n * qDim), upInts(p, n), n, dout);
        down(out, dout, n * qDim);
    }
    // Every call's layer mirrored with its tables in the backend's memory (as a step's are), and
    // every block back afterwards.
    void kvWriteMany(std::span<const KvWriteCall> calls) override {
        std::vector<Mirror> mirrors;
        mirrors.reserve(calls.size());
        std::vector<KvWriteCall> dcalls;
        for (const KvWriteCall& c : calls) {
            mirrors.push_back(mirror(*c.layer, true));
            const int64_t n = c.nTokens * c.layer->rowStride;
            dcalls.push_back(
                {&mirrors.back().layer, up(c.k, n), up(c.v, n), upInts(c.positions, c.nTokens), c.nTokens});
        }
        d_.kvWriteMany(dcalls);
        for (size_t i = 0; i < calls.size(); ++i) downBlocks(*calls[i].layer, mirrors[i]);
    }
    // Every call's layer mirrored with its tables in the backend's memory (as a step's are).
    void attentionMany(std::span<const AttentionCall> calls, const AttentionShape& s) override {
        const int64_t qDim = int64_t{s.nHeads} * s.headDim;
        std::vector<Mirror> mirrors;
        mirrors.reserve(calls.size());
        std::vector<AttentionCall> dcalls;
        for (const AttentionCall& c : calls) {
            mirrors.push_back(mirror(*c.layer, true));
            dcalls.push_back({&mirrors.back().layer, up(c.q, c.nTokens * qDim), upInts(c.positions, c.nTokens),
                              c.nTokens, scratch(c.nTokens * qDim)});
        }
        d_.attentionMany(dcalls, s);
        for (size_t i = 0; i < calls.size(); ++i) down(calls[i].out, dcalls[i].out, calls[i].nTokens * qDim);
    }
    void swiglu(const float* g, const float* u, int64_t n, float* out) override {
        float* dout = scratch(n);
        d_.swiglu(up(g, n), up(u, n), n, dout);
        down(out, dout, n);
    }
    void geglu(const float* g, const float* u, int64_t n, float* out) override {
        float* dout = scratch(n);
        d_.geglu(up(g, n), up(u, n), n, dout);
        down(out, dout, n);
    }
    void add(float* x, const float* y, int64_t n) override {
        float* dx = up(x, n);
        d_.add(dx, up(y, n), n);
        down(x, dx, n);
    }
    void addRmsNormed(float* x, float* y, const float* w, int64_t r, int64_t n, float eps) override {
        float* dx = up(x, r * n);
        float* dy = up(y, r * n);
        d_.addRmsNormed(dx, dy, up(w, n), r, n, eps);
        down(x, dx, r * n);
        down(y, dy, r * n);
    }
    void qkRope(const QkRope& r, const int32_t* p, int64_t n) override {
        const QkRope d = upRope(r, n);
        d_.qkRope(d, upInts(p, n), n);
        downRope(r, d, n);
    }
    // q and k uploaded whole (each write's K rows are rows of r.k: its offset in the upload),
    // every call's layer mirrored with its tables in the backend's memory, all back afterwards.
    void qkRopeKvWrite(const QkRope& r, const int32_t* p, int64_t n, std::span<const KvWriteCall> calls) override {
        const QkRope d = upRope(r, n);
        std::vector<Mirror> mirrors;
        mirrors.reserve(calls.size());
        std::vector<KvWriteCall> dcalls;
        for (const KvWriteCall& c : calls) {
            mirrors.push_back(mirror(*c.layer, true));
            dcalls.push_back({&mirrors.back().layer, d.k + (c.k - r.k), up(c.v, c.nTokens * c.layer->rowStride),
                              upInts(c.positions, c.nTokens), c.nTokens});
        }
        d_.qkRopeKvWrite(d, upInts(p, n), n, dcalls);
        downRope(r, d, n);
        for (size_t i = 0; i < calls.size(); ++i) downBlocks(*calls[i].layer, mirrors[i]);
    }
    void argmaxRows(const float* x, int64_t r, int64_t n, int32_t* o) override {
        BackendBuffer& ids = fresh(static_cast<size_t>(r) * sizeof(int32_t));
        d_.argmaxRows(up(x, r * n), r, n, ids.as<int32_t>());
        d_.download(o, ids.data(), static_cast<size_t>(r) * sizeof(int32_t));
    }
    void topKRows(const float* x, int64_t r, int64_t n, int32_t k, TopEntry* o, float* lse) override {
        BackendBuffer& top = fresh(static_cast<size_t>(r * k) * sizeof(TopEntry));
        BackendBuffer* sums = lse != nullptr ? &fresh(static_cast<size_t>(r) * sizeof(float)) : nullptr;
        d_.topKRows(up(x, r * n), r, n, k, top.as<TopEntry>(), sums != nullptr ? sums->as<float>() : nullptr);
        d_.download(o, top.data(), static_cast<size_t>(r * k) * sizeof(TopEntry));
        if (sums != nullptr) d_.download(lse, sums->data(), static_cast<size_t>(r) * sizeof(float));
    }
    void scale(float* x, int64_t r, int64_t stride, int64_t n, float s) override {
        const int64_t total = r > 0 ? (r - 1) * stride + n : 0;
        float* dx = up(x, total);
        d_.scale(dx, r, stride, n, s);
        down(x, dx, total);
    }
    void softcap(float* x, int64_t n, float cap) override {
        float* dx = up(x, n);
        d_.softcap(dx, n, cap);
        down(x, dx, n);
    }

    // Buffers of the backend's memory made for single calls so far (they are freed at once).
    int callBuffers() const { return callBuffers_; }

private:
    struct Mirror {
        PagedKvLayer layer;
        std::vector<std::shared_ptr<BackendBuffer>> k, v;
        size_t blockBytes = 0;
    };

    BackendBuffer& fresh(size_t bytes) {
        auto b = d_.allocate(bytes);
        if (!b) throw std::runtime_error(d_.name() + ": out of memory in a test call");
        ++callBuffers_;
        live_.push_back(std::move(b));
        if (live_.size() > 64) live_.erase(live_.begin());  // a call uses far fewer
        return *live_.back();
    }
    float* up(const float* host, int64_t n) {
        BackendBuffer& b = fresh(static_cast<size_t>(n) * sizeof(float));
        d_.upload(b.data(), host, static_cast<size_t>(n) * sizeof(float));
        return b.as<float>();
    }
    const int32_t* upInts(const int32_t* host, int64_t n) {
        BackendBuffer& b = fresh(static_cast<size_t>(n) * sizeof(int32_t));
        d_.upload(b.data(), host, static_cast<size_t>(n) * sizeof(int32_t));
        return b.as<int32_t>();
    }
    float* scratch(int64_t n) { return fresh(static_cast<size_t>(n) * sizeof(float)).as<float>(); }
    void down(float* host, const float* device, int64_t n) {
        d_.download(host, device, static_cast<size_t>(n) * sizeof(float));
    }

    std::vector<WeightView> weights(std::span<const WeightView> ws) {
        std::vector<WeightView> out;
        for (const WeightView& w : ws) out.push_back(weight(w));
        return out;
    }
    WeightView weight(const WeightView& w) {
        auto it = weights_.find(w.data);
        if (it == weights_.end()) {
            Packed p;
            p.view = w;
            p.view.packed = {};
            p.holder = d_.packWeight(p.view);
            if (!p.holder) throw std::runtime_error(d_.name() + " made no copy of a matrix");
            it = weights_.emplace(w.data, std::move(p)).first;
        }
        return it->second.view;
    }

    // Every block of a mirrored layer back into the host layer's blocks, as the backend left it.
    void downBlocks(const PagedKvLayer& host, const Mirror& m) {
        for (size_t b = 0; b < m.k.size(); ++b) {
            d_.download(host.kBlocks[b], m.k[b]->data(), m.blockBytes);
            d_.download(host.vBlocks[b], m.v[b]->data(), m.blockBytes);
        }
    }
    // A QkRope's operands of n rows uploaded (q, k, the norms, the frequency factors), and q and k
    // back into the host's rows afterwards.
    QkRope upRope(const QkRope& r, int64_t n) {
        QkRope d = r;
        d.q = up(r.q, n * r.nHeads * r.headDim);
        d.k = up(r.k, n * r.nKvHeads * r.headDim);
        if (r.qNorm != nullptr) d.qNorm = up(r.qNorm, r.headDim);
        if (r.kNorm != nullptr) d.kNorm = up(r.kNorm, r.headDim);
        if (r.freqFactors != nullptr) d.freqFactors = up(r.freqFactors, r.nRot / 2);
        return d;
    }
    void downRope(const QkRope& r, const QkRope& d, int64_t n) {
        down(r.q, d.q, n * r.nHeads * r.headDim);
        down(r.k, d.k, n * r.nKvHeads * r.headDim);
    }

    // The layer's host blocks in fresh blocks of the backend's memory (null entries stay null).
    Mirror mirror(const PagedKvLayer& l, bool tablesOnBackend) {
        if (l.nBlocks <= 0) throw std::logic_error("a test's KV layer needs nBlocks");
        Mirror m;
        m.blockBytes = static_cast<size_t>(l.blockSize) * kvRowBytes(l);
        m.layer = l;
        hostTables_.assign(2 * static_cast<size_t>(l.nBlocks), nullptr);
        for (int b = 0; b < l.nBlocks; ++b) {
            for (int part = 0; part < 2; ++part) {
                const f16_t* host = part == 0 ? l.kBlocks[b] : l.vBlocks[b];
                std::shared_ptr<BackendBuffer> block;
                if (host != nullptr) {
                    block = d_.allocate(m.blockBytes);
                    if (!block) throw std::runtime_error(d_.name() + ": out of memory for a KV block");
                    d_.upload(block->data(), host, m.blockBytes);
                    hostTables_[static_cast<size_t>(part * l.nBlocks + b)] = block->as<f16_t>();
                }
                (part == 0 ? m.k : m.v).push_back(block);
            }
        }
        blocks_.push_back(m.k), blocks_.push_back(m.v);
        if (blocks_.size() > 8) blocks_.erase(blocks_.begin(), blocks_.begin() + 2);
        tableCopies_.push_back(hostTables_);  // the layer's host tables must outlive the call
        if (tableCopies_.size() > 8) tableCopies_.erase(tableCopies_.begin());
        const std::vector<f16_t*>& t = tableCopies_.back();
        m.layer.kBlocks = t.data();
        m.layer.vBlocks = t.data() + l.nBlocks;
        m.layer.tablesOnBackend = nullptr;
        if (tablesOnBackend) {
            BackendBuffer& dt = fresh(t.size() * sizeof(f16_t*));
            d_.upload(dt.data(), t.data(), t.size() * sizeof(f16_t*));
            m.layer.tablesOnBackend = dt.as<f16_t*>();
        }
        return m;
    }

    struct Packed {
        WeightView view;
        std::unique_ptr<WeightBuffer> holder;
    };

    Backend& d_;
    std::map<const void*, Packed> weights_;
    std::vector<std::unique_ptr<BackendBuffer>> live_;
    std::vector<std::vector<std::shared_ptr<BackendBuffer>>> blocks_;
    std::vector<f16_t*> hostTables_;
    std::vector<std::vector<f16_t*>> tableCopies_;
    int callBuffers_ = 0;
};

}  // namespace hearth::test
