// The exponential of the attention softmax, exp(x) for x <= 0, defined operation by operation
// so that the reference (softmaxExp) and the AVX2 lanes (avx2/softmax_exp_avx2.h) give the same
// bits: Cody–Waite reduction x = n ln2 + r, |r| <= ln2/2, then Cephes' degree-7 polynomial
// (expf.c, S. Moshier) evaluated with fused multiply-adds, scaled by 2^n. At most 2 ulp from
// exp (test_softmax_exp); below kSoftmaxExpMin (and for NaN) it returns 0.
#pragma once

namespace hearth::softmax_exp {

inline constexpr float kMin = -87.0f;  // exp(-87) ~ 1.6e-38, still normal
inline constexpr float kLog2e = 1.44269504088896341f;
inline constexpr float kRoundMagic = 12582912.0f;  // 1.5 * 2^23: t + magic - magic rounds t to nearest even
inline constexpr float kLn2Hi = 0.693359375f;  // ln 2 = kLn2Hi + kLn2Lo, kLn2Hi with few bits
inline constexpr float kLn2Lo = -2.12194440e-4f;
inline constexpr float kP0 = 1.9875691500e-4f;  // r^7 .. r^2 coefficients, highest first
inline constexpr float kP1 = 1.3981999507e-3f;
inline constexpr float kP2 = 8.3334519073e-3f;
inline constexpr float kP3 = 4.1665795894e-2f;
inline constexpr float kP4 = 1.6666665459e-1f;
inline constexpr float kP5 = 5.0000001201e-1f;

}  // namespace hearth::softmax_exp

namespace hearth {

// exp(x) for x <= 0 as described above (x > 0 is not used; it stays finite up to x ~ 88).
float softmaxExp(float x);

// SwiGLU's gate times up, silu(gate) * up, through softmaxExp so that the AVX2 lanes
// (avx2::swiglu) give the same bits: e = exp(-|gate|), sigmoid = (gate >= 0 ? 1 : e) / (1 + e),
// out = (gate * sigmoid) * up. Only exponentials of non-positive arguments, so nothing
// overflows; |gate| > 87 gives sigmoid 1 or 0 exactly; a NaN gate gives NaN.
float swigluOne(float gate, float up);

}  // namespace hearth
