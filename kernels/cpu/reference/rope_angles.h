// The angles of rotary position embeddings (RoFormer, arXiv 2104.09864), shared by the reference
// RoPE and the AVX2 backend's per-pass tables so that both rotate by the same bits:
// theta_i = pos * base^(-2i/nRot) for pair i, built up by repeated multiplication in float as
// ggml does, and their cosines and sines from libm.
#pragma once

#include <cstdint>

namespace hearth {

// base^(-2/nRot), the ratio of consecutive pairs' angles.
float ropeThetaScale(float freqBase, int nRot);

// cosOut[i], sinOut[i] for the nRot / 2 pairs of one position. freqFactors: nullptr, or nRot / 2
// divisors of the angles (GGUF's rope_freqs.weight, Llama 3.1 and later): pair i turns by
// theta_i / freqFactors[i], divided in float after the repeated multiplication, as ggml does.
void ropeAngles(int32_t position, float thetaScale, int nRot, float* cosOut, float* sinOut,
                const float* freqFactors = nullptr);

}  // namespace hearth
