// softmaxExp: the scalar definition that the AVX2 lanes reproduce bit for bit (softmax_exp.h).
#include "kernels/cpu/reference/softmax_exp.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>

namespace hearth {

float softmaxExp(float x) {
    using namespace softmax_exp;
    if (!(x >= kMin)) return 0.0f;
    const float n = (x * kLog2e + kRoundMagic) - kRoundMagic;  // round(x / ln 2), ties to even
    float r = std::fma(n, -kLn2Hi, x);
    r = std::fma(n, -kLn2Lo, r);
    float y = kP0;
    for (float c : {kP1, kP2, kP3, kP4, kP5}) y = std::fma(y, r, c);
    y = std::fma(y, r * r, r) + 1.0f;  // 1 + r + r^2 P(r)
    const uint32_t bits = static_cast<uint32_t>(static_cast<int32_t>(n) + 127) << 23;  // 2^n, n in [-126, 0]
    float scale;
    std::memcpy(&scale, &bits, sizeof scale);
    return y * scale;
}

float swigluOne(float gate, float up) {
    const float e = softmaxExp(-std::fabs(gate));
    const float sigmoid = (gate >= 0.0f ? 1.0f : e) / (1.0f + e);
    return gate * sigmoid * up;
}

}  // namespace hearth
