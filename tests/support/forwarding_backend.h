// A Backend that hands every call to another one, for tests and measuring tools: a subclass
// overrides the operators it changes (calling ForwardingBackend's to run the inner one), or
// overrides run() to wrap every call (counting, timing). Not for the engine's hot path: each
// call goes through a std::function.
#pragma once

#include <functional>
#include <string>

#include "kernels/backend.h"

namespace hearth::test {

class ForwardingBackend : public Backend {
public:
    explicit ForwardingBackend(Backend& inner) : inner_(inner) {}

    std::string name() const override { return inner_.name(); }
    void matmul(const WeightView& w, const float* x, int64_t n, float* y) override {
        run("matmul", &w, [&] { inner_.matmul(w, x, n, y); });
    }
    // One call for the group, timed and counted as one (the engine's Q/K/V and gate/up), so that
    // the inner backend's shared hand-off is what is measured; weight: the first matrix.
    void matmulMany(std::span<const WeightView> ws, const float* x, int64_t n, std::span<float* const> ys) override {
        run("matmulMany", ws.empty() ? nullptr : &ws[0], [&] { inner_.matmulMany(ws, x, n, ys); });
    }
    void embeddingRows(const WeightView& t, const int32_t* ids, int64_t n, float* out) override {
        run("embedding", &t, [&] { inner_.embeddingRows(t, ids, n, out); });
    }
    void rmsNorm(const float* x, const float* w, int64_t r, int64_t n, float eps, float* y) override {
        run("rmsNorm", nullptr, [&] { inner_.rmsNorm(x, w, r, n, eps, y); });
    }
    void rope(float* x, int64_t n, int h, int d, int r, const int32_t* p, float b, RopeStyle s,
              const float* f) override {
        run("rope", nullptr, [&] { inner_.rope(x, n, h, d, r, p, b, s, f); });
    }
    void kvWrite(const PagedKvLayer& l, const float* k, const float* v, const int32_t* p, int64_t n) override {
        run("kvWrite", nullptr, [&] { inner_.kvWrite(l, k, v, p, n); });
    }
    void attention(const PagedKvLayer& l, const AttentionShape& s, const float* q, const int32_t* p, int64_t n,
                   float* out) override {
        run("attention", nullptr, [&] { inner_.attention(l, s, q, p, n, out); });
    }
    // Timed and counted as one "attention" call per attentionMany (the inner backend's one hand-off).
    void attentionMany(std::span<const AttentionCall> calls, const AttentionShape& s) override {
        run("attention", nullptr, [&] { inner_.attentionMany(calls, s); });
    }
    void swiglu(const float* g, const float* u, int64_t n, float* out) override {
        run("swiglu", nullptr, [&] { inner_.swiglu(g, u, n, out); });
    }
    void geglu(const float* g, const float* u, int64_t n, float* out) override {
        run("geglu", nullptr, [&] { inner_.geglu(g, u, n, out); });
    }
    void add(float* x, const float* y, int64_t n) override {
        run("add", nullptr, [&] { inner_.add(x, y, n); });
    }
    void scale(float* x, int64_t r, int64_t stride, int64_t n, float s) override {
        run("scale", nullptr, [&] { inner_.scale(x, r, stride, n, s); });
    }
    void softcap(float* x, int64_t n, float cap) override {
        run("softcap", nullptr, [&] { inner_.softcap(x, n, cap); });
    }
    // Memory and transfers are the inner backend's (not passed through run()).
    bool operatesOnHostMemory() const override { return inner_.operatesOnHostMemory(); }
    std::unique_ptr<BackendBuffer> allocate(size_t bytes) override { return inner_.allocate(bytes); }
    void upload(void* dst, const void* src, size_t bytes) override { inner_.upload(dst, src, bytes); }
    void download(void* dst, const void* src, size_t bytes) override { inner_.download(dst, src, bytes); }
    void copy(void* dst, const void* src, size_t bytes) override { inner_.copy(dst, src, bytes); }
    BackendCounters counters() const override { return inner_.counters(); }
    StepMode beginStep(std::string_view key, int64_t nRows) override { return inner_.beginStep(key, nRows); }
    void endStep() override { inner_.endStep(); }

protected:
    // Every call passes here: the operator's name, its weight (matmul, embedding rows; else
    // null) and the inner backend's call, which the default simply makes.
    virtual void run(const char* op, const WeightView* weight, const std::function<void()>& call) {
        (void)op;
        (void)weight;
        call();
    }

private:
    Backend& inner_;
};

}  // namespace hearth::test
