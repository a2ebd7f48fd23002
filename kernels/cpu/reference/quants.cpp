// Reference dequantization, activation quantization and dot products, one small function per
// type. Block layouts: GGUF.md "Block layouts" and the structs of kernels/dtype.h.
#include "kernels/cpu/reference/quants.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

namespace hearth::ref {
namespace {

// ---- Unpacking the quantized integers of one block (shared by dequantize and vecDot) ----

// Q4_0/Q4_1/Q5_x nibble order: element j is the low nibble of qs[j], element j+16 the high one.
void unpackNibbles32(const uint8_t* qs, int8_t* q) {
    for (int j = 0; j < kQK / 2; ++j) {
        q[j] = static_cast<int8_t>(qs[j] & 15);
        q[j + kQK / 2] = static_cast<int8_t>(qs[j] >> 4);
    }
}

// Q5_0/Q5_1: qh is a little-endian u32 whose bit j is the fifth bit of element j.
void unpackFiveBits32(const uint8_t* qs, const uint8_t* qhBytes, int8_t* q) {
    unpackNibbles32(qs, q);
    uint32_t qh = 0;
    for (int k = 0; k < 4; ++k) qh |= static_cast<uint32_t>(qhBytes[k]) << (8 * k);
    for (int j = 0; j < kQK; ++j) q[j] = static_cast<int8_t>(q[j] | ((qh >> j) & 1u) << 4);
}

// Q4_K/Q5_K: eight 6-bit scales and mins packed in 12 bytes (GGUF.md).
struct ScalesMins {
    int sc[8];
    int m[8];
};

ScalesMins unpackScalesMins(const uint8_t* s) {
    ScalesMins r;
    for (int j = 0; j < 4; ++j) {
        r.sc[j] = s[j] & 63;
        r.m[j] = s[j + 4] & 63;
    }
    for (int j = 4; j < 8; ++j) {
        r.sc[j] = (s[j + 4] & 15) | ((s[j - 4] >> 6) << 4);
        r.m[j] = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
    }
    return r;
}

// Q4_K: 64-element chunk c takes the low nibbles of qs[32c..32c+31] then their high nibbles.
void unpackQ4K(const BlockQ4_K& b, int8_t* q) {
    for (int c = 0; c < 4; ++c)
        for (int l = 0; l < 32; ++l) {
            q[64 * c + l] = static_cast<int8_t>(b.qs[32 * c + l] & 15);
            q[64 * c + 32 + l] = static_cast<int8_t>(b.qs[32 * c + l] >> 4);
        }
}

// Q5_K: as Q4_K, plus bit k of qh[l] as the fifth bit of element 32k + l (sub-block k).
void unpackQ5K(const BlockQ5_K& b, int8_t* q) {
    for (int c = 0; c < 4; ++c)
        for (int l = 0; l < 32; ++l) {
            const int lo = b.qs[32 * c + l] & 15, hi = b.qs[32 * c + l] >> 4;
            q[64 * c + l] = static_cast<int8_t>(lo | ((b.qh[l] >> (2 * c)) & 1) << 4);
            q[64 * c + 32 + l] = static_cast<int8_t>(hi | ((b.qh[l] >> (2 * c + 1)) & 1) << 4);
        }
}

// Q6_K: per 128-element half, 4 bits from ql and 2 from qh, minus 32 (GGUF.md); element e
// has scale scales[e / 16].
void unpackQ6K(const BlockQ6_K& b, int8_t* q) {
    for (int half = 0; half < 2; ++half) {
        const uint8_t* ql = b.ql + 64 * half;
        const uint8_t* qh = b.qh + 32 * half;
        int8_t* out = q + 128 * half;
        for (int l = 0; l < 32; ++l) {
            out[l] = static_cast<int8_t>(((ql[l] & 15) | ((qh[l] >> 0) & 3) << 4) - 32);
            out[l + 32] = static_cast<int8_t>(((ql[l + 32] & 15) | ((qh[l] >> 2) & 3) << 4) - 32);
            out[l + 64] = static_cast<int8_t>(((ql[l] >> 4) | ((qh[l] >> 4) & 3) << 4) - 32);
            out[l + 96] = static_cast<int8_t>(((ql[l + 32] >> 4) | ((qh[l] >> 6) & 3) << 4) - 32);
        }
    }
}

int dotInts(const int8_t* a, const int8_t* b, int n) {
    int sum = 0;
    for (int i = 0; i < n; ++i) sum += a[i] * b[i];
    return sum;
}

// ---- Dequantization: the float operations (and their order) of ggml and gguf-py ----

void dequantQ4_0(const BlockQ4_0* b, float* y, int64_t nBlocks) {
    for (int64_t i = 0; i < nBlocks; ++i, y += kQK) {
        int8_t q[kQK];
        unpackNibbles32(b[i].qs, q);
        const float d = f16ToF32(b[i].d);
        for (int j = 0; j < kQK; ++j) y[j] = static_cast<float>(q[j] - 8) * d;
    }
}

void dequantQ4_1(const BlockQ4_1* b, float* y, int64_t nBlocks) {
    for (int64_t i = 0; i < nBlocks; ++i, y += kQK) {
        int8_t q[kQK];
        unpackNibbles32(b[i].qs, q);
        const float d = f16ToF32(b[i].d), m = f16ToF32(b[i].m);
        for (int j = 0; j < kQK; ++j) y[j] = static_cast<float>(q[j]) * d + m;
    }
}

void dequantQ5_0(const BlockQ5_0* b, float* y, int64_t nBlocks) {
    for (int64_t i = 0; i < nBlocks; ++i, y += kQK) {
        int8_t q[kQK];
        unpackFiveBits32(b[i].qs, b[i].qh, q);
        const float d = f16ToF32(b[i].d);
        for (int j = 0; j < kQK; ++j) y[j] = static_cast<float>(q[j] - 16) * d;
    }
}

void dequantQ5_1(const BlockQ5_1* b, float* y, int64_t nBlocks) {
    for (int64_t i = 0; i < nBlocks; ++i, y += kQK) {
        int8_t q[kQK];
        unpackFiveBits32(b[i].qs, b[i].qh, q);
        const float d = f16ToF32(b[i].d), m = f16ToF32(b[i].m);
        for (int j = 0; j < kQK; ++j) y[j] = static_cast<float>(q[j]) * d + m;
    }
}

// Q8_0 and Q8_1 (whose s field plays no part in its values).
template <class Block>
void dequantQ8(const Block* b, float* y, int64_t nBlocks) {
    for (int64_t i = 0; i < nBlocks; ++i, y += kQK) {
        const float d = f16ToF32(b[i].d);
        for (int j = 0; j < kQK; ++j) y[j] = static_cast<float>(b[i].qs[j]) * d;
    }
}

// Q4_K and Q5_K: value = (d*sc) * q - (dmin*m), the two products rounded first, as ggml.
template <class Block, void (*unpack)(const Block&, int8_t*)>
void dequantScaleMinK(const Block* b, float* y, int64_t nBlocks) {
    for (int64_t i = 0; i < nBlocks; ++i) {
        int8_t q[kQKK];
        unpack(b[i], q);
        const ScalesMins s = unpackScalesMins(b[i].scales);
        const float d = f16ToF32(b[i].d), dmin = f16ToF32(b[i].dmin);
        for (int sub = 0; sub < 8; ++sub) {
            const float scale = d * static_cast<float>(s.sc[sub]);
            const float offset = dmin * static_cast<float>(s.m[sub]);
            for (int l = 0; l < 32; ++l, ++y) *y = scale * static_cast<float>(q[32 * sub + l]) - offset;
        }
    }
}

void dequantQ6_K(const BlockQ6_K* b, float* y, int64_t nBlocks) {
    for (int64_t i = 0; i < nBlocks; ++i) {
        int8_t q[kQKK];
        unpackQ6K(b[i], q);
        const float d = f16ToF32(b[i].d);
        for (int e = 0; e < kQKK; ++e, ++y)
            *y = (d * static_cast<float>(b[i].scales[e / 16])) * static_cast<float>(q[e]);
    }
}

void dequantQ8_K(const BlockQ8_K* b, float* y, int64_t nBlocks) {
    for (int64_t i = 0; i < nBlocks; ++i)
        for (int j = 0; j < kQKK; ++j, ++y) *y = b[i].d * static_cast<float>(b[i].qs[j]);
}

template <class T, float (*toF32)(T)>
void dequantScalars(const T* src, float* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = toF32(src[i]);
}

float identity(float f) { return f; }

// ---- Activation quantization (ggml's reference quantizers) ----

// Finite activations round into [-127, 127]; NaN or inf (a diverged model) must not make the
// float-to-int conversion undefined behaviour, so NaN becomes 0 and the rest saturates.
int8_t toInt8Saturated(float rounded) {
    if (std::isnan(rounded)) return 0;
    return static_cast<int8_t>(std::clamp(rounded, -128.0f, 127.0f));
}

// One Q8_0/Q8_1 block: returns the f32 scale d = amax/127; q = roundf(x * (1/d)).
float quantizeBlock8(const float* x, int8_t* q) {
    float amax = 0.0f;
    for (int j = 0; j < kQK; ++j) amax = std::max(amax, std::fabs(x[j]));
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    for (int j = 0; j < kQK; ++j) q[j] = toInt8Saturated(std::round(x[j] * id));
    return d;
}

void quantizeQ8_0(const float* x, BlockQ8_0* y, int64_t nBlocks) {
    for (int64_t i = 0; i < nBlocks; ++i, x += kQK) y[i].d = f32ToF16(quantizeBlock8(x, y[i].qs));
}

void quantizeQ8_1(const float* x, BlockQ8_1* y, int64_t nBlocks) {
    for (int64_t i = 0; i < nBlocks; ++i, x += kQK) {
        const float d = quantizeBlock8(x, y[i].qs);
        int sum = 0;
        for (int j = 0; j < kQK; ++j) sum += y[i].qs[j];
        y[i].d = f32ToF16(d);
        y[i].s = f32ToF16(static_cast<float>(sum) * d);  // the f32 d, as ggml
    }
}

// Q8_K scales by the signed element of largest magnitude, so that element becomes -127.
// nearbyint rounds half to even (the default rounding mode), as ggml's nearest_int does.
void quantizeQ8_K(const float* x, BlockQ8_K* y, int64_t nBlocks) {
    for (int64_t i = 0; i < nBlocks; ++i, x += kQKK) {
        float amax = 0.0f, max = 0.0f;
        for (int j = 0; j < kQKK; ++j)
            if (std::fabs(x[j]) > amax) {
                amax = std::fabs(x[j]);
                max = x[j];
            }
        std::memset(&y[i], 0, sizeof y[i]);
        if (amax == 0.0f) continue;
        const float iscale = -127.0f / max;
        for (int j = 0; j < kQKK; ++j)  // ggml: min(127, nearest_int(iscale * x))
            y[i].qs[j] = toInt8Saturated(std::nearbyint(iscale * x[j]));
        for (int g = 0; g < kQKK / 16; ++g) {
            int sum = 0;
            for (int l = 0; l < 16; ++l) sum += y[i].qs[16 * g + l];
            y[i].bsums[g] = static_cast<int16_t>(sum);
        }
        y[i].d = 1.0f / iscale;
    }
}

// ---- Dot products (the order is the contract in quants.h) ----

float dotQ4_0(const BlockQ4_0* w, const BlockQ8_0* a, int64_t nBlocks) {
    float acc = 0.0f;
    for (int64_t i = 0; i < nBlocks; ++i) {
        int8_t q[kQK];
        unpackNibbles32(w[i].qs, q);
        for (int8_t& v : q) v = static_cast<int8_t>(v - 8);
        acc += (f16ToF32(w[i].d) * f16ToF32(a[i].d)) * static_cast<float>(dotInts(q, a[i].qs, kQK));
    }
    return acc;
}

float dotQ5_0(const BlockQ5_0* w, const BlockQ8_0* a, int64_t nBlocks) {
    float acc = 0.0f;
    for (int64_t i = 0; i < nBlocks; ++i) {
        int8_t q[kQK];
        unpackFiveBits32(w[i].qs, w[i].qh, q);
        for (int8_t& v : q) v = static_cast<int8_t>(v - 16);
        acc += (f16ToF32(w[i].d) * f16ToF32(a[i].d)) * static_cast<float>(dotInts(q, a[i].qs, kQK));
    }
    return acc;
}

float dotQ8_0(const BlockQ8_0* w, const BlockQ8_0* a, int64_t nBlocks) {
    float acc = 0.0f;
    for (int64_t i = 0; i < nBlocks; ++i) {
        const int isum = dotInts(w[i].qs, a[i].qs, kQK);
        acc += (f16ToF32(w[i].d) * f16ToF32(a[i].d)) * static_cast<float>(isum);
    }
    return acc;
}

// Q4_1/Q5_1 × Q8_1: Σ (dw·q + mw)·(da·qa) = dw·da·Σ q·qa + mw·(da·Σ qa), the last factor
// being the activation's precomputed s.
float dotQx_1(const int8_t* q, f16_t dw, f16_t mw, const BlockQ8_1& a) {
    const float isum = static_cast<float>(dotInts(q, a.qs, kQK));
    return (f16ToF32(dw) * f16ToF32(a.d)) * isum + f16ToF32(mw) * f16ToF32(a.s);
}

float dotQ4_1(const BlockQ4_1* w, const BlockQ8_1* a, int64_t nBlocks) {
    float acc = 0.0f;
    for (int64_t i = 0; i < nBlocks; ++i) {
        int8_t q[kQK];
        unpackNibbles32(w[i].qs, q);
        acc += dotQx_1(q, w[i].d, w[i].m, a[i]);
    }
    return acc;
}

float dotQ5_1(const BlockQ5_1* w, const BlockQ8_1* a, int64_t nBlocks) {
    float acc = 0.0f;
    for (int64_t i = 0; i < nBlocks; ++i) {
        int8_t q[kQK];
        unpackFiveBits32(w[i].qs, w[i].qh, q);
        acc += dotQx_1(q, w[i].d, w[i].m, a[i]);
    }
    return acc;
}

// Q4_K/Q5_K × Q8_K: Σ (d·sc·q − dmin·m)·(da·qa) = d·da·Σ sc·(Σ q·qa) − dmin·da·Σ m·(Σ qa);
// Σ qa of a 32-element sub-block is two of the activation's 16-element bsums.
template <class Block, void (*unpack)(const Block&, int8_t*)>
float dotScaleMinK(const Block* w, const BlockQ8_K* a, int64_t nBlocks) {
    float acc = 0.0f;
    for (int64_t i = 0; i < nBlocks; ++i) {
        int8_t q[kQKK];
        unpack(w[i], q);
        const ScalesMins s = unpackScalesMins(w[i].scales);
        int isum = 0, msum = 0;
        for (int sub = 0; sub < 8; ++sub) {
            isum += s.sc[sub] * dotInts(q + 32 * sub, a[i].qs + 32 * sub, 32);
            msum += s.m[sub] * (a[i].bsums[2 * sub] + a[i].bsums[2 * sub + 1]);
        }
        acc += (f16ToF32(w[i].d) * a[i].d) * static_cast<float>(isum) -
            (f16ToF32(w[i].dmin) * a[i].d) * static_cast<float>(msum);
    }
    return acc;
}

float dotQ6_K(const BlockQ6_K* w, const BlockQ8_K* a, int64_t nBlocks) {
    float acc = 0.0f;
    for (int64_t i = 0; i < nBlocks; ++i) {
        int8_t q[kQKK];
        unpackQ6K(w[i], q);
        int isum = 0;
        for (int sub = 0; sub < 16; ++sub) isum += w[i].scales[sub] * dotInts(q + 16 * sub, a[i].qs + 16 * sub, 16);
        acc += (f16ToF32(w[i].d) * a[i].d) * static_cast<float>(isum);
    }
    return acc;
}

}  // namespace

// Baseline x86-64 has no FMA instruction, and glibc's fmaf (VEX-encoded) called from this SSE
// code runs ~15x slower than the double arithmetic below; the result is the same.
float fusedMultiplyAdd(float a, float b, float c) {
    const double p = static_cast<double>(a) * static_cast<double>(b);  // exact: 24 + 24 bits
    const double s = p + static_cast<double>(c);
    if (!std::isfinite(s)) return static_cast<float>(s);
    const double bv = s - p;  // TwoSum (Knuth): p + c == s + e exactly
    const double e = (p - (s - bv)) + (static_cast<double>(c) - bv);
    if (e == 0.0) return static_cast<float>(s);
    // s is p + c rounded to nearest; round it to odd instead (an inexact s with an even last
    // bit moves one ulp towards p + c), then to float: one correct rounding, since a double
    // holds more than 2 x 24 + 1 bits (Boldo & Melquiond, IEEE Trans. Computers 57(4), 2008).
    auto bits = std::bit_cast<uint64_t>(s);
    if ((bits & 1) == 0) bits = (e > 0.0) == (s > 0.0) ? bits + 1 : bits - 1;
    return static_cast<float>(std::bit_cast<double>(bits));
}

namespace {

// F32/F16/BF16: 8 float lanes, each a chain of fused multiply-adds, fixed combination
// (quants.h).
template <class T, float (*toF32)(T)>
float dotScalars(const T* w, const T* a, int64_t n) {
    float lanes[8] = {};
    for (int64_t i = 0; i < n; ++i) lanes[i % 8] = fusedMultiplyAdd(toF32(w[i]), toF32(a[i]), lanes[i % 8]);
    const float even = (lanes[0] + lanes[4]) + (lanes[2] + lanes[6]);
    const float odd = (lanes[1] + lanes[5]) + (lanes[3] + lanes[7]);
    return even + odd;
}

template <class T>
const T* as(const void* p) {
    return static_cast<const T*>(p);
}

}  // namespace

void dequantizeRow(DType t, const void* src, float* dst, int64_t n) {
    const int64_t nb32 = n / kQK, nb256 = n / kQKK;
    switch (t) {
    case DType::F32: std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float)); return;
    case DType::F16: return dequantScalars<f16_t, f16ToF32>(as<f16_t>(src), dst, n);
    case DType::BF16: return dequantScalars<bf16_t, bf16ToF32>(as<bf16_t>(src), dst, n);
    case DType::Q4_0: return dequantQ4_0(as<BlockQ4_0>(src), dst, nb32);
    case DType::Q4_1: return dequantQ4_1(as<BlockQ4_1>(src), dst, nb32);
    case DType::Q5_0: return dequantQ5_0(as<BlockQ5_0>(src), dst, nb32);
    case DType::Q5_1: return dequantQ5_1(as<BlockQ5_1>(src), dst, nb32);
    case DType::Q8_0: return dequantQ8(as<BlockQ8_0>(src), dst, nb32);
    case DType::Q8_1: return dequantQ8(as<BlockQ8_1>(src), dst, nb32);
    case DType::Q4_K: return dequantScaleMinK<BlockQ4_K, unpackQ4K>(as<BlockQ4_K>(src), dst, nb256);
    case DType::Q5_K: return dequantScaleMinK<BlockQ5_K, unpackQ5K>(as<BlockQ5_K>(src), dst, nb256);
    case DType::Q6_K: return dequantQ6_K(as<BlockQ6_K>(src), dst, nb256);
    case DType::Q8_K: return dequantQ8_K(as<BlockQ8_K>(src), dst, nb256);
    }
}

DType vecDotType(DType weight) {
    switch (weight) {
    case DType::Q4_0:
    case DType::Q5_0:
    case DType::Q8_0: return DType::Q8_0;
    case DType::Q4_1:
    case DType::Q5_1: return DType::Q8_1;
    case DType::Q4_K:
    case DType::Q5_K:
    case DType::Q6_K: return DType::Q8_K;
    case DType::F16: return DType::F16;
    case DType::BF16: return DType::BF16;
    case DType::F32:
    case DType::Q8_1:
    case DType::Q8_K: return DType::F32;
    }
    return DType::F32;
}

void quantizeRow(DType t, const float* src, void* dst, int64_t n) {
    switch (t) {
    case DType::F32: std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float)); return;
    case DType::F16:
        for (int64_t i = 0; i < n; ++i) static_cast<f16_t*>(dst)[i] = f32ToF16(src[i]);
        return;
    case DType::BF16:
        for (int64_t i = 0; i < n; ++i) static_cast<bf16_t*>(dst)[i] = f32ToBf16(src[i]);
        return;
    case DType::Q8_0: return quantizeQ8_0(src, static_cast<BlockQ8_0*>(dst), n / kQK);
    case DType::Q8_1: return quantizeQ8_1(src, static_cast<BlockQ8_1*>(dst), n / kQK);
    case DType::Q8_K: return quantizeQ8_K(src, static_cast<BlockQ8_K*>(dst), n / kQKK);
    case DType::Q4_0:
    case DType::Q4_1:
    case DType::Q5_0:
    case DType::Q5_1:
    case DType::Q4_K:
    case DType::Q5_K:
    case DType::Q6_K: return;  // weight formats are produced by converters, not by the engine
    }
}

float vecDot(DType w, const void* weightRow, const void* actRow, int64_t n) {
    const int64_t nb32 = n / kQK, nb256 = n / kQKK;
    const void* const wr = weightRow;
    const void* const ar = actRow;
    switch (w) {
    case DType::F32: return dotScalars<float, identity>(as<float>(wr), as<float>(ar), n);
    case DType::F16: return dotScalars<f16_t, f16ToF32>(as<f16_t>(wr), as<f16_t>(ar), n);
    case DType::BF16: return dotScalars<bf16_t, bf16ToF32>(as<bf16_t>(wr), as<bf16_t>(ar), n);
    case DType::Q4_0: return dotQ4_0(as<BlockQ4_0>(wr), as<BlockQ8_0>(ar), nb32);
    case DType::Q4_1: return dotQ4_1(as<BlockQ4_1>(wr), as<BlockQ8_1>(ar), nb32);
    case DType::Q5_0: return dotQ5_0(as<BlockQ5_0>(wr), as<BlockQ8_0>(ar), nb32);
    case DType::Q5_1: return dotQ5_1(as<BlockQ5_1>(wr), as<BlockQ8_1>(ar), nb32);
    case DType::Q8_0: return dotQ8_0(as<BlockQ8_0>(wr), as<BlockQ8_0>(ar), nb32);
    case DType::Q4_K: return dotScaleMinK<BlockQ4_K, unpackQ4K>(as<BlockQ4_K>(wr), as<BlockQ8_K>(ar), nb256);
    case DType::Q5_K: return dotScaleMinK<BlockQ5_K, unpackQ5K>(as<BlockQ5_K>(wr), as<BlockQ8_K>(ar), nb256);
    case DType::Q6_K: return dotQ6_K(as<BlockQ6_K>(wr), as<BlockQ8_K>(ar), nb256);
    case DType::Q8_1:
    case DType::Q8_K: return 0.0f;  // activation-only types are never weights (isWeightType)
    }
    return 0.0f;
}

}  // namespace hearth::ref
