// geluTanh: GeGLU's GELU, the one definition both CPU backends use (gelu_tanh.h).
#include "kernels/cpu/reference/gelu_tanh.h"

#include <cmath>

namespace hearth {

float geluTanh(float x) {
    constexpr float kSqrt2OverPi = 0.79788456080286535588f;
    return 0.5f * x * (1.0f + std::tanh(kSqrt2OverPi * x * (1.0f + 0.044715f * x * x)));
}

}  // namespace hearth
