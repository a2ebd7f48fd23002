// The GELU of GeGLU feed-forward layers (Gemma), tanh form (Hendrycks & Gimpel, arXiv 1606.08415):
// gelu(x) = 0.5 x (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3), evaluated in float exactly as
// written, as ggml computes the values of its GELU table. Left of x ~ -4 the sum 1 + tanh(u)
// cancels (0 from x ~ -5.5): llama.cpp has the same tail, and a more accurate GELU moved Gemma 3
// away from it (conformance cosine 0.9967 -> 0.9923), so the engine keeps the oracle's formula.
// One definition for the reference and the AVX2 backend (which calls it per element).
#pragma once

namespace hearth {

// 0.5f * x * (1.0f + std::tanh(0.7978845608f * x * (1.0f + 0.044715f * x * x))), no contraction.
float geluTanh(float x);

}  // namespace hearth
