// The encoding a VNNI kernel source is built for. By default VEX (AVX-VNNI, -mavxvnni): Intel
// desktop CPUs since Alder Lake have it, with or without AVX-512. A *_evex.cpp wrapper defines
// HEARTH_VNNI_EVEX and includes the same source for EVEX on YMM (AVX512_VNNI with AVX512VL,
// -mavx512vl -mavx512vnni): AMD Zen 4 has only that one. The same instruction, vpdpbusd, with
// the same integer results (Intel SDM vol. 2), so both builds give the same bits; the EVEX
// build's functions carry the suffix Evex (HEARTH_VNNI_NAME) so that both link into one binary.
// Include only from those sources; internal linkage.
#pragma once

#include <immintrin.h>

namespace hearth::avx2 {
namespace {

#if defined(HEARTH_VNNI_EVEX)
#define HEARTH_VNNI_NAME(name) name##Evex
inline __m256i dpbusd256(__m256i sum, __m256i u8, __m256i s8) { return _mm256_dpbusd_epi32(sum, u8, s8); }
#else
#define HEARTH_VNNI_NAME(name) name
inline __m256i dpbusd256(__m256i sum, __m256i u8, __m256i s8) { return _mm256_dpbusd_avx_epi32(sum, u8, s8); }
#endif

}  // namespace
}  // namespace hearth::avx2
