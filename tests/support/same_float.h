// Bitwise float comparison for the kernel parity tests: the same bits, or both NaN.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

namespace hearth::test {

inline bool sameFloat(float a, float b) {
    return std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b) || (std::isnan(a) && std::isnan(b));
}

}  // namespace hearth::test
