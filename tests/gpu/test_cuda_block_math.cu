// The CUDA kernels' block arithmetic (device_quants.cuh) run on the CPU against the reference:
// every weight type's dequantized elements (bit for bit) and per-block dp4a dot products
// summed in block order (bit for bit with ref::vecDot), so that the bit twiddling is checked
// on machines without a GPU. The kernels around it are checked on a GPU by test_cuda_ops.
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/reference/quants.h"
#include "kernels/cuda/plugin/device_quants.cuh"

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
        float part = 0.0f;
        switch (t) {
        case DType::Q4_0: part = cuda::dotPlanar<DType::Q4_0>(words, qh, dw, mw, av, suma, a.d[b], a.s[b]); break;
        case DType::Q4_1: part = cuda::dotPlanar<DType::Q4_1>(words, qh, dw, mw, av, suma, a.d[b], a.s[b]); break;
        case DType::Q5_0: part = cuda::dotPlanar<DType::Q5_0>(words, qh, dw, mw, av, suma, a.d[b], a.s[b]); break;
        case DType::Q5_1: part = cuda::dotPlanar<DType::Q5_1>(words, qh, dw, mw, av, suma, a.d[b], a.s[b]); break;
        default: part = cuda::dotPlanar<DType::Q8_0>(words, qh, dw, mw, av, suma, a.d[b], a.s[b]); break;
        }
        acc += part;
    }
    const float ref = ref::vecDot(t, w.data(), act.data(), n);
    expect(acc == ref,
           name + ": planar block dot products sum to " + std::to_string(acc) + ", the reference to " +
               std::to_string(ref));
}

}  // namespace

int main() {
    for (DType t : {DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1, DType::Q8_0}) {
        checkPlanar(t, 256);
        checkPlanar(t, 1024);
        expect(!cuda::planarRows(t, 288) && !cuda::planarRows(t, 576),
               std::string(dtypeInfo(t).name) + ": rows that are not a multiple of 256 taken as planar");
    }
    for (DType t : {DType::F16, DType::Q4_K, DType::Q6_K})
        expect(!cuda::planarRows(t, 1024), std::string(dtypeInfo(t).name) + ": taken as planar");
    for (DType t : {DType::F32, DType::F16, DType::BF16, DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1,
                    DType::Q8_0, DType::Q4_K, DType::Q5_K, DType::Q6_K})
        checkType(t);
    std::printf("%s\n", failures == 0 ? "all block arithmetic matches the reference" : "block arithmetic differs");
    return failures == 0 ? 0 : 1;
}
