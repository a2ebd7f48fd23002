// Paged KV writes and attention on CUDA vs the CPU reference (part of test_cuda_ops): F16 and
// Q8_0 caches, grouped-query heads, sliding windows, contexts spanning several decode splits;
// the host blocks hold the reference's bytes after the backend's writes come back.
#include <cstdlib>
#include <cstring>
#include <random>
#include <string_view>

#include "tests/gpu/gpu_check.h"

using namespace hearth;
using namespace hearth::gpu_test;

namespace {

// Host KV blocks of one layer, as KvCache lays them out.
struct HostKv {
    std::vector<std::vector<uint8_t>> k, v;
    std::vector<f16_t*> kPtrs, vPtrs;
    PagedKvLayer layer;

    HostKv(int nTokens, int rowStride, DType type) {
        layer.blockSize = 16;
        layer.rowStride = rowStride;
        layer.type = type;
        const size_t blockBytes = kvRowBytes(layer) * static_cast<size_t>(layer.blockSize);
        const int nBlocks = (nTokens + layer.blockSize - 1) / layer.blockSize;
        for (int b = 0; b < nBlocks; ++b) {
            k.emplace_back(blockBytes, 0xAB);  // garbage where nothing was written
            v.emplace_back(blockBytes, 0xCD);
            kPtrs.push_back(reinterpret_cast<f16_t*>(k.back().data()));
            vPtrs.push_back(reinterpret_cast<f16_t*>(v.back().data()));
        }
        layer.kBlocks = kPtrs.data();
        layer.vBlocks = vPtrs.data();
        layer.nBlocks = nBlocks;
    }
    bool sameBytes(const HostKv& o) const { return k == o.k && v == o.v; }
};

std::vector<float> randomFloats(size_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> dist(0.0f, 1.0f);
    std::vector<float> out(n);
    for (float& x : out) x = dist(rng);
    return out;
}

struct Case {
    const char* name;
    DType type;
    int nHeads, nKvHeads, headDim, nCtx, window;
    double tol;  // relative; F16 K/V rows, sums in F32 on both sides (reference and device order differ)
};

void runCase(Backend& cpu, Backend& gpu, const Case& cs, Checks& c, const char* kernel) {
    const int rowStride = cs.nKvHeads * cs.headDim, qRow = cs.nHeads * cs.headDim;
    const std::vector<float> k = randomFloats(static_cast<size_t>(cs.nCtx) * rowStride, 1);
    const std::vector<float> v = randomFloats(static_cast<size_t>(cs.nCtx) * rowStride, 2);
    const std::vector<float> q = randomFloats(static_cast<size_t>(cs.nCtx) * qRow, 3);
    std::vector<int32_t> positions(static_cast<size_t>(cs.nCtx));
    for (int p = 0; p < cs.nCtx; ++p) positions[static_cast<size_t>(p)] = p;
    HostKv cpuKv(cs.nCtx, rowStride, cs.type), gpuKv(cs.nCtx, rowStride, cs.type);
    cpu.kvWrite(cpuKv.layer, k.data(), v.data(), positions.data(), cs.nCtx);
    const int prefill = cs.nCtx - 5;  // a prefill, then token-by-token writes
    gpu.kvWrite(gpuKv.layer, k.data(), v.data(), positions.data(), prefill);
    for (int p = prefill; p < cs.nCtx; ++p)
        gpu.kvWrite(gpuKv.layer, k.data() + static_cast<size_t>(p) * rowStride,
                    v.data() + static_cast<size_t>(p) * rowStride, &positions[static_cast<size_t>(p)], 1);
    const std::string name = std::string(cs.name) + " (" + kernel + ")";
    c.expect(cpuKv.sameBytes(gpuKv), name + ": the host KV blocks hold the reference's bytes after CUDA writes");

    AttentionShape shape{cs.nHeads, cs.nKvHeads, cs.headDim, 1.0f / std::sqrt(static_cast<float>(cs.headDim)),
                         cs.window};
    std::vector<float> want(q.size()), got(q.size());
    cpu.attention(cpuKv.layer, shape, q.data(), positions.data(), cs.nCtx, want.data());
    gpu.attention(gpuKv.layer, shape, q.data(), positions.data(), cs.nCtx, got.data());
    c.expect(relativeError(got, want) < cs.tol,
             describeError(name + ": prefill attention", relativeError(got, want), cs.tol));

    // Decode of the last token: the same bits as in the batch (splits fixed by position).
    const size_t last = static_cast<size_t>(cs.nCtx - 1) * qRow;
    std::vector<float> alone(static_cast<size_t>(qRow));
    gpu.attention(gpuKv.layer, shape, q.data() + last, &positions.back(), 1, alone.data());
    c.expect(std::memcmp(alone.data(), got.data() + last, alone.size() * sizeof(float)) == 0,
             name + ": decode gives the last token the bits it got in the prefill batch");
    // Three sequences in one attentionMany (one launch on CUDA): the first 10 rows, the last
    // token and a middle one, each with tables of its own; every row the bits it got above.
    const int mid = cs.nCtx / 2;
    std::vector<float> first(static_cast<size_t>(10) * qRow), lastRow(static_cast<size_t>(qRow)),
        midRow(lastRow.size());
    const Backend::AttentionCall calls[] = {{&gpuKv.layer, q.data(), positions.data(), 10, first.data()},
                                            {&gpuKv.layer, q.data() + last, &positions.back(), 1, lastRow.data()},
                                            {&gpuKv.layer, q.data() + static_cast<size_t>(mid) * qRow,
                                             &positions[static_cast<size_t>(mid)], 1, midRow.data()}};
    gpu.attentionMany(calls, shape);
    c.expect(std::memcmp(first.data(), got.data(), first.size() * sizeof(float)) == 0 &&
                 std::memcmp(lastRow.data(), got.data() + last, lastRow.size() * sizeof(float)) == 0 &&
                 std::memcmp(midRow.data(), got.data() + static_cast<size_t>(mid) * qRow,
                             midRow.size() * sizeof(float)) == 0,
             name + ": three sequences in one attentionMany get the bits they get alone");
    // The blocks the reference wrote (a restore brings such bytes up): the same bits again.
    std::vector<float> restored(alone.size());
    gpu.attention(cpuKv.layer, shape, q.data() + last, &positions.back(), 1, restored.data());
    c.expect(std::memcmp(alone.data(), restored.data(), alone.size() * sizeof(float)) == 0,
             name + ": blocks the reference wrote give the bits of blocks the backend wrote");
}

// Three sequences' writes in one kvWriteMany (one launch on CUDA), each into blocks of its own:
// the bytes the reference's kvWrite gives each.
void checkKvWriteMany(Backend& cpu, Backend& gpu, Checks& c) {
    for (DType type : {DType::F16, DType::Q8_0}) {
        const int rowStride = 2 * 64, lengths[] = {1, 5, 37};
        std::vector<HostKv> want, got;
        std::vector<std::vector<float>> ks, vs;
        std::vector<std::vector<int32_t>> positions;
        want.reserve(3), got.reserve(3);
        for (int i = 0; i < 3; ++i) {
            want.emplace_back(40, rowStride, type);
            got.emplace_back(40, rowStride, type);
            ks.push_back(randomFloats(static_cast<size_t>(lengths[i]) * rowStride, 10 + i));
            vs.push_back(randomFloats(static_cast<size_t>(lengths[i]) * rowStride, 20 + i));
            std::vector<int32_t>& p = positions.emplace_back();
            for (int j = 0; j < lengths[i]; ++j) p.push_back((j * 7 + i) % 40);  // scattered, distinct
        }
        std::vector<Backend::KvWriteCall> calls;
        for (int i = 0; i < 3; ++i) {
            cpu.kvWrite(want[static_cast<size_t>(i)].layer, ks[static_cast<size_t>(i)].data(),
                        vs[static_cast<size_t>(i)].data(), positions[static_cast<size_t>(i)].data(), lengths[i]);
            calls.push_back({&got[static_cast<size_t>(i)].layer, ks[static_cast<size_t>(i)].data(),
                             vs[static_cast<size_t>(i)].data(), positions[static_cast<size_t>(i)].data(), lengths[i]});
        }
        gpu.kvWriteMany(calls);
        bool same = true;
        for (size_t i = 0; i < 3; ++i) same = same && want[i].sameBytes(got[i]);
        c.expect(same,
                 std::string("kvWriteMany ") + dtypeInfo(type).name +
                     ": three sequences' blocks hold the reference's bytes");
    }
}

// RoPE with the K/V writes (Backend::qkRopeKvWrite: one launch on CUDA) against the same
// backend's separate qkRope and kvWriteMany, bit for bit: q, k and every cache byte, three
// sequences with their own blocks, cache slots apart from the rotation's positions; SmolLM2's and
// Gemma 3's heads (the latter with its per-head norms), F16 and Q8_0 caches.
void checkQkRopeKvWrite(Backend& gpu, Checks& c) {
    struct Shape {
        int nHeads, nKvHeads, headDim;
        bool norms;
    };
    for (DType type : {DType::F16, DType::Q8_0})
        for (const Shape& sh : {Shape{9, 3, 64, false}, Shape{4, 1, 256, true}}) {
            const int rowStride = sh.nKvHeads * sh.headDim, lengths[] = {1, 5, 17}, n = 23;
            std::vector<float> q = randomFloats(static_cast<size_t>(n) * sh.nHeads * sh.headDim, 51),
                               k = randomFloats(static_cast<size_t>(n) * rowStride, 52);
            const std::vector<float> v = randomFloats(static_cast<size_t>(n) * rowStride, 53),
                                     qNorm = randomFloats(static_cast<size_t>(sh.headDim), 54),
                                     kNorm = randomFloats(static_cast<size_t>(sh.headDim), 55);
            std::vector<int32_t> positions, slots;
            for (int i = 0, row = 0; i < 3; ++i)
                for (int j = 0; j < lengths[i]; ++j, ++row)
                    positions.push_back(100 + row), slots.push_back((j * 7 + i) % 40);
            std::vector<HostKv> want, got;
            want.reserve(3), got.reserve(3);
            for (int i = 0; i < 3; ++i) want.emplace_back(40, rowStride, type), got.emplace_back(40, rowStride, type);
            const auto run = [&](std::vector<HostKv>& kv, std::vector<float>& qs, std::vector<float>& ks, bool fused) {
                QkRope r;
                r.q = qs.data(), r.k = ks.data();
                r.nHeads = sh.nHeads, r.nKvHeads = sh.nKvHeads, r.headDim = sh.headDim, r.nRot = sh.headDim;
                r.qNorm = sh.norms ? qNorm.data() : nullptr, r.kNorm = sh.norms ? kNorm.data() : nullptr;
                r.eps = 1e-6f, r.freqBase = 10000.0f;
                std::vector<Backend::KvWriteCall> calls;
                for (int i = 0, row = 0; i < 3; row += lengths[i], ++i)
                    calls.push_back({&kv[static_cast<size_t>(i)].layer, ks.data() + row * rowStride,
                                     v.data() + row * rowStride, slots.data() + row, lengths[i]});
                if (fused) gpu.qkRopeKvWrite(r, positions.data(), n, calls);
                else gpu.Backend::qkRopeKvWrite(r, positions.data(), n, calls);  // qkRope, kvWriteMany
            };
            std::vector<float> wantQ(q), wantK(k), gotQ(q), gotK(k);
            run(want, wantQ, wantK, false);
            run(got, gotQ, gotK, true);
            bool same = wantQ == gotQ && wantK == gotK;
            for (size_t i = 0; i < 3; ++i) same = same && want[i].sameBytes(got[i]);
            c.expect(same,
                     std::string("qkRopeKvWrite ") + dtypeInfo(type).name + " " + std::to_string(sh.nHeads) + "/" +
                         std::to_string(sh.nKvHeads) + " x" + std::to_string(sh.headDim) +
                         ": the separate calls' q, k and cache bytes");
        }
}

}  // namespace

// F16 caches run twice on CUDA: the grouped kernel (a block per KV head) and, with
// HEARTH_CUDA_ATTENTION=heads, the kernel with a block per query head.
void checkAttention(Backend& cpu, Backend& gpu, Checks& c) {
    const Case cases[] = {
        {"f16 gqa 8/2 x64, 600 positions (3 splits)", DType::F16, 8, 2, 64, 600, 0, 5e-3},
        {"f16 4/1 x256, window 64", DType::F16, 4, 1, 256, 130, 64, 5e-3},
        {"f16 9/3 x128, 300 positions", DType::F16, 9, 3, 128, 300, 0, 5e-3},
        {"f16 4/4 x32, 70 positions", DType::F16, 4, 4, 32, 70, 0, 5e-3},
        {"q8_0 9/3 x64, window 100, 300 positions", DType::Q8_0, 9, 3, 64, 300, 100, 2e-2},
    };
    for (const char* kernel : {"grouped", "heads"}) {
        setenv("HEARTH_CUDA_ATTENTION", kernel, 1);
        for (const Case& cs : cases)
            if (cs.type == DType::F16 || std::string_view(kernel) == "grouped") runCase(cpu, gpu, cs, c, kernel);
    }
    unsetenv("HEARTH_CUDA_ATTENTION");
    checkKvWriteMany(cpu, gpu, c);
    checkQkRopeKvWrite(gpu, c);
}
