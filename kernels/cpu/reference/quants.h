// Reference (scalar, portable) dequantization, activation quantization and dot products for
// every weight type. Computes as ggml does: activations are quantized per block to the type
// each weight type pairs with (vecDotType), integer sums within a block, float accumulation of
// scaled block sums in a fixed order. The oracle for every faster kernel.
#pragma once

#include "kernels/dtype.h"

namespace hearth::ref {

// Dequantize n elements (a multiple of the block size) from src (blocks of type t) into dst.
void dequantizeRow(DType t, const void* src, float* dst, int64_t n);

// The activation type a weight type is multiplied with: Q8_0 for Q4_0/Q5_0/Q8_0, Q8_1 for
// Q4_1/Q5_1, Q8_K for the K-quants, F16 for F16, BF16 for BF16, F32 for F32.
DType vecDotType(DType weight);

// Quantize n floats into blocks of type t (Q8_0, Q8_1, Q8_K, F16, BF16 or F32), as ggml's
// reference quantizers do. dst holds rowBytes(t, n) bytes.
void quantizeRow(DType t, const float* src, void* dst, int64_t n);

// Dot product of one weight row (type w) with one activation row already in vecDotType(w).
float vecDot(DType w, const void* weightRow, const void* actRow, int64_t n);

}  // namespace hearth::ref
