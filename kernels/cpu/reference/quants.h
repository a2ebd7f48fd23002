// Reference (scalar, portable) dequantization, activation quantization and dot products for
// every weight type. Computes as ggml does: activations are quantized per block to the type
// each weight type pairs with (vecDotType), integer sums within a block, float accumulation of
// scaled block sums in a fixed order. The oracle for every faster kernel.
//
// Preconditions (checked by callers, e.g. the GGUF reader; not re-checked here): n is a
// multiple of the type's block size and the buffers hold rowBytes(type, n) bytes. These
// functions are pure, allocate nothing, and may be called from any thread.
#pragma once

#include "kernels/dtype.h"

namespace hearth::ref {

// Dequantize n elements (a multiple of the block size) from src (blocks of type t) into dst.
// Each element is computed with exactly the float operations of ggml's reference (and of
// gguf-py's gguf.quants.dequantize): e.g. Q4_K is (d*sc)*q - (dmin*m), Q4_1 is d*q + m.
// Results are bit-identical to gguf-py (tests/kernels/test_dequant_reference.cpp).
// t may be any type of dtype.h, including Q8_1/Q8_K; unknown types leave dst untouched.
void dequantizeRow(DType t, const void* src, float* dst, int64_t n);

// The activation type a weight type is multiplied with: Q8_0 for Q4_0/Q5_0/Q8_0, Q8_1 for
// Q4_1/Q5_1, Q8_K for the K-quants, F16 for F16, BF16 for BF16, F32 for F32.
DType vecDotType(DType weight);

// Quantize n floats into blocks of type t (Q8_0, Q8_1, Q8_K, F16, BF16 or F32), as ggml's
// reference quantizers do (bit-identical). dst holds rowBytes(t, n) bytes.
//   Q8_0: d = amax/127, q = roundf(x * (1/d)) (half away from zero), d stored as f16.
//   Q8_1: as Q8_0, plus s = d * Σq (with the f32 d) stored as f16.
//   Q8_K: max = the element of largest magnitude (signed), iscale = -127/max,
//         q = min(127, nearest-even(iscale*x)), d = 1/iscale (f32), bsums = Σ of each 16;
//         an all-zero block gives d = 0 and q = 0.
//   F16/BF16: round to nearest even. F32: copy.
void quantizeRow(DType t, const float* src, void* dst, int64_t n);

// Dot product of one weight row (type w) with one activation row already in vecDotType(w).
// The summation order is part of the contract, so that a SIMD or GPU kernel can reproduce it
// bit for bit:
//   Block types: per block an exact int32 sum isum = Σ qw·qa (for Q4_K/Q5_K/Q6_K the sum over
//     sub-blocks of scale_j · Σ_j qw·qa; for Q4_K/Q5_K also msum = Σ_j min_j · (the two bsums
//     of sub-block j)); then, in block order, starting from acc = 0.0f:
//     acc = acc + ((dw*da) * isum)                         Q4_0, Q5_0, Q8_0 × Q8_0; Q6_K × Q8_K
//     acc = acc + ((dw*da) * isum + mw*sa)                 Q4_1, Q5_1 × Q8_1 (sa: its s field)
//     acc = acc + ((dw*da) * isum - (dminw*da) * msum)     Q4_K, Q5_K × Q8_K
//     with every operation a rounded float operation (no FMA contraction: the reference is
//     built in ISO C++ mode, where GCC does not contract; a fast kernel must not either).
//   F32, F16, BF16: in float, over 8 lanes starting at 0.0f: element i (weight w_i and
//     activation a_i as floats, exact for all three types) goes into lane i % 8, each lane in
//     increasing i as lane = fma(w_i, a_i, lane) (one rounding: fusedMultiplyAdd here, vfmadd
//     in SIMD); n need not be a multiple of 8 (the last n % 8 elements go into lanes 0 to
//     n % 8 - 1, the other lanes untouched); then ((l0+l4)+(l2+l6)) + ((l1+l5)+(l3+l7)) in
//     rounded float additions. One 8-wide vector FMA per 8 elements: a tiled gemm keeps one
//     accumulator vector per (row, token) and gets these bits however rows and tokens are
//     grouped.
float vecDot(DType w, const void* weightRow, const void* actRow, int64_t n);

// fma(a, b, c) with one rounding (to nearest even), as std::fmaf and the FMA instructions,
// computed with double arithmetic (portable, and fast on CPUs without FMA). NaN payloads may
// differ from std::fmaf's.
float fusedMultiplyAdd(float a, float b, float c);

}  // namespace hearth::ref
