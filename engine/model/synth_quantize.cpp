// Weight quantizers for synthetic models (synth.h): ggml's reference rounding for Q4_0, Q4_1,
// Q5_0 and Q5_1 (ggml-quants.c quantize_row_*_ref), and plain min/max K-quants. Activation
// types and floats go through the kernels' reference quantizer.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "engine/model/synth.h"
#include "kernels/cpu/reference/quants.h"

namespace hearth {
namespace {

// Q4_0 / Q5_0: d = (the signed value of largest magnitude) / -(levels/2), q = x/d + levels/2.
template <class Block, int kLevels>
void quantizeSymmetric(const float* x, Block& b) {
    float amax = 0.0f, max = 0.0f;
    for (int j = 0; j < kQK; ++j)
        if (std::fabs(x[j]) > amax) amax = std::fabs(x[j]), max = x[j];
    const float d = max / -static_cast<float>(kLevels / 2);
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    b.d = f32ToF16(d);
    uint32_t qh = 0;
    for (int j = 0; j < kQK / 2; ++j) {
        const int q0 = std::min(kLevels - 1, static_cast<int>(static_cast<int8_t>(x[j] * id + kLevels / 2 + 0.5f)));
        const int q1 =
            std::min(kLevels - 1, static_cast<int>(static_cast<int8_t>(x[j + 16] * id + kLevels / 2 + 0.5f)));
        b.qs[j] = static_cast<uint8_t>((q0 & 15) | ((q1 & 15) << 4));
        qh |= static_cast<uint32_t>((q0 >> 4) & 1) << j | static_cast<uint32_t>((q1 >> 4) & 1) << (j + 16);
    }
    if constexpr (kLevels == 32) std::memcpy(b.qh, &qh, 4);
}

// Q4_1 / Q5_1: d = (max - min) / (levels - 1), m = min, q = (x - min)/d.
template <class Block, int kLevels>
void quantizeAffine(const float* x, Block& b) {
    float min = x[0], max = x[0];
    for (int j = 1; j < kQK; ++j) min = std::min(min, x[j]), max = std::max(max, x[j]);
    const float d = (max - min) / static_cast<float>(kLevels - 1);
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    b.d = f32ToF16(d);
    b.m = f32ToF16(min);
    uint32_t qh = 0;
    for (int j = 0; j < kQK / 2; ++j) {
        const int q0 = std::min(kLevels - 1, static_cast<int>(static_cast<int8_t>((x[j] - min) * id + 0.5f)));
        const int q1 = std::min(kLevels - 1, static_cast<int>(static_cast<int8_t>((x[j + 16] - min) * id + 0.5f)));
        b.qs[j] = static_cast<uint8_t>((q0 & 15) | ((q1 & 15) << 4));
        qh |= static_cast<uint32_t>((q0 >> 4) & 1) << j | static_cast<uint32_t>((q1 >> 4) & 1) << (j + 16);
    }
    if constexpr (kLevels == 32) std::memcpy(b.qh, &qh, 4);
}

// Clamped in float first: a ratio far outside int's range must not reach the conversion.
int roundClamp(float v, int lo, int hi) {
    return static_cast<int>(std::clamp(std::nearbyint(v), static_cast<float>(lo), static_cast<float>(hi)));
}

// Q4_K / Q5_K: 8 sub-blocks of 32, value = d·sc·q − dmin·m with 6-bit sc and m (GGUF.md).
// Fills q[256] with levels 0..kLevels-1 and the block's d, dmin, scales.
template <int kLevels, class Block>
void quantizeKMinMax(const float* x, Block& b, uint8_t* q) {
    float scale[8], minus[8], maxScale = 0.0f, maxMin = 0.0f;
    for (int j = 0; j < 8; ++j) {
        const float* s = x + 32 * j;
        const float lo = std::min(0.0f, *std::min_element(s, s + 32)), hi = *std::max_element(s, s + 32);
        scale[j] = (hi - lo) / static_cast<float>(kLevels - 1);
        minus[j] = -lo;
        maxScale = std::max(maxScale, scale[j]);
        maxMin = std::max(maxMin, minus[j]);
    }
    b.d = f32ToF16(maxScale / 63.0f);
    b.dmin = f32ToF16(maxMin / 63.0f);
    const float d = f16ToF32(b.d), dmin = f16ToF32(b.dmin);
    std::memset(b.scales, 0, sizeof b.scales);
    for (int j = 0; j < 8; ++j) {
        const int sc = d > 0 ? roundClamp(scale[j] / d, 0, 63) : 0,
                  m = dmin > 0 ? roundClamp(minus[j] / dmin, 0, 63) : 0;
        if (j < 4) {
            b.scales[j] = static_cast<uint8_t>(sc);
            b.scales[j + 4] = static_cast<uint8_t>(m);
        } else {
            b.scales[j + 4] = static_cast<uint8_t>((sc & 15) | ((m & 15) << 4));
            b.scales[j - 4] |= static_cast<uint8_t>((sc >> 4) << 6);
            b.scales[j] |= static_cast<uint8_t>((m >> 4) << 6);
        }
        const float step = d * static_cast<float>(sc), offset = dmin * static_cast<float>(m);
        for (int i = 0; i < 32; ++i)
            q[32 * j + i] =
                static_cast<uint8_t>(step > 0 ? roundClamp((x[32 * j + i] + offset) / step, 0, kLevels - 1) : 0);
    }
}

void quantizeQ4K(const float* x, BlockQ4_K& b) {
    uint8_t q[kQKK];
    quantizeKMinMax<16>(x, b, q);
    for (int c = 0; c < 4; ++c)
        for (int l = 0; l < 32; ++l) b.qs[32 * c + l] = static_cast<uint8_t>(q[64 * c + l] | (q[64 * c + 32 + l] << 4));
}

void quantizeQ5K(const float* x, BlockQ5_K& b) {
    uint8_t q[kQKK];
    quantizeKMinMax<32>(x, b, q);
    std::memset(b.qh, 0, sizeof b.qh);
    for (int c = 0; c < 4; ++c) {
        for (int l = 0; l < 32; ++l) {
            const int lo = q[64 * c + l], hi = q[64 * c + 32 + l];
            b.qs[32 * c + l] = static_cast<uint8_t>((lo & 15) | ((hi & 15) << 4));
            b.qh[l] |= static_cast<uint8_t>(((lo >> 4) << (2 * c)) | ((hi >> 4) << (2 * c + 1)));
        }
    }
}

// Q6_K: 16 sub-blocks of 16 with int8 scales, value d·sc·(q − 32); sub-block k covers
// elements 16k..16k+15 (GGUF.md's layout read back).
void quantizeQ6K(const float* x, BlockQ6_K& b) {
    float scale[16], maxScale = 0.0f;
    for (int k = 0; k < 16; ++k) {
        float amax = 0.0f;
        for (int i = 0; i < 16; ++i) amax = std::max(amax, std::fabs(x[16 * k + i]));
        scale[k] = amax / 31.0f;
        maxScale = std::max(maxScale, scale[k]);
    }
    b.d = f32ToF16(maxScale / 127.0f);
    const float d = f16ToF32(b.d);
    uint8_t q[kQKK];
    for (int k = 0; k < 16; ++k) {
        const int sc = d > 0 ? roundClamp(scale[k] / d, 0, 127) : 0;
        b.scales[k] = static_cast<int8_t>(sc);
        const float step = d * static_cast<float>(sc);
        for (int i = 0; i < 16; ++i)
            q[16 * k + i] = static_cast<uint8_t>(step > 0 ? roundClamp(x[16 * k + i] / step, -32, 31) + 32 : 32);
    }
    for (int h = 0; h < 2; ++h) {
        uint8_t* ql = b.ql + 64 * h;
        uint8_t* qh = b.qh + 32 * h;
        const uint8_t* qq = q + 128 * h;
        for (int l = 0; l < 32; ++l) {
            ql[l] = static_cast<uint8_t>((qq[l] & 15) | ((qq[l + 64] & 15) << 4));
            ql[l + 32] = static_cast<uint8_t>((qq[l + 32] & 15) | ((qq[l + 96] & 15) << 4));
            qh[l] = static_cast<uint8_t>((qq[l] >> 4) | ((qq[l + 32] >> 4) << 2) | ((qq[l + 64] >> 4) << 4) |
                                         ((qq[l + 96] >> 4) << 6));
        }
    }
}

template <class Block, class Fn>
void perBlock(const float* src, void* dst, int64_t n, int blockElems, Fn fn) {
    auto* blocks = static_cast<Block*>(dst);
    for (int64_t i = 0; i < n / blockElems; ++i) fn(src + i * blockElems, blocks[i]);
}

}  // namespace

void synthQuantizeRow(DType t, const float* src, void* dst, int64_t n) {
    switch (t) {
    case DType::Q4_0: return perBlock<BlockQ4_0>(src, dst, n, kQK, quantizeSymmetric<BlockQ4_0, 16>);
    case DType::Q5_0: return perBlock<BlockQ5_0>(src, dst, n, kQK, quantizeSymmetric<BlockQ5_0, 32>);
    case DType::Q4_1: return perBlock<BlockQ4_1>(src, dst, n, kQK, quantizeAffine<BlockQ4_1, 16>);
    case DType::Q5_1: return perBlock<BlockQ5_1>(src, dst, n, kQK, quantizeAffine<BlockQ5_1, 32>);
    case DType::Q4_K: return perBlock<BlockQ4_K>(src, dst, n, kQKK, quantizeQ4K);
    case DType::Q5_K: return perBlock<BlockQ5_K>(src, dst, n, kQKK, quantizeQ5K);
    case DType::Q6_K: return perBlock<BlockQ6_K>(src, dst, n, kQKK, quantizeQ6K);
    default: return ref::quantizeRow(t, src, dst, n);  // F32, F16, BF16, Q8_0
    }
}

}  // namespace hearth
