// Type facts (GGUF.md "Type ids" and "Block layouts") and the exact half/bfloat16 conversions
// every kernel shares.
#include "kernels/dtype.h"

#include <cstring>

namespace hearth {
namespace {

uint32_t floatBits(float f) {
    uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    return u;
}

float bitsFloat(uint32_t u) {
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
}

// v >> shift, rounded to nearest with ties to even (shift in 1..31).
uint32_t shiftRightRne(uint32_t v, int shift) {
    const uint32_t half = 1u << (shift - 1);
    const uint32_t rest = v & ((1u << shift) - 1);
    uint32_t q = v >> shift;
    if (rest > half || (rest == half && (q & 1u))) ++q;
    return q;
}

}  // namespace

DTypeInfo dtypeInfo(uint32_t typeId) {
    switch (static_cast<DType>(typeId)) {
    case DType::F32: return {"F32", 1, 4};
    case DType::F16: return {"F16", 1, 2};
    case DType::BF16: return {"BF16", 1, 2};
    case DType::Q4_0: return {"Q4_0", kQK, sizeof(BlockQ4_0)};
    case DType::Q4_1: return {"Q4_1", kQK, sizeof(BlockQ4_1)};
    case DType::Q5_0: return {"Q5_0", kQK, sizeof(BlockQ5_0)};
    case DType::Q5_1: return {"Q5_1", kQK, sizeof(BlockQ5_1)};
    case DType::Q8_0: return {"Q8_0", kQK, sizeof(BlockQ8_0)};
    case DType::Q8_1: return {"Q8_1", kQK, sizeof(BlockQ8_1)};
    case DType::Q4_K: return {"Q4_K", kQKK, sizeof(BlockQ4_K)};
    case DType::Q5_K: return {"Q5_K", kQKK, sizeof(BlockQ5_K)};
    case DType::Q6_K: return {"Q6_K", kQKK, sizeof(BlockQ6_K)};
    case DType::Q8_K: return {"Q8_K", kQKK, sizeof(BlockQ8_K)};
    }
    return {nullptr, 0, 0};
}

bool isWeightType(DType t) {
    switch (t) {
    case DType::F32:
    case DType::F16:
    case DType::BF16:
    case DType::Q4_0:
    case DType::Q4_1:
    case DType::Q5_0:
    case DType::Q5_1:
    case DType::Q8_0:
    case DType::Q4_K:
    case DType::Q5_K:
    case DType::Q6_K: return true;
    case DType::Q8_1:
    case DType::Q8_K: return false;
    }
    return false;
}

// IEEE 754 binary16: 1 sign, 5 exponent (bias 15), 10 mantissa bits. Every half is exactly
// representable as a float, so this conversion is exact.
float f16ToF32(f16_t h) {
    const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    const uint32_t exponent = (h >> 10) & 0x1fu;
    const uint32_t mantissa = h & 0x3ffu;
    if (exponent == 0x1f)  // inf, or NaN with its payload kept
        return bitsFloat(sign | 0x7f800000u | (mantissa << 13));
    if (exponent != 0)  // normal: rebias 15 -> 127
        return bitsFloat(sign | ((exponent + 112u) << 23) | (mantissa << 13));
    // zero or subnormal: mantissa * 2^-24, exact in float
    const float magnitude = static_cast<float>(mantissa) * 0x1p-24f;
    return sign ? -magnitude : magnitude;
}

// Round to nearest even, as the F16C instruction ggml uses: overflow gives inf, values below
// half the smallest subnormal give zero, NaN stays a (quiet) NaN with its top payload bits.
f16_t f32ToF16(float f) {
    const uint32_t x = floatBits(f);
    const auto sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
    const uint32_t magnitude = x & 0x7fffffffu;
    if (magnitude > 0x7f800000u) return static_cast<f16_t>(sign | 0x7e00u | ((magnitude >> 13) & 0x3ffu));
    if (magnitude >= 0x477ff000u)  // >= 65520 = halfway from 65504 (max half) to 65536: inf
        return static_cast<f16_t>(sign | 0x7c00u);
    const uint32_t exponent = magnitude >> 23;
    if (exponent >= 113) {  // normal half (>= 2^-14); a mantissa carry bumps the exponent
        const uint32_t rebiased = magnitude - (112u << 23);
        return static_cast<f16_t>(sign | shiftRightRne(rebiased, 13));
    }
    if (magnitude <= 0x33000000u)  // <= 2^-25: rounds to zero (the tie goes to even 0)
        return sign;
    // subnormal half: units of 2^-24; the float is (1.mantissa) * 2^(exponent-127)
    const uint32_t significand = (magnitude & 0x7fffffu) | 0x800000u;
    return static_cast<f16_t>(sign | shiftRightRne(significand, static_cast<int>(126 - exponent)));
}

// bfloat16 is the top half of a float.
float bf16ToF32(bf16_t h) { return bitsFloat(static_cast<uint32_t>(h) << 16); }

// Round to nearest even; NaN is kept a NaN by forcing the quiet bit (truncation alone could
// turn a NaN whose payload sits in the low half into inf).
bf16_t f32ToBf16(float f) {
    const uint32_t x = floatBits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<bf16_t>((x >> 16) | 0x40u);
    return static_cast<bf16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

}  // namespace hearth
