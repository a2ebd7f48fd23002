// The AVX-512 VNNI build of the repacked K-quant decode tiles (gemmPackedRowsK for Q4_K, Q5_K
// and Q6_K): as the 32-block build (gemm_q32_avx512vnni.cpp), two packed groups of 8 rows side
// by side in a ZMM register (lanes 0-7 group g, 8-15 group g + 1), so that one vpdpbusd serves
// 16 rows and every unpacking instruction, scale product and float term does 16 rows' work.
// The integer sums are exact (their bounds: gemm_kquants_packed.h), so any order gives the AVX-VNNI
// tile's integers, and the float term per super-block is packedBlockTerm's expression lane for
// lane: every value is bitwise the same. Built with -mavx512f/bw/vl/vnni and run only when
// cpuFeatures().canRunAvx512Vnni() (MatmulArgs::avx512Vnni).
#include "kernels/cpu/avx2/gemm_kquants_avx512vnni.h"

#include <algorithm>
#include <cstring>

#include "kernels/cpu/avx2/gemm_kquants_packed.h"

// GCC 12's avx512fintrin.h seeds the unmasked conversions and inserts with an _mm512_undefined_*
// value that -Wmaybe-uninitialized reports at every use (a false positive).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace hearth::avx2 {
namespace {

// The same 32 bytes of two packed super-blocks (groups g and g + 1) in one register.
inline __m512i join256(const uint8_t* lo, const uint8_t* hi) {
    return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(lo))),
                              _mm256_loadu_si256(reinterpret_cast<const __m256i*>(hi)), 1);
}
inline __m256i join128(const uint8_t* lo, const uint8_t* hi) {
    return _mm256_set_m128i(_mm_loadu_si128(reinterpret_cast<const __m128i*>(hi)),
                            _mm_loadu_si128(reinterpret_cast<const __m128i*>(lo)));
}

// Bits n.. of each byte moved to bits 4.. (gemm_kquants.cpp's bitsTo4 on 16 rows).
inline __m512i bitsTo4(__m512i v, int n) {
    if (n < 4) return _mm512_slli_epi16(v, static_cast<unsigned>(4 - n));
    return n > 4 ? _mm512_srli_epi16(v, static_cast<unsigned>(n - 4)) : v;
}

// Vector 8j + s of both super-blocks (values 32j + 4s .. + 3 of the 16 rows, unsigned; Q6_K's
// u = value + 32): gemm_kquants.cpp's packedValues on two groups.
template <class T>
inline __m512i values16(const uint8_t* o0, const uint8_t* o1, int j, int s) {
    const __m512i low4 = _mm512_set1_epi8(0x0f);
    if constexpr (T::kHasMins) {
        const size_t at = T::kPQs + 32 * static_cast<size_t>(8 * (j / 2) + s);
        const __m512i v = join256(o0 + at, o1 + at);
        __m512i u = _mm512_and_si512(j % 2 ? _mm512_srli_epi16(v, 4) : v, low4);
        if constexpr (T::kFifthBits) {
            const size_t h = T::kPQh + 32 * static_cast<size_t>(s);
            u = _mm512_or_si512(u, _mm512_and_si512(bitsTo4(join256(o0 + h, o1 + h), j), _mm512_set1_epi8(0x10)));
        }
        return u;
    } else {
        const int half = j / 4, k = j % 4;
        const size_t l = T::kPQl + 32 * static_cast<size_t>(16 * half + 8 * (k % 2) + s);
        const size_t h = T::kPQh + 32 * static_cast<size_t>(8 * half + s);
        const __m512i ql = join256(o0 + l, o1 + l);
        const __m512i low = _mm512_and_si512(k < 2 ? ql : _mm512_srli_epi16(ql, 4), low4);
        return _mm512_or_si512(low, _mm512_and_si512(bitsTo4(join256(o0 + h, o1 + h), 2 * k), _mm512_set1_epi8(0x30)));
    }
}

// Lane r = (scale 2p, scale 2p + 1) of row r as int16 (Q4_K/Q5_K unsigned, Q6_K signed).
template <class T>
inline __m512i scalePairs16(const uint8_t* o0, const uint8_t* o1, int p) {
    const __m256i bytes = join128(o0 + T::kPScales + 16 * p, o1 + T::kPScales + 16 * p);
    return T::kHasMins ? _mm512_cvtepu8_epi16(bytes) : _mm512_cvtepi8_epi16(bytes);
}

// The pair operand of the min term (Q4_K/Q5_K: the mins) or of Q6_K's -32 correction (its scales).
template <class T>
inline __m512i minPairs16(const uint8_t* o0, const uint8_t* o1, int p) {
    if constexpr (T::kHasMins) return _mm512_cvtepu8_epi16(join128(o0 + T::kPMins + 16 * p, o1 + T::kPMins + 16 * p));
    else return scalePairs16<T>(o0, o1, p);
}

// Scale 2p + odd of each row as a sign-extended int32.
inline __m512i scaleWide16(__m512i pairs, int odd) {
    return odd ? _mm512_srai_epi32(pairs, 16) : _mm512_srai_epi32(_mm512_slli_epi32(pairs, 16), 16);
}

inline __m512i broadcast4(const void* p) {
    int word;
    std::memcpy(&word, p, 4);
    return _mm512_set1_epi32(word);
}

// packedBlockTerm's float term for the 16 rows of one token, lane for lane.
template <class T>
inline __m512 blockTerm16(const uint8_t* o0, const uint8_t* o1, const BlockQ8_K& a, const int16_t* pairSource,
                          __m512i isum) {
    const __m512 da = _mm512_set1_ps(a.d);
    const __m512 d = _mm512_cvtph_ps(join128(o0 + T::kPD, o1 + T::kPD));
    __m512i sums = _mm512_setzero_si512();
#pragma GCC unroll 8
    for (int p = 0; p < T::kScales / 2; ++p)
        sums = _mm512_add_epi32(sums, _mm512_madd_epi16(minPairs16<T>(o0, o1, p), broadcast4(pairSource + 2 * p)));
    if constexpr (T::kHasMins) {  // (d*da)*isum - (dmin*da)*msum
        const __m512 dmin = _mm512_cvtph_ps(join128(o0 + T::kPDmin, o1 + T::kPDmin));
        const __m512 scaled = _mm512_mul_ps(_mm512_mul_ps(d, da), _mm512_cvtepi32_ps(isum));
        const __m512 offset = _mm512_mul_ps(_mm512_mul_ps(dmin, da), _mm512_cvtepi32_ps(sums));
        return _mm512_sub_ps(scaled, offset);
    } else {  // u = value + 32: isum - 32·Σ scale·bsum, then (d*da)*isum
        const __m512i exact = _mm512_sub_epi32(isum, _mm512_slli_epi32(sums, 5));
        return _mm512_mul_ps(_mm512_mul_ps(d, da), _mm512_cvtepi32_ps(exact));
    }
}

// NT tokens from token0 against groups row0 / 8 and row0 / 8 + 1 (or the first alone, twice,
// when it is the range's last): y rows [row0, min(rowEnd, row0 + 16)).
template <class T, int NT>
void packedTileK16(const MatmulArgs& m, const ActInfoK* info, int64_t row0, int64_t rowEnd, int64_t token0,
                   int64_t nBlocks) {
    const auto* base = static_cast<const uint8_t*>(m.packed);
    const size_t groupBytes = static_cast<size_t>(nBlocks) * T::kPackedBytes;
    const uint8_t* p0 = base + static_cast<size_t>(row0 / kPanelRows) * groupBytes;
    const uint8_t* p1 = rowEnd - row0 > kPanelRows ? p0 + groupBytes : p0;
    // The next tile's two groups follow this tile's: near the end the prefetches run on into them.
    const uint8_t* next = p0 + 2 * groupBytes;
    const BlockQ8_K* a[NT];
    const ActInfoK* inf[NT];
    for (int t = 0; t < NT; ++t) {
        a[t] = reinterpret_cast<const BlockQ8_K*>(static_cast<const uint8_t*>(m.acts) +
                                                  static_cast<size_t>(token0 + t) * m.actRowBytes);
        inf[t] = T::kHasMins ? info + (token0 + t) * nBlocks : nullptr;
    }
    __m512 acc[NT];
    for (int t = 0; t < NT; ++t) acc[t] = _mm512_setzero_ps();
    for (int64_t b = 0; b < nBlocks; ++b) {
        const uint8_t* o0 = p0 + static_cast<size_t>(b) * T::kPackedBytes;
        const uint8_t* o1 = p1 + static_cast<size_t>(b) * T::kPackedBytes;
        const auto f = static_cast<size_t>(b) + kAheadSuperBlocks<T>;
        const auto nb = static_cast<size_t>(nBlocks);
        const uint8_t* far0 = f < nb ? p0 + f * T::kPackedBytes : next + (f - nb) * T::kPackedBytes;
        const uint8_t* far1 = f < nb ? p1 + f * T::kPackedBytes : next + f * T::kPackedBytes;
        __m512i isum[NT];
        for (int t = 0; t < NT; ++t) isum[t] = _mm512_setzero_si512();
#pragma GCC unroll 16
        for (int g = 0; g < T::kScales; ++g) {
            prefetchShare<T>(far0, g);
            prefetchShare<T>(far1, g);
            __m512i even[NT], odd[NT];
            for (int t = 0; t < NT; ++t) even[t] = odd[t] = _mm512_setzero_si512();
#pragma GCC unroll 8
            for (int k = 0; k < T::kStepsPerScale; ++k) {
                const int s = g * T::kStepsPerScale + k;
                const __m512i w = values16<T>(o0, o1, s / 8, s % 8);
#pragma GCC unroll 4
                for (int t = 0; t < NT; ++t) {
                    __m512i& chain = k % 2 == 0 ? even[t] : odd[t];
                    chain = _mm512_dpbusd_epi32(chain, w, broadcast4(a[t][b].qs + 4 * s));
                }
            }
            const __m512i scale = scaleWide16(scalePairs16<T>(o0, o1, g / 2), g % 2);
#pragma GCC unroll 4
            for (int t = 0; t < NT; ++t)
                isum[t] = _mm512_add_epi32(isum[t], _mm512_mullo_epi32(_mm512_add_epi32(even[t], odd[t]), scale));
        }
        for (int t = 0; t < NT; ++t) {
            const int16_t* pairSource = T::kHasMins ? inf[t][b].pairSums : a[t][b].bsums;
            acc[t] = _mm512_add_ps(acc[t], blockTerm16<T>(o0, o1, a[t][b], pairSource, isum[t]));
        }
    }
    const int64_t n = std::min<int64_t>(rowEnd - row0, 2 * kPanelRows);
    for (int t = 0; t < NT; ++t) {
        float* y = m.y + (token0 + t) * m.yStride + row0;
        if (n == 2 * kPanelRows) {
            _mm512_storeu_ps(y, acc[t]);
        } else {
            alignas(64) float lanes[16];
            _mm512_store_ps(lanes, acc[t]);
            for (int64_t r = 0; r < n; ++r) y[r] = lanes[r];
        }
    }
}

// Rows [rowBegin, rowEnd) (rowBegin a multiple of 8), 16 at a time, the tokens 4 at a time
// (the last 1 to 3 together), as gemm_kquants.cpp's packedRowsK.
template <class T>
void packedRowsK16(const MatmulArgs& m, const ActInfoK* info, int64_t rowBegin, int64_t rowEnd) {
    const int64_t nBlocks = m.nCols / kQKK;
    for (int64_t row0 = rowBegin; row0 < rowEnd; row0 += 2 * kPanelRows) {
        for (int64_t t = 0; t < m.nTokens;) {
            const int64_t n = m.nTokens - t;
            if (n >= 4) packedTileK16<T, 4>(m, info, row0, rowEnd, t, nBlocks), t += 4;
            else if (n == 3) packedTileK16<T, 3>(m, info, row0, rowEnd, t, nBlocks), t += 3;
            else if (n == 2) packedTileK16<T, 2>(m, info, row0, rowEnd, t, nBlocks), t += 2;
            else packedTileK16<T, 1>(m, info, row0, rowEnd, t, nBlocks), t += 1;
        }
    }
}

}  // namespace

bool packedRowsKAvx512VnniHandles(DType w) { return w == DType::Q4_K || w == DType::Q5_K || w == DType::Q6_K; }

void gemmPackedRowsKAvx512Vnni(const MatmulArgs& m, const void* actInfo, int64_t rowBegin, int64_t rowEnd) {
    const auto* info = static_cast<const ActInfoK*>(actInfo);
    switch (m.wType) {
    case DType::Q4_K: return packedRowsK16<TQ4_K>(m, info, rowBegin, rowEnd);
    case DType::Q5_K: return packedRowsK16<TQ5_K>(m, info, rowBegin, rowEnd);
    case DType::Q6_K: return packedRowsK16<TQ6_K>(m, info, rowBegin, rowEnd);
    default: return;
    }
}

}  // namespace hearth::avx2
