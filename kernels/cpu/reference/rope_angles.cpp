// ropeThetaScale / ropeAngles: one definition for every CPU RoPE (rope_angles.h).
#include "kernels/cpu/reference/rope_angles.h"

#include <cmath>

namespace hearth {

float ropeThetaScale(float freqBase, int nRot) { return std::pow(freqBase, -2.0f / static_cast<float>(nRot)); }

void ropeAngles(int32_t position, float thetaScale, int nRot, float* cosOut, float* sinOut, const float* freqFactors) {
    float theta = static_cast<float>(position);
    for (int i = 0; i < nRot / 2; ++i, theta *= thetaScale) {
        const float angle = freqFactors != nullptr ? theta / freqFactors[i] : theta;
        cosOut[i] = std::cos(angle);
        sinOut[i] = std::sin(angle);
    }
}

}  // namespace hearth
