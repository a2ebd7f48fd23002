// GeGLU's GELU table and element (gelu_tanh.h), shared by both CPU backends.
#include "kernels/cpu/reference/gelu_tanh.h"

#include <cmath>
#include <limits>
#include <vector>

#include "kernels/dtype.h"

namespace hearth {
namespace {

float geluFormula(float x) {
    constexpr float kSqrt2OverPi = 0.79788456080286535588f;
    return 0.5f * x * (1.0f + std::tanh(kSqrt2OverPi * x * (1.0f + 0.044715f * x * x)));
}

std::vector<float> buildTable() {
    std::vector<float> table(65536);
    for (uint32_t h = 0; h < table.size(); ++h) {
        const float x = f16ToF32(static_cast<f16_t>(h));
        table[h] = std::isnan(x) ? std::numeric_limits<float>::quiet_NaN() : f16ToF32(f32ToF16(geluFormula(x)));
    }
    return table;
}

}  // namespace

const float* geluTable() {
    static const std::vector<float> table = buildTable();
    return table.data();
}

float gegluOne(float gate, float up) {
    if (gate <= -10.0f) return 0.0f;
    if (gate >= 10.0f) return gate * up;
    return geluTable()[f32ToF16(gate)] * up;
}

}  // namespace hearth
