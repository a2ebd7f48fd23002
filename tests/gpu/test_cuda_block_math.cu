// The CUDA kernels' block arithmetic (device_quants.cuh) run on the CPU against the reference:
// every weight type's dequantized elements (bit for bit) and per-block dp4a dot products
// summed in block order (bit for bit with ref::vecDot), so that the bit twiddling is checked
// on machines without a GPU. The kernels around it are checked on a GPU by test_cuda_ops.
#include <algorithm>
#include <array>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <limits>
#include <cstring>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/cpu/reference/quants.h"
#include "kernels/cuda/plugin/attention_grouped.cuh"
#include "kernels/cuda/plugin/device_quants.cuh"
#include "kernels/cuda/plugin/matvec_planar.cuh"
#include "kernels/cuda/plugin/top_k.cuh"

namespace hearth::gpu_test {
std::vector<unsigned char> quantizedRow(DType t, int n, unsigned seed);
}

using namespace hearth;

namespace {

int failures = 0;

void expect(bool ok, const std::string& what) {
    if (!ok) {
        ++failures;
        std::printf("FAIL: %s\n", what.c_str());
    }
}

std::vector<float> randomFloats(int n, unsigned seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> dist(0.0f, 1.0f);
    std::vector<float> v(static_cast<size_t>(n));
    for (float& x : v) x = dist(rng);
    return v;
}

// The activation row in the kernels' layout (q, d, s, bsums), from the reference's blocks.
struct Act {
    std::vector<int8_t> q;
    std::vector<float> d, s;
    std::vector<int16_t> bsums;
};

Act splitActivations(DType actType, const std::vector<unsigned char>& blocks, int n) {
    Act a;
    a.q.resize(static_cast<size_t>(n));
    if (actType == DType::Q8_K) {
        const auto* b = reinterpret_cast<const BlockQ8_K*>(blocks.data());
        for (int i = 0; i < n / 256; ++i) {
            std::memcpy(a.q.data() + 256 * i, b[i].qs, 256);
            a.d.push_back(b[i].d);
            a.bsums.insert(a.bsums.end(), b[i].bsums, b[i].bsums + 16);
        }
    } else {
        const bool one = actType == DType::Q8_1;
        const size_t size = one ? sizeof(BlockQ8_1) : sizeof(BlockQ8_0);
        for (int i = 0; i < n / 32; ++i) {
            const unsigned char* b = blocks.data() + size * static_cast<size_t>(i);
            std::memcpy(a.q.data() + 32 * i, b + (one ? 4 : 2), 32);
            f16_t d, s = 0;
            std::memcpy(&d, b, 2);
            if (one) std::memcpy(&s, b + 2, 2);
            a.d.push_back(f16ToF32(d));
            a.s.push_back(f16ToF32(s));
        }
    }
    return a;
}

float blockDot(DType t, const uint8_t* row, int b, const Act& a) {
    const int8_t* q = a.q.data();
    switch (t) {
    case DType::Q4_0: return cuda::dotQ4_0(row + b * 18, q + b * 32, a.d[b]);
    case DType::Q4_1: return cuda::dotQ4_1(row + b * 20, q + b * 32, a.d[b], a.s[b]);
    case DType::Q5_0: return cuda::dotQ5<false>(row + b * 22, q + b * 32, a.d[b], 0.0f);
    case DType::Q5_1: return cuda::dotQ5<true>(row + b * 24, q + b * 32, a.d[b], a.s[b]);
    case DType::Q8_0: return cuda::dotQ8_0(row + b * 34, q + b * 32, a.d[b]);
    case DType::Q4_K: return cuda::dotScaleMinK<false>(row + b * 144, q + b * 256, a.d[b], a.bsums.data() + b * 16);
    case DType::Q5_K: return cuda::dotScaleMinK<true>(row + b * 176, q + b * 256, a.d[b], a.bsums.data() + b * 16);
    case DType::Q6_K: return cuda::dotQ6_K(row + b * 210, q + b * 256, a.d[b]);
    default: return 0.0f;
    }
}

// dequantEight (the F16 tiles' eight elements a thread) against dequantOne / dequantOnePlanar,
// element by element, bit for bit.
void checkEight(DType t, bool planar, const unsigned char* row, int n, const std::string& name) {
    int mismatches = 0;
    for (int i0 = 0; i0 < n; i0 += 8) {
        float v[8];
        cuda::dequantEight(t, planar, row, n, i0, v);
        for (int k = 0; k < 8; ++k) {
            const float want = planar ? cuda::dequantOnePlanar(t, row, n, i0 + k) : cuda::dequantOne(t, row, i0 + k);
            mismatches += std::memcmp(&v[k], &want, sizeof want) != 0;
        }
    }
    expect(mismatches == 0, name + ": dequantEight differs at " + std::to_string(mismatches) + " elements");
}

void checkType(DType t) {
    const int n = 1024;
    const std::string name = dtypeInfo(t).name;
    const std::vector<unsigned char> w = gpu_test::quantizedRow(t, n, 7);
    std::vector<float> want(static_cast<size_t>(n));
    ref::dequantizeRow(t, w.data(), want.data(), n);
    int mismatches = 0;
    for (int i = 0; i < n; ++i)
        if (cuda::dequantOne(t, w.data(), i) != want[static_cast<size_t>(i)]) ++mismatches;
    expect(mismatches == 0,
           name + ": dequantOne differs from the reference at " + std::to_string(mismatches) + " elements");
    checkEight(t, false, w.data(), n, name);
    const DType actType = ref::vecDotType(t);
    if (actType != DType::Q8_0 && actType != DType::Q8_1 && actType != DType::Q8_K) return;
    const std::vector<float> x = randomFloats(n, 9);
    std::vector<unsigned char> act(rowBytes(actType, n));
    ref::quantizeRow(actType, x.data(), act.data(), n);
    const Act a = splitActivations(actType, act, n);
    const int nBlocks = n / dtypeInfo(t).blockElems;
    float acc = 0.0f;
    for (int b = 0; b < nBlocks; ++b) acc += blockDot(t, w.data(), b, a);
    const float ref = ref::vecDot(t, w.data(), act.data(), n);
    expect(acc == ref,
           name + ": block dot products sum to " + std::to_string(acc) + ", the reference to " + std::to_string(ref));
}

// Planar rows (the decode mat-vec's layout): the planes fill the row exactly, every element reads
// back as dequantOne reads the file's row, and the planar block dot products sum to the
// reference's dot product bit for bit, at the row lengths the layout takes.
void checkPlanar(DType t, int n) {
    const std::string name = std::string(dtypeInfo(t).name) + " planar x" + std::to_string(n);
    if (!cuda::planarRows(t, n)) return expect(false, name + ": not taken as planar");
    const std::vector<unsigned char> w = gpu_test::quantizedRow(t, n, 17);
    const int nb = n / 32;
    const cuda::PlanarPlanes p = cuda::planarPlanes(t, nb);
    const bool min = t == DType::Q4_1 || t == DType::Q5_1, five = t == DType::Q5_0 || t == DType::Q5_1;
    expect((min ? p.m : p.d) + 2 * nb == static_cast<int64_t>(w.size()), name + ": the planes do not fill the row");
    std::vector<unsigned char> planar(w.size(), 0xA5);
    cuda::toPlanarRow(t, w.data(), n, planar.data());
    int mismatches = 0;
    for (int i = 0; i < n; ++i)
        if (cuda::dequantOnePlanar(t, planar.data(), n, i) != cuda::dequantOne(t, w.data(), i)) ++mismatches;
    expect(mismatches == 0, name + ": " + std::to_string(mismatches) + " elements differ from the file's row");
    checkEight(t, true, planar.data(), n, name);
    const DType actType = ref::vecDotType(t);
    const std::vector<float> x = randomFloats(n, 21);
    std::vector<unsigned char> act(rowBytes(actType, n));
    ref::quantizeRow(actType, x.data(), act.data(), n);
    const Act a = splitActivations(actType, act, n);
    float acc = 0.0f;
    for (int b = 0; b < nb; ++b) {
        int words[8], av[8], suma = 0;
        std::memcpy(words, planar.data() + p.qsBytes * b, static_cast<size_t>(p.qsBytes));
        std::memcpy(av, a.q.data() + 32 * b, 32);
        for (int k = 0; k < 8; ++k) suma = cuda::sum4(av[k], suma);
        uint32_t qh = 0;
        if (five) std::memcpy(&qh, planar.data() + p.qh + 4 * b, 4);
        const float dw = cuda::ldHalf(planar.data() + p.d + 2 * b);
        const float mw = min ? cuda::ldHalf(planar.data() + p.m + 2 * b) : 0.0f;
        const auto part = [&](auto type) {
            constexpr DType kT = decltype(type)::value;
            int u[8];
            cuda::unpackPlanar<kT>(words, qh, u);
            return cuda::dotPlanar<kT>(u, dw, mw, av, suma, a.d[b], a.s[b]);
        };
        switch (t) {
        case DType::Q4_0: acc += part(std::integral_constant<DType, DType::Q4_0>{}); break;
        case DType::Q4_1: acc += part(std::integral_constant<DType, DType::Q4_1>{}); break;
        case DType::Q5_0: acc += part(std::integral_constant<DType, DType::Q5_0>{}); break;
        case DType::Q5_1: acc += part(std::integral_constant<DType, DType::Q5_1>{}); break;
        default: acc += part(std::integral_constant<DType, DType::Q8_0>{}); break;
        }
    }
    const float ref = ref::vecDot(t, w.data(), act.data(), n);
    expect(acc == ref,
           name + ": planar block dot products sum to " + std::to_string(acc) + ", the reference to " +
               std::to_string(ref));
}

// A whole planar mat-vec launch run on the CPU (Q4_K too: its rows as the file has them): every
// block and thread of matvecPlanarKernel
// through the functions it calls (planarBlocks, planarSlot, planarThreadSums), with its warp
// butterfly and the sum over warps emulated in its order. Three matrices in one launch (row
// counts that leave partial blocks), 3 tokens; each output against ref::vecDot, nothing
// written outside the outputs, and the same bits with 1 or 4 rows a block and for a token
// alone or in the batch. (On a GPU, test_cuda_ops runs the kernel itself.)
struct AlignedBytes {
    std::vector<int4> storage;  // 16-byte aligned
    uint8_t* data(size_t bytes) {
        storage.assign((bytes + 15) / 16, int4{});
        return reinterpret_cast<uint8_t*>(storage.data());
    }
};

template <DType kT, int kR, int kT2>
void emulateLaunch(cuda::MatvecJobs jobs, int64_t nCols, const cuda::ActBuffers& a, int nTokens) {
    const unsigned blocks = cuda::planarBlocks(jobs, kR);
    for (unsigned block = 0; block < blocks; ++block) {
        const cuda::PlanarSlot slot = cuda::planarSlot<kR>(jobs, block);
        std::vector<std::array<std::array<float, kR>, kT2>> acc(cuda::kPlanarThreads);
        for (int thread = 0; thread < cuda::kPlanarThreads; ++thread) {
            float sums[kT2][kR];
            cuda::planarThreadSums<kT, kR, kT2>(slot, nCols, a, nTokens, thread, sums);
            for (int t = 0; t < kT2; ++t)
                for (int rr = 0; rr < kR; ++rr) acc[static_cast<size_t>(thread)][t][rr] = sums[t][rr];
        }
        for (int t = 0; t < nTokens; ++t)
            for (int rr = 0; rr < kR; ++rr) {
                float partial[cuda::kPlanarThreads / 32];
                for (int warp = 0; warp < cuda::kPlanarThreads / 32; ++warp) {
                    float v[32];
                    for (int lane = 0; lane < 32; ++lane) v[lane] = acc[static_cast<size_t>(32 * warp + lane)][t][rr];
                    for (int o = 16; o > 0; o >>= 1) {  // warpSum: v += shfl_xor(v, o)
                        float next[32];
                        for (int lane = 0; lane < 32; ++lane) next[lane] = v[lane] + v[lane ^ o];
                        std::memcpy(v, next, sizeof v);
                    }
                    partial[warp] = v[0];
                }
                if (slot.r0 + rr >= slot.nRows) continue;
                float sum = partial[0];
                for (int k = 1; k < cuda::kPlanarThreads / 32; ++k) sum += partial[k];
                slot.y[t * slot.nRows + slot.r0 + rr] = sum;
            }
    }
}

template <DType kT>
void checkPlanarLaunch(int64_t nCols) {
    const std::string name = std::string(dtypeInfo(kT).name) + " planar launch x" + std::to_string(nCols);
    const int n = static_cast<int>(nCols);
    const size_t rowSize = rowBytes(kT, nCols);
    const int64_t rowCounts[] = {5, 9, 3};
    std::vector<std::vector<unsigned char>> fileRows[3];
    AlignedBytes planar[3];
    cuda::MatvecJobs jobs;
    for (int m = 0; m < 3; ++m) {
        uint8_t* p = planar[m].data(rowSize * static_cast<size_t>(rowCounts[m]));
        for (int64_t r = 0; r < rowCounts[m]; ++r) {
            fileRows[m].push_back(gpu_test::quantizedRow(kT, n, static_cast<unsigned>(100 * m + r)));
            cuda::toPlanarRow(kT, fileRows[m].back().data(), nCols, p + rowSize * static_cast<size_t>(r));
        }
        jobs.w[m] = p;
        jobs.nRows[m] = rowCounts[m];
    }
    jobs.count = 3;
    const int nTokens = 3;
    const DType actType = ref::vecDotType(kT);
    std::vector<std::vector<unsigned char>> actBlocks;
    std::vector<int8_t> q;
    std::vector<float> d, s;
    std::vector<int16_t> bsums;
    for (int t = 0; t < nTokens; ++t) {
        const std::vector<float> x = randomFloats(n, 40 + static_cast<unsigned>(t));
        actBlocks.emplace_back(rowBytes(actType, n));
        ref::quantizeRow(actType, x.data(), actBlocks.back().data(), n);
        const Act a = splitActivations(actType, actBlocks.back(), n);
        q.insert(q.end(), a.q.begin(), a.q.end());
        d.insert(d.end(), a.d.begin(), a.d.end());
        s.insert(s.end(), a.s.begin(), a.s.end());
        bsums.insert(bsums.end(), a.bsums.begin(), a.bsums.end());
    }
    AlignedBytes qAligned;
    int8_t* qa = reinterpret_cast<int8_t*>(qAligned.data(q.size()));
    std::memcpy(qa, q.data(), q.size());
    const cuda::ActBuffers acts{qa, d.data(), s.data(), bsums.data(), nullptr};
    // Outputs with a NaN guard band after each: every output written, nothing beyond.
    const auto run = [&](auto launch, int tokens) {
        std::vector<std::vector<float>> y(3);
        cuda::MatvecJobs j = jobs;
        for (int m = 0; m < 3; ++m) {
            y[static_cast<size_t>(m)].assign(static_cast<size_t>(tokens * rowCounts[m] + 8),
                                             std::numeric_limits<float>::quiet_NaN());
            j.y[m] = y[static_cast<size_t>(m)].data();
        }
        launch(j, tokens);
        return y;
    };
    const auto r4 = run([&](cuda::MatvecJobs j, int tk) { emulateLaunch<kT, 4, 4>(j, nCols, acts, tk); }, nTokens);
    const auto r1 = run([&](cuda::MatvecJobs j, int tk) { emulateLaunch<kT, 1, 4>(j, nCols, acts, tk); }, nTokens);
    const auto alone = run([&](cuda::MatvecJobs j, int tk) { emulateLaunch<kT, 4, 1>(j, nCols, acts, tk); }, 1);
    double worst = 0.0;
    int unwritten = 0, beyond = 0;
    for (int m = 0; m < 3; ++m) {
        const auto& y = r4[static_cast<size_t>(m)];
        for (int t = 0; t < nTokens; ++t)
            for (int64_t r = 0; r < rowCounts[m]; ++r) {
                const float got = y[static_cast<size_t>(t * rowCounts[m] + r)];
                if (std::isnan(got)) {
                    ++unwritten;
                    continue;
                }
                const float want = ref::vecDot(kT, fileRows[m][static_cast<size_t>(r)].data(),
                                               actBlocks[static_cast<size_t>(t)].data(), n);
                worst = std::max(worst, std::fabs(double(got) - double(want)) / (std::fabs(double(want)) + 1.0));
            }
        for (size_t i = static_cast<size_t>(nTokens * rowCounts[m]); i < y.size(); ++i) beyond += !std::isnan(y[i]);
        expect(std::memcmp(y.data(), r1[static_cast<size_t>(m)].data(), y.size() * sizeof(float)) == 0,
               name + ": 1 row a block gives other bits than 4");
        expect(std::memcmp(y.data(), alone[static_cast<size_t>(m)].data(),
                           static_cast<size_t>(rowCounts[m]) * sizeof(float)) == 0,
               name + ": a token alone gets other bits than in the batch");
    }
    expect(unwritten == 0, name + ": " + std::to_string(unwritten) + " outputs not written");
    expect(beyond == 0, name + ": " + std::to_string(beyond) + " values written past the outputs");
    // Sums of 16 or 136 block terms in another order than the reference's: 1e-4 (a wrong block,
    // row or token is off by the size of the values).
    expect(worst < 1e-4, name + ": error " + std::to_string(worst) + " against ref::vecDot");
}

// A grouped decode-attention launch (attentionGroupedKernel) run on the CPU: every block, warp
// and lane through attention_grouped.cuh, the warp reductions, the butterfly over a load's rows
// and the split merge done in plain loops, for a prefill of nCtx tokens over F16 paged blocks;
// every (token, head) against softmax(q·K)·V in doubles with q rounded to F16 as the reference
// rounds it. (On a GPU, test_cuda_attention runs the kernel itself.)
// The weights every lane of a warp holds (what the kernel's shuffles fetch).
template <int kG>
struct LaneWeights {
    const float (*w)[kG];
    HEARTH_HD float operator()(int g, int j) const { return w[j][g]; }
};

template <int kG>
void checkGroupedAttention(int nKvHeads, int headDim, int nCtx, int window) {
    const std::string name = "grouped attention " + std::to_string(kG * nKvHeads) + "/" + std::to_string(nKvHeads) +
        " x" + std::to_string(headDim) + ", " + std::to_string(nCtx) + " positions, window " + std::to_string(window);
    const int nHeads = kG * nKvHeads, rowStride = nKvHeads * headDim, blockSize = 16;
    const int nBlocks = (nCtx + blockSize - 1) / blockSize;
    const std::vector<float> k = randomFloats(nCtx * rowStride, 61), v = randomFloats(nCtx * rowStride, 62),
                             q = randomFloats(nCtx * nHeads * headDim, 63);
    std::vector<AlignedBytes> kStore(static_cast<size_t>(nBlocks)), vStore(static_cast<size_t>(nBlocks));
    std::vector<uint8_t*> blockPtrs;
    for (int b = 0; b < nBlocks; ++b)
        blockPtrs.push_back(kStore[static_cast<size_t>(b)].data(static_cast<size_t>(blockSize * rowStride * 2)));
    for (int b = 0; b < nBlocks; ++b)
        blockPtrs.push_back(vStore[static_cast<size_t>(b)].data(static_cast<size_t>(blockSize * rowStride * 2)));
    const auto half = [](float x) { return f32ToF16(x); };
    for (int pos = 0; pos < nCtx; ++pos)
        for (int i = 0; i < rowStride; ++i) {
            const size_t at = static_cast<size_t>(pos % blockSize) * rowStride + i;
            reinterpret_cast<f16_t*>(blockPtrs[static_cast<size_t>(pos / blockSize)])[at] =
                half(k[pos * rowStride + i]);
            reinterpret_cast<f16_t*>(blockPtrs[static_cast<size_t>(nBlocks + pos / blockSize)])[at] =
                half(v[pos * rowStride + i]);
        }
    cuda::KvTables kv;
    kv.kBlocks = blockPtrs.data();
    kv.vBlocks = blockPtrs.data() + nBlocks;
    kv.blockSize = blockSize;
    kv.rowStride = rowStride;
    kv.rowBytes = static_cast<size_t>(rowStride) * 2;
    cuda::AttentionParams p;
    p.nHeads = nHeads, p.nKvHeads = nKvHeads, p.headDim = headDim;
    p.scale = 1.0f / std::sqrt(static_cast<float>(headDim));
    p.slidingWindow = window;
    p.nSplits = (nBlocks * blockSize + cuda::kAttentionSplit - 1) / cuda::kAttentionSplit;
    std::vector<float> partial(static_cast<size_t>(nCtx * nHeads * p.nSplits * (headDim + 2)));
    // The rows as three calls of one launch (cuda::AttentionRows, as attentionMany makes them),
    // each with its own q, positions, out and tables (the same blocks through another array).
    const int qRow = nHeads * headDim;
    std::vector<int32_t> positions(static_cast<size_t>(nCtx));
    for (int t = 0; t < nCtx; ++t) positions[static_cast<size_t>(t)] = t;
    std::vector<float> outAll(static_cast<size_t>(nCtx * qRow), NAN);
    // Call 1's q rows, positions and out rows lie apart from the others' (a row taken for the
    // wrong call reads another q and writes elsewhere).
    const std::vector<uint8_t*> otherTables(blockPtrs);
    const std::vector<float> otherQ(q.begin() + nCtx / 3 * qRow, q.begin() + nCtx / 2 * qRow);
    const std::vector<int32_t> otherPositions(positions.begin() + nCtx / 3, positions.begin() + nCtx / 2);
    std::vector<float> otherOut(otherQ.size(), NAN);
    cuda::AttentionRows rows;
    const int starts[] = {0, nCtx / 3, nCtx / 2, nCtx};
    for (int c = 0; c < 3; ++c) {
        const bool other = c == 1;
        rows.rowStart[c] = starts[c];
        rows.kBlocks[c] = other ? otherTables.data() : blockPtrs.data();
        rows.vBlocks[c] = rows.kBlocks[c] + nBlocks;
        rows.q[c] = other ? otherQ.data() : q.data() + starts[c] * qRow;
        rows.positions[c] = other ? otherPositions.data() : positions.data() + starts[c];
        rows.out[c] = other ? otherOut.data() : outAll.data() + starts[c] * qRow;
    }
    rows.rowStart[3] = nCtx;
    rows.count = 3;
    for (int t = 0; t < nCtx; ++t) {
        const int c = t >= starts[2] ? 2 : t >= starts[1] ? 1 : 0;
        const cuda::RowSlot slot = cuda::rowSlot(rows, kv, p, t);
        expect(slot.kv.kBlocks == rows.kBlocks[c] && slot.kv.vBlocks == rows.vBlocks[c] && slot.position == t &&
                   slot.q == rows.q[c] + (t - starts[c]) * qRow && slot.out == rows.out[c] + (t - starts[c]) * qRow,
               name + ": row " + std::to_string(t) + " finds its call's tables, q, position and out");
    }
    for (int t = 0; t < nCtx; ++t)
        for (int kvh = 0; kvh < nKvHeads; ++kvh)
            for (int split = 0; split < p.nSplits; ++split) {
                const cuda::RowSlot slot = cuda::rowSlot(rows, kv, p, t);
                const cuda::SplitRange r = cuda::splitRange(p, slot.position, split);
                const size_t headOffset = static_cast<size_t>(kvh * headDim) * 2;
                static float qs[kG][cuda::kMaxHeadDim];
                for (int g = 0; g < kG; ++g)
                    for (int d = 0; d < headDim; ++d) qs[g][d] = f16ToF32(half(slot.q[(kvh * kG + g) * headDim + d]));
                float warpMaxes[cuda::kSplitWarps][kG], warpSums[cuda::kSplitWarps][kG];
                static float warpAcc[cuda::kSplitWarps][kG][cuda::kMaxHeadDim];
                for (int warp = 0; warp < cuda::kSplitWarps; ++warp) {
                    const int tile = split * cuda::kAttentionSplit + 32 * warp;
                    float weight[32][kG];
                    for (int g = 0; g < kG; ++g) {
                        float sc[32], tileMax = -FLT_MAX, tileSum = 0.0f;
                        for (int lane = 0; lane < 32; ++lane) {
                            const int pos = tile + lane;
                            sc[lane] = -FLT_MAX;
                            if (pos >= r.begin && pos < r.end) {
                                float score[kG];
                                cuda::groupedScores<kG>(slot.kv, headDim, qs, headOffset, pos, score);
                                sc[lane] = score[g] * p.scale;
                            }
                            tileMax = std::max(tileMax, sc[lane]);
                        }
                        for (int lane = 0; lane < 32; ++lane) {
                            const int pos = tile + lane;
                            weight[lane][g] = pos >= r.begin && pos < r.end ? std::exp(sc[lane] - tileMax) : 0.0f;
                            tileSum += weight[lane][g];
                        }
                        const bool any = std::max(r.begin, tile) < std::min(r.end, tile + 32);
                        warpMaxes[warp][g] = any ? tileMax : -FLT_MAX;
                        warpSums[warp][g] = any ? tileSum : 0.0f;
                    }
                    float acc[32][kG][8];
                    for (int lane = 0; lane < 32; ++lane)
                        cuda::groupedValues<kG>(slot.kv, headDim, headOffset, tile, r, lane, LaneWeights<kG>{weight},
                                                acc[lane]);
                    const int lanesPerRow = headDim / 8;
                    for (int o = lanesPerRow; o < 32; o <<= 1) {
                        float next[32][kG][8];
                        for (int lane = 0; lane < 32; ++lane)
                            for (int g = 0; g < kG; ++g)
                                for (int e = 0; e < 8; ++e) next[lane][g][e] = acc[lane][g][e] + acc[lane ^ o][g][e];
                        std::memcpy(acc, next, sizeof acc);
                    }
                    for (int lane = 0; lane < lanesPerRow; ++lane)
                        for (int g = 0; g < kG; ++g)
                            for (int e = 0; e < 8; ++e) warpAcc[warp][g][8 * lane + e] = acc[lane][g][e];
                }
                for (int g = 0; g < kG; ++g) {
                    float splitMax = -FLT_MAX, sum = 0.0f;
                    for (int w = 0; w < cuda::kSplitWarps; ++w)
                        if (warpSums[w][g] > 0.0f) splitMax = std::max(splitMax, warpMaxes[w][g]);
                    float* out = partial.data() + cuda::partialOffset(p, t, kvh * kG + g, split);
                    for (int d = 0; d < headDim; ++d) {
                        float x = 0.0f;
                        for (int w = 0; w < cuda::kSplitWarps; ++w)
                            if (warpSums[w][g] > 0.0f) x += warpAcc[w][g][d] * std::exp(warpMaxes[w][g] - splitMax);
                        out[2 + d] = x;
                    }
                    for (int w = 0; w < cuda::kSplitWarps; ++w)
                        if (warpSums[w][g] > 0.0f) sum += warpSums[w][g] * std::exp(warpMaxes[w][g] - splitMax);
                    out[0] = r.begin < r.end ? splitMax : -FLT_MAX;
                    out[1] = sum;
                }
            }
    double worst = 0.0;
    for (int t = 0; t < nCtx; ++t)
        for (int h = 0; h < nHeads; ++h) {
            float globalMax = -FLT_MAX, total = 0.0f;
            for (int sp = 0; sp < p.nSplits; ++sp)
                globalMax = std::max(globalMax, partial[cuda::partialOffset(p, t, h, sp)]);
            for (int sp = 0; sp < p.nSplits; ++sp) {
                const float* part = partial.data() + cuda::partialOffset(p, t, h, sp);
                if (part[1] > 0.0f) total += part[1] * std::exp(part[0] - globalMax);
            }
            // softmax(q·K)·V in doubles over the positions the token sees, q rounded to F16.
            const int kvh = h / kG, first = window > 0 ? std::max(0, t + 1 - window) : 0;
            std::vector<double> scores;
            double top = -1e300;
            for (int pos = first; pos <= t; ++pos) {
                double dot = 0.0;
                for (int d = 0; d < headDim; ++d)
                    dot += double(f16ToF32(half(q[(t * nHeads + h) * headDim + d]))) *
                        double(f16ToF32(half(k[pos * rowStride + kvh * headDim + d])));
                scores.push_back(dot * p.scale);
                top = std::max(top, scores.back());
            }
            double norm = 0.0;
            for (double& x : scores) norm += x = std::exp(x - top);
            for (int d = 0; d < headDim; ++d) {
                float got = 0.0f;
                for (int sp = 0; sp < p.nSplits; ++sp) {
                    const float* part = partial.data() + cuda::partialOffset(p, t, h, sp);
                    if (part[1] > 0.0f) got += part[2 + d] * std::exp(part[0] - globalMax);
                }
                got /= total;
                cuda::rowSlot(rows, kv, p, t).out[h * headDim + d] = got;  // as the merge stores it
                got = t >= starts[1] && t < starts[2]
                    ? otherOut[static_cast<size_t>((t - starts[1]) * qRow + h * headDim + d)]
                    : outAll[static_cast<size_t>(t * qRow + h * headDim + d)];
                double want = 0.0;
                for (int pos = first; pos <= t; ++pos)
                    want += scores[static_cast<size_t>(pos - first)] / norm *
                        double(f16ToF32(half(v[pos * rowStride + kvh * headDim + d])));
                const double err = std::fabs(double(got) - want);
                worst = std::isnan(err) ? INFINITY : std::max(worst, err);
            }
        }
    // V values are N(0, 1): an absolute error of 1e-4 is float summation; a wrong row, part or
    // head is off by the size of the values.
    expect(worst < 1e-4, name + ": error " + std::to_string(worst) + " against softmax(q K) V");
}

// kvWriteRows's row lookup: each launch row finds its call's tables, K and V rows and position.
void checkKvWriteSlots() {
    cuda::KvTables layout;
    layout.rowStride = 96;
    uint8_t* tables[3][2] = {};
    const std::vector<float> k(40 * 96), v(40 * 96);
    std::vector<int32_t> positions(40);
    for (int i = 0; i < 40; ++i) positions[static_cast<size_t>(i)] = 1000 + i;
    cuda::KvWriteRows rows;
    const int starts[] = {0, 1, 6, 40};
    for (int c = 0; c < 3; ++c) {
        rows.rowStart[c] = starts[c];
        rows.kBlocks[c] = tables[c], rows.vBlocks[c] = tables[c] + 1;
        rows.k[c] = k.data() + starts[c] * 96, rows.v[c] = v.data() + starts[c] * 96;
        rows.positions[c] = positions.data() + starts[c];
    }
    rows.rowStart[3] = 40, rows.count = 3;
    int wrong = 0;
    for (int t = 0; t < 40; ++t) {
        const int c = t >= starts[2] ? 2 : t >= starts[1] ? 1 : 0;
        const cuda::KvWriteSlot w = cuda::kvWriteSlot(rows, layout, t);
        wrong += !(w.kv.kBlocks == rows.kBlocks[c] && w.kv.vBlocks == rows.vBlocks[c] && w.k == k.data() + t * 96 &&
                   w.v == v.data() + t * 96 && w.position == 1000 + t);
    }
    expect(wrong == 0, "kvWriteRows: " + std::to_string(wrong) + " of 40 rows find another call's tables or rows");
}

// qkRopeKvWrite's warps (ropeWriteJob) against qkRope's and kvWriteRows' own indexing: every
// warp's Q or K head is the one qkRope's warp for it rotates, and the K and V bytes the fused
// launch stores are those the kvWriteRows launch stores (F16 halves, or Q8_0 blocks quantized as
// the reference quantizes them, the kernels' rounding). Three calls with their own block tables,
// cache slots apart from the rotation's positions.
void checkRopeWriteJobs(int nHeads, int nKvHeads, int headDim, bool q8) {
    const std::string name = std::string("qkRopeKvWrite ") + std::to_string(nHeads) + "/" + std::to_string(nKvHeads) +
        " x" + std::to_string(headDim) + (q8 ? " Q8_0" : " F16");
    const int nTokens = 23, blockSize = 16, rowStride = nKvHeads * headDim;
    const size_t rowBytes = q8 ? static_cast<size_t>(rowStride / 32) * 34 : static_cast<size_t>(rowStride) * 2;
    std::vector<float> q = randomFloats(nTokens * nHeads * headDim, 71), k = randomFloats(nTokens * rowStride, 72);
    const std::vector<float> v = randomFloats(nTokens * rowStride, 73);
    const int starts[] = {0, 1, 9, nTokens};
    std::vector<int32_t> slots(static_cast<size_t>(nTokens));
    for (int t = 0; t < nTokens; ++t) slots[static_cast<size_t>(t)] = 3 * t + 5;  // up to 71: 5 blocks a call
    constexpr int kBlocks = 5;
    // Two caches with the same tables' shape: [call][k or v][block]; filled with a pattern first.
    std::vector<std::vector<uint8_t>> fusedMem, separateMem;
    std::vector<uint8_t*> fusedPtrs, separatePtrs;
    for (int i = 0; i < 3 * 2 * kBlocks; ++i) {
        fusedMem.emplace_back(blockSize * rowBytes, 0xA5);
        separateMem.emplace_back(blockSize * rowBytes, 0xA5);
    }
    for (int i = 0; i < 3 * 2 * kBlocks; ++i)
        fusedPtrs.push_back(fusedMem[static_cast<size_t>(i)].data()),
            separatePtrs.push_back(separateMem[static_cast<size_t>(i)].data());
    cuda::KvTables layout;
    layout.blockSize = blockSize, layout.rowStride = rowStride, layout.rowBytes = rowBytes, layout.q8 = q8;
    const auto rowsFor = [&](std::vector<uint8_t*>& ptrs) {
        cuda::KvWriteRows rows;
        rows.count = 3;
        for (int c = 0; c < 3; ++c) {
            rows.rowStart[c] = starts[c];
            rows.kBlocks[c] = ptrs.data() + (2 * c) * kBlocks, rows.vBlocks[c] = ptrs.data() + (2 * c + 1) * kBlocks;
            rows.k[c] = k.data() + starts[c] * rowStride, rows.v[c] = v.data() + starts[c] * rowStride;
            rows.positions[c] = slots.data() + starts[c];
        }
        rows.rowStart[3] = nTokens;
        return rows;
    };
    const auto store = [&](const float* src, uint8_t* dst, int n) {  // storeKvValues, one lane at a time
        if (q8)
            for (int b = 0; 32 * b < n; ++b) ref::quantizeRow(DType::Q8_0, src + 32 * b, dst + 34 * b, 32);
        else
            for (int i = 0; i < n; ++i) reinterpret_cast<f16_t*>(dst)[i] = f32ToF16(src[i]);
    };
    // The separate launch: each launch row's K and V rows whole (kvWriteF16Kernel, kvWriteQ8Kernel).
    const cuda::KvWriteRows separate = rowsFor(separatePtrs);
    for (int t = 0; t < nTokens; ++t) {
        const cuda::KvWriteSlot w = cuda::kvWriteSlot(separate, layout, t);
        store(w.k, cuda::rowAt(w.kv.kBlocks, w.kv, w.position), rowStride);
        store(w.v, cuda::rowAt(w.kv.vBlocks, w.kv, w.position), rowStride);
    }
    // The fused launch, warp by warp; a head's rotation left out (the same code as qkRope's).
    const cuda::KvWriteRows fused = rowsFor(fusedPtrs);
    int wrongHeads = 0;
    const int64_t warps = int64_t{nTokens} * (nHeads + 2 * nKvHeads);
    for (int64_t warp = 0; warp < warps; ++warp) {
        const cuda::RopeWriteJob j =
            cuda::ropeWriteJob(q.data(), k.data(), nHeads, nKvHeads, headDim, fused, layout, warp);
        // qkRopeKernel's head for the same (token, head): warp t * (nHeads + nKvHeads) + h.
        const int64_t t = warp / (nHeads + 2 * nKvHeads);
        const int h = static_cast<int>(warp % (nHeads + 2 * nKvHeads));
        const float* want = h < nHeads ? q.data() + (t * nHeads + h) * headDim
            : h < nHeads + nKvHeads    ? k.data() + (t * nKvHeads + (h - nHeads)) * headDim
                                       : nullptr;
        wrongHeads +=
            j.token != t || j.x != want || (j.kind == cuda::RopeWriteJob::K) != (h >= nHeads && want != nullptr);
        if (j.kind == cuda::RopeWriteJob::K) wrongHeads += j.src != j.x;
        if (j.kind != cuda::RopeWriteJob::Q) store(j.src, j.dst, headDim);
    }
    expect(wrongHeads == 0, name + ": " + std::to_string(wrongHeads) + " warps take another head than qkRope's");
    int wrongBlocks = 0;
    for (size_t i = 0; i < fusedMem.size(); ++i) wrongBlocks += fusedMem[i] != separateMem[i];
    expect(wrongBlocks == 0, name + ": " + std::to_string(wrongBlocks) + " cache blocks differ from kvWriteRows'");
}

}  // namespace

// topKRows' selection (ops_topk.cu) run one value at a time with the same pieces: the radix steps
// over the same histograms, the ordered keep, each chunk's then each row's, the rank sort. The
// values kept (in column order) of the m that load gives.
template <class Load>
std::vector<int> emulateSelect(Load load, int m, int wanted) {
    uint32_t prefix = 0, left = static_cast<uint32_t>(wanted), mask = 0;
    for (int shift = 24; shift >= 0; shift -= 8) {
        uint32_t hist[256] = {};
        for (int j = 0; j < m; ++j) {
            uint32_t key;
            int32_t id;
            if (load(j, key, id) && cuda::topCandidate(key, prefix, mask)) ++hist[cuda::topDigit(key, shift)];
        }
        prefix |= static_cast<uint32_t>(cuda::topRadixBin(hist, left)) << shift;
        mask |= 255u << shift;
    }
    std::vector<int> kept;
    uint32_t equalSeen = 0;
    for (int j = 0; j < m && static_cast<int>(kept.size()) < wanted; ++j) {
        uint32_t key;
        int32_t id;
        if (!load(j, key, id)) continue;
        if (key > prefix || (key == prefix && equalSeen++ < left)) kept.push_back(j);
    }
    return kept;
}

void checkTopK(int64_t n, int k, unsigned seed) {
    std::mt19937 rng(seed);
    const float pool[] = {-0.0f, 0.0f, 1.5f, -2.0f, 3.25f, 0.75f, -7.0f, 2.0f, 1e-30f, -1e-30f};
    std::vector<float> x(static_cast<size_t>(n));
    for (float& v : x) {  // odd seeds: fewer ties (adding 0 would turn -0 into +0)
        v = pool[rng() % 10];
        if (seed % 2 == 1) v += 0.001f * static_cast<float>(rng() % 50);
    }
    struct Entry {
        int32_t id;
        float value;
    };
    const int chunks = cuda::topChunks(n);
    std::vector<Entry> kept(static_cast<size_t>(chunks * k), Entry{-9, NAN});
    for (int c = 0; c < chunks; ++c) {
        const int64_t start = static_cast<int64_t>(c) * cuda::kTopChunk;
        const int m = static_cast<int>(std::min<int64_t>(cuda::kTopChunk, n - start));
        const int want = cuda::topChunkKept(n, c, k);
        const auto load = [&](int j, uint32_t& key, int32_t& id) {
            key = cuda::topKey(x[static_cast<size_t>(start + j)]);
            id = static_cast<int32_t>(start + j);
            return true;
        };
        const std::vector<int> got = emulateSelect(load, m, want);
        expect(static_cast<int>(got.size()) == want, "topK chunk keeps " + std::to_string(want));
        for (size_t a = 0; a < got.size(); ++a)
            kept[static_cast<size_t>(c * k) + a] = {static_cast<int32_t>(start + got[a]),
                                                    x[static_cast<size_t>(start + got[a])]};
    }
    const auto load = [&](int j, uint32_t& key, int32_t& id) {
        if (j % k >= cuda::topChunkKept(n, j / k, k)) return false;
        key = cuda::topKey(kept[static_cast<size_t>(j)].value);
        id = kept[static_cast<size_t>(j)].id;
        return true;
    };
    const std::vector<int> chosen = emulateSelect(load, chunks * k, k);
    std::vector<Entry> out(static_cast<size_t>(k), Entry{-9, NAN});
    for (int i : chosen) {
        const Entry& e = kept[static_cast<size_t>(i)];
        int rank = 0;
        for (int j : chosen) {
            const Entry& o = kept[static_cast<size_t>(j)];
            rank += cuda::topBefore(cuda::topKey(o.value), o.id, cuda::topKey(e.value), e.id) ? 1 : 0;
        }
        if (rank < k) out[static_cast<size_t>(rank)] = e;
    }
    std::vector<Entry> want(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) want[static_cast<size_t>(i)] = {static_cast<int32_t>(i), x[static_cast<size_t>(i)]};
    std::stable_sort(want.begin(), want.end(), [](const Entry& a, const Entry& b) { return a.value > b.value; });
    int wrong = 0;
    for (int j = 0; j < k; ++j)
        wrong += out[static_cast<size_t>(j)].id != want[static_cast<size_t>(j)].id ||
            std::memcmp(&out[static_cast<size_t>(j)].value, &want[static_cast<size_t>(j)].value, sizeof(float)) != 0;
    expect(static_cast<int>(chosen.size()) == k && wrong == 0,
           "topK " + std::to_string(k) + " of " + std::to_string(n) + " (seed " + std::to_string(seed) +
               "): " + std::to_string(wrong) + " entries differ from a sort");
}

// topKRows' log-sum-exp (ops_topk.cu's chunkSum, then topLogSumExp) emulated in the kernel's
// order — each of 256 threads' strided values, the 32 lanes by butterfly, the 8 warps in order,
// each chunk of 4,096 — against the host's sum in column order (Backend's logSumExp): within a
// unit or two of the float's last place.
void checkLogSumExp(int64_t n, float spread, unsigned seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal(0.0f, spread);
    std::vector<float> x(static_cast<size_t>(n));
    for (float& v : x) v = normal(rng);
    const int chunks = cuda::topChunks(n);
    std::vector<cuda::TopChunkSum> shares(static_cast<size_t>(chunks));
    for (int c = 0; c < chunks; ++c) {
        const int64_t start = static_cast<int64_t>(c) * cuda::kTopChunk;
        const int m = static_cast<int>(std::min<int64_t>(cuda::kTopChunk, n - start));
        const float* values = x.data() + start;
        float mx = -INFINITY;
        for (int j = 0; j < m; ++j) mx = std::fmax(mx, values[j]);
        double threadSums[cuda::kTopThreads] = {};
        for (int t = 0; t < cuda::kTopThreads; ++t)
            for (int j = t; j < m; j += cuda::kTopThreads)
                threadSums[t] += std::exp(static_cast<double>(values[j]) - static_cast<double>(mx));
        double all = 0;
        for (int w = 0; w < cuda::kTopThreads / 32; ++w) {
            double lanes[32];
            std::copy_n(threadSums + 32 * w, 32, lanes);
            for (int o = 16; o > 0; o >>= 1) {
                double next[32];
                for (int l = 0; l < 32; ++l) next[l] = lanes[l] + lanes[l ^ o];
                std::copy_n(next, 32, lanes);
            }
            all += lanes[0];
        }
        shares[static_cast<size_t>(c)] = {mx, all};
    }
    const float got = cuda::topLogSumExp(shares.data(), chunks);
    const float mx = *std::max_element(x.begin(), x.end());
    double sum = 0;
    for (float v : x) sum += std::exp(static_cast<double>(v) - mx);
    const auto want = static_cast<float>(mx + std::log(sum));
    expect(std::abs(got - want) <= 2e-7f * std::max(1.0f, std::abs(want)),
           "log-sum-exp of " + std::to_string(n) + " values (spread " + std::to_string(spread) +
               "): " + std::to_string(got) + " against " + std::to_string(want));
}

int main() {
    checkKvWriteSlots();
    for (bool q8 : {false, true}) {
        checkRopeWriteJobs(9, 3, 64, q8);  // SmolLM2's heads
        checkRopeWriteJobs(4, 1, 256, q8);  // Gemma 3 270M's
        checkRopeWriteJobs(8, 8, 32, q8);
    }
    for (int64_t n : {1, 300, 4096, 4097, 49152, 262144})
        for (float spread : {0.5f, 4.0f, 30.0f}) checkLogSumExp(n, spread, static_cast<unsigned>(n) + 7);
    unsigned seed = 1;
    for (int64_t n : {1, 5, 300, 4095, 4096, 4097, 10000, 49152})
        for (int k : {1, 2, 40, 256})
            if (k <= n) checkTopK(n, k, seed++), checkTopK(n, k, seed++);
    checkTopK(262144, 40, 99);
    checkTopK(262144, 256, 100);
    checkGroupedAttention<4>(2, 64, 300, 0);
    checkGroupedAttention<4>(1, 256, 130, 64);
    checkGroupedAttention<3>(3, 128, 200, 0);
    checkGroupedAttention<1>(4, 32, 70, 0);
    checkGroupedAttention<8>(1, 128, 40, 0);
    for (int64_t nCols : {512, 4352}) {
        checkPlanarLaunch<DType::Q4_0>(nCols);
        checkPlanarLaunch<DType::Q4_1>(nCols);
        checkPlanarLaunch<DType::Q5_0>(nCols);
        checkPlanarLaunch<DType::Q5_1>(nCols);
        checkPlanarLaunch<DType::Q8_0>(nCols);
        checkPlanarLaunch<DType::Q4_K>(nCols);
    }
    for (int64_t nCols : {2048, 4096}) checkPlanarLaunch<DType::Q6_K>(nCols);
    for (int n : {2048, 4096}) {  // Q6_K's planes: every element reads back as from the file's row
        const std::vector<unsigned char> w = gpu_test::quantizedRow(DType::Q6_K, n, 23);
        std::vector<unsigned char> planar(w.size(), 0xA5);
        cuda::toPlanarRow(DType::Q6_K, w.data(), n, planar.data());
        int mismatches = 0;
        for (int i = 0; i < n; ++i)
            mismatches +=
                cuda::dequantOnePlanar(DType::Q6_K, planar.data(), n, i) != cuda::dequantOne(DType::Q6_K, w.data(), i);
        expect(mismatches == 0,
               "Q6_K planar x" + std::to_string(n) + ": " + std::to_string(mismatches) + " elements differ");
        checkEight(DType::Q6_K, true, planar.data(), n, "Q6_K planar x" + std::to_string(n));
    }
    expect(!cuda::planarRows(DType::Q6_K, 1024), "Q6_K rows of 4 super-blocks taken as planar");
    for (DType t : {DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1, DType::Q8_0}) {
        checkPlanar(t, 256);
        checkPlanar(t, 1024);
        expect(!cuda::planarRows(t, 288) && !cuda::planarRows(t, 576),
               std::string(dtypeInfo(t).name) + ": rows that are not a multiple of 256 taken as planar");
    }
    for (DType t : {DType::F16, DType::Q5_K})
        expect(!cuda::planarRows(t, 1024), std::string(dtypeInfo(t).name) + ": taken as planar");
    for (DType t : {DType::F32, DType::F16, DType::BF16, DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1,
                    DType::Q8_0, DType::Q4_K, DType::Q5_K, DType::Q6_K})
        checkType(t);
    std::printf("%s\n", failures == 0 ? "all block arithmetic matches the reference" : "block arithmetic differs");
    return failures == 0 ? 0 : 1;
}
