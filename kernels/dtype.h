// The tensor data types Hearth reads from GGUF files, with their exact block layouts.
// One definition of each block struct, shared by every implementation (reference, AVX2, CUDA).
// Plain C++17 on purpose: CUDA sources include this header.
#pragma once

#include <cstddef>
#include <cstdint>

namespace hearth {

// Values are the GGUF/ggml type ids (GGUF.md "Type ids").
enum class DType : uint32_t {
    F32 = 0,
    F16 = 1,
    Q4_0 = 2,
    Q4_1 = 3,
    Q5_0 = 6,
    Q5_1 = 7,
    Q8_0 = 8,
    Q8_1 = 9,
    Q4_K = 12,
    Q5_K = 13,
    Q6_K = 14,
    Q8_K = 15,
    BF16 = 30,
};

using f16_t = uint16_t;  // IEEE binary16 bits
using bf16_t = uint16_t;  // bfloat16 bits

constexpr int kQK = 32;  // elements per block of the 32-element formats
constexpr int kQKK = 256;  // elements per super-block of the K-quants

struct BlockQ4_0 {
    f16_t d;
    uint8_t qs[kQK / 2];
};
struct BlockQ4_1 {
    f16_t d;
    f16_t m;
    uint8_t qs[kQK / 2];
};
struct BlockQ5_0 {
    f16_t d;
    uint8_t qh[4];
    uint8_t qs[kQK / 2];
};
struct BlockQ5_1 {
    f16_t d;
    f16_t m;
    uint8_t qh[4];
    uint8_t qs[kQK / 2];
};
struct BlockQ8_0 {
    f16_t d;
    int8_t qs[kQK];
};
struct BlockQ8_1 {
    f16_t d;
    f16_t s;
    int8_t qs[kQK];
};  // s = d * sum(qs)
struct BlockQ4_K {
    f16_t d;
    f16_t dmin;
    uint8_t scales[12];
    uint8_t qs[kQKK / 2];
};
struct BlockQ5_K {
    f16_t d;
    f16_t dmin;
    uint8_t scales[12];
    uint8_t qh[kQKK / 8];
    uint8_t qs[kQKK / 2];
};
struct BlockQ6_K {
    uint8_t ql[kQKK / 2];
    uint8_t qh[kQKK / 4];
    int8_t scales[kQKK / 16];
    f16_t d;
};
struct BlockQ8_K {
    float d;
    int8_t qs[kQKK];
    int16_t bsums[kQKK / 16];
};

static_assert(sizeof(BlockQ4_0) == 18);
static_assert(sizeof(BlockQ4_1) == 20);
static_assert(sizeof(BlockQ5_0) == 22);
static_assert(sizeof(BlockQ5_1) == 24);
static_assert(sizeof(BlockQ8_0) == 34);
static_assert(sizeof(BlockQ8_1) == 36);
static_assert(sizeof(BlockQ4_K) == 144);
static_assert(sizeof(BlockQ5_K) == 176);
static_assert(sizeof(BlockQ6_K) == 210);
static_assert(sizeof(BlockQ8_K) == 292);

struct DTypeInfo {
    const char* name;  // "Q4_K"; nullptr for ids Hearth does not support
    int blockElems;  // elements per block (1 for F32/F16/BF16)
    int blockBytes;  // bytes per block
};

// Facts about a type id; info.name == nullptr when Hearth does not know the type.
DTypeInfo dtypeInfo(uint32_t typeId);
inline DTypeInfo dtypeInfo(DType t) { return dtypeInfo(static_cast<uint32_t>(t)); }

// True for the types Hearth can hold as weights: every type above except the activation-only
// Q8_1 and Q8_K.
bool isWeightType(DType t);

// Bytes of a row of n elements; n must be a multiple of the block size (callers check it, and
// the product for overflow). 0 for a type Hearth does not know, rather than a division by zero.
inline size_t rowBytes(DType t, int64_t n) {
    const DTypeInfo info = dtypeInfo(t);
    if (info.name == nullptr) return 0;
    return static_cast<size_t>(n / info.blockElems) * static_cast<size_t>(info.blockBytes);
}

// Exact: every half is a float (subnormals, infinities and NaN payloads included).
float f16ToF32(f16_t h);
// Round to nearest even, as ggml's F16C path does: overflow gives inf, NaN gives a quiet NaN.
f16_t f32ToF16(float f);
// Exact: bfloat16 is the top half of a float.
float bf16ToF32(bf16_t h);
// Round to nearest even; NaN stays a (quiet) NaN, as ggml's and gguf-py's conversion.
bf16_t f32ToBf16(float f);

}  // namespace hearth
