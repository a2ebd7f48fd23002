// The GELU of GeGLU feed-forward layers (Gemma), tanh form (Hendrycks & Gimpel, arXiv 1606.08415),
// as llama.cpp's CPU backend evaluates it: gelu(x) = 0.5 x (1 + tanh(u)), u = sqrt(2/pi) (x +
// 0.044715 x^3), in float, tabulated at every F16 value and rounded to F16; x is rounded to F16
// (nearest even) to look it up; x <= -10 gives 0 and x >= 10 gives x. Matching the oracle's
// rounding keeps Gemma 3 close to it (a float formula or a more accurate one drifted further:
// conformance). One definition for the reference and the AVX2 backend (same table, same bits).
#pragma once

#include <cstdint>

namespace hearth {

// The table, [65536] floats indexed by F16 bit patterns: each entry an F16 value widened to
// float (NaN patterns: one quiet NaN). Built on first use (thread-safe), 256 KiB.
const float* geluTable();

// GeGLU's product for one element: 0 when gate <= -10, gate * up when gate >= 10, else
// geluTable()[F16 bits of gate] * up.
float gegluOne(float gate, float up);

}  // namespace hearth
