// AVX2 dot products and matmul tiles of the K-quants (Q4_K, Q5_K, Q6_K) against Q8_K
// activations: exact integer super-block sums (isum, and msum for the types with mins), then
// the reference's float expression per super-block (quants.h), one value at a time or eight
// (row, token) values in the lanes of a vector. Built with -ffp-contract=off.
#include <cstring>

#include "kernels/cpu/avx2/kernels.h"
#include "kernels/cpu/avx2/kquant_unpack.h"
#include "kernels/cpu/avx2/simd.h"

namespace hearth::avx2 {
namespace {

inline __m256i loadBsums(const BlockQ8_K& a) { return load256(a.bsums); }

// msum partials: Σ_j min_j · (bsums[2j] + bsums[2j+1]) in four int32 lanes.
inline __m128i minPart(const KScales& k, const BlockQ8_K& a) {
    const __m256i bsums = loadBsums(a);
    const __m128i pairSums = _mm_hadd_epi16(_mm256_castsi256_si128(bsums), _mm256_extracti128_si256(bsums, 1));
    return _mm_madd_epi16(k.mins, pairSums);
}

// Types with mins: acc + ((d*da) * isum - (dmin*da) * msum).
template <class Block>
struct WithMins {
    using W = Block;
    static constexpr bool kHasMins = true;
    static void prepare(const Block& b, KScales& k) { unpackScalesMins(b.scales, k); }
    static __m256i chunkScale(const KScales& k, int j) { return _mm256_set1_epi16(k.scale[j]); }
    static __m256i correction(const KScales&, const BlockQ8_K&) { return _mm256_setzero_si256(); }
    static float term(const Block& w, const BlockQ8_K& a, int isum, int msum) {
        return (halfToFloat(w.d) * a.d) * static_cast<float>(isum) -
            (halfToFloat(w.dmin) * a.d) * static_cast<float>(msum);
    }
    static __m256 terms(const Block* const* w, const __m256 da, __m256i isum, __m256i msum) {
        const f16_t* d[8];
        const f16_t* dmin[8];
        for (int p = 0; p < 8; ++p) d[p] = &w[p]->d, dmin[p] = &w[p]->dmin;
        const __m256 scaled = _mm256_mul_ps(_mm256_mul_ps(gatherHalves(d), da), _mm256_cvtepi32_ps(isum));
        const __m256 offset = _mm256_mul_ps(_mm256_mul_ps(gatherHalves(dmin), da), _mm256_cvtepi32_ps(msum));
        return _mm256_sub_ps(scaled, offset);
    }
};

struct TQ4_K : WithMins<BlockQ4_K> {
    static __m256i chunk(const BlockQ4_K& b, int j) { return q4kChunk(b.qs, j); }
};

// Q5_K: as Q4_K, plus bit j of qh[l] as the fifth bit of value l of chunk j.
struct TQ5_K : WithMins<BlockQ5_K> {
    static __m256i chunk(const BlockQ5_K& b, int j) { return q5kChunk(b, j); }
};

// Q6_K values are u - 32 with u in [0, 63]: maddubs takes u, and 32·Σ scale_g·bsum_g (the
// activation sums of each 16-value group) is subtracted, which is exact integer arithmetic.
struct TQ6_K {
    using W = BlockQ6_K;
    static constexpr bool kHasMins = false;
    static void prepare(const BlockQ6_K& b, KScales& k) { unpackScalesQ6(b, k); }
    static __m256i chunk(const BlockQ6_K& b, int j) { return q6kChunk(b, j); }
    static __m256i chunkScale(const KScales& k, int j) {
        return _mm256_set_m128i(_mm_set1_epi16(k.scale[2 * j + 1]), _mm_set1_epi16(k.scale[2 * j]));
    }
    static __m256i correction(const KScales& k, const BlockQ8_K& a) {
        const __m256i scaled =
            _mm256_madd_epi16(_mm256_load_si256(reinterpret_cast<const __m256i*>(k.scale)), loadBsums(a));
        return _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(scaled, 5));
    }
    static float term(const BlockQ6_K& w, const BlockQ8_K& a, int isum, int) {
        return (halfToFloat(w.d) * a.d) * static_cast<float>(isum);
    }
    static __m256 terms(const BlockQ6_K* const* w, const __m256 da, __m256i isum, __m256i) {
        const f16_t* d[8];
        for (int p = 0; p < 8; ++p) d[p] = &w[p]->d;
        return _mm256_mul_ps(_mm256_mul_ps(gatherHalves(d), da), _mm256_cvtepi32_ps(isum));
    }
};

// Σ over a super-block of scale_j · Σ q·a as 8 int32 partials (plus the type's correction).
template <class T>
inline __m256i superBlockPart(const typename T::W& w, const KScales& k, const BlockQ8_K& a) {
    __m256i part = T::correction(k, a);
    for (int j = 0; j < kQKK / 32; ++j) {
        const __m256i prod = _mm256_maddubs_epi16(T::chunk(w, j), load256(a.qs + 32 * j));
        part = _mm256_add_epi32(part, _mm256_madd_epi16(prod, T::chunkScale(k, j)));
    }
    return part;
}

inline int hsum128(__m128i v) {
    v = _mm_add_epi32(v, _mm_shuffle_epi32(v, _MM_SHUFFLE(1, 0, 3, 2)));
    v = _mm_add_epi32(v, _mm_shuffle_epi32(v, _MM_SHUFFLE(2, 3, 0, 1)));
    return _mm_cvtsi128_si32(v);
}

template <class T>
float dotRow(const typename T::W* w, const BlockQ8_K* a, int64_t nBlocks) {
    float acc = 0.0f;
    for (int64_t i = 0; i < nBlocks; ++i) {
        KScales k;
        T::prepare(w[i], k);
        const int isum = hsumInt32(superBlockPart<T>(w[i], k, a[i]));
        const int msum = T::kHasMins ? hsum128(minPart(k, a[i])) : 0;
        acc = acc + T::term(w[i], a[i], isum, msum);
    }
    return acc;
}

// Decode tiles prefetch the rows this many tiles ahead (prefetchSlice, simd.h).
constexpr size_t kPrefetchTiles = 2;

// NR rows × NT tokens (NR·NT <= 8) in the lanes p = r·NT + t of one float accumulator.
template <class T, int NR, int NT>
void tile(const MatmulArgs& m, int64_t row0, int64_t token0, int64_t nBlocks) {
    static_assert(NR * NT <= 8);
    using W = typename T::W;
    const auto* wBase = static_cast<const uint8_t*>(m.weights) + static_cast<size_t>(row0) * m.weightRowBytes;
    const auto* aBase = static_cast<const uint8_t*>(m.acts) + static_cast<size_t>(token0) * m.actRowBytes;
    const W* wRow[NR];
    const BlockQ8_K* aRow[NT];
    for (int r = 0; r < NR; ++r) wRow[r] = reinterpret_cast<const W*>(wBase + r * m.weightRowBytes);
    for (int t = 0; t < NT; ++t) aRow[t] = reinterpret_cast<const BlockQ8_K*>(aBase + t * m.actRowBytes);
    const size_t span = NR * m.weightRowBytes, step = (span + nBlocks - 1) / nBlocks;
    __m256 acc = _mm256_setzero_ps();
    for (int64_t b = 0; b < nBlocks; ++b) {
        if constexpr (NT == 1) prefetchSlice(reinterpret_cast<uintptr_t>(wBase) + kPrefetchTiles * span, step, b);
        __m256i part[8];
        __m128i mins[8] = {};
        const W* wb[8];
        alignas(32) float da[8];
        for (int r = 0; r < NR; ++r) {
            KScales k;
            T::prepare(wRow[r][b], k);
            for (int t = 0; t < NT; ++t) {
                const int p = r * NT + t;
                part[p] = superBlockPart<T>(wRow[r][b], k, aRow[t][b]);
                if constexpr (T::kHasMins) mins[p] = minPart(k, aRow[t][b]);
                wb[p] = &wRow[r][b];
                da[p] = aRow[t][b].d;
            }
        }
        for (int p = NR * NT; p < 8; ++p) part[p] = part[0], mins[p] = mins[0], wb[p] = wb[0], da[p] = da[0];
        const __m256i msum = T::kHasMins ? hsumInt32x4x8(mins) : _mm256_setzero_si256();
        acc = _mm256_add_ps(acc, T::terms(wb, _mm256_load_ps(da), hsumInt32x8(part), msum));
    }
    alignas(32) float lanes[8];
    _mm256_store_ps(lanes, acc);
    for (int r = 0; r < NR; ++r)
        for (int t = 0; t < NT; ++t) m.y[(token0 + t) * m.yStride + row0 + r] = lanes[r * NT + t];
}

// Small batches (2 or 3 tokens): 8 rows × NT tokens. Each row's super-block is unpacked once
// (scales, then chunk by chunk) and each chunk meets the NT tokens' activations; token t's 8
// row sums are reduced together into acc[t], lane r = value (row0 + r, token t), its own
// accumulator, terms added in super-block order: bitwise dotRow.
template <class T, int NT>
void batchTile(const MatmulArgs& m, int64_t row0, int64_t nBlocks) {
    using W = typename T::W;
    const auto* wBase = static_cast<const uint8_t*>(m.weights) + static_cast<size_t>(row0) * m.weightRowBytes;
    const W* wRow[8];
    const BlockQ8_K* aRow[NT];
    for (int r = 0; r < 8; ++r) wRow[r] = reinterpret_cast<const W*>(wBase + r * m.weightRowBytes);
    for (int t = 0; t < NT; ++t)
        aRow[t] = reinterpret_cast<const BlockQ8_K*>(static_cast<const uint8_t*>(m.acts) +
                                                     static_cast<size_t>(t) * m.actRowBytes);
    const size_t span = 8 * m.weightRowBytes, step = (span + nBlocks - 1) / nBlocks;
    __m256 acc[NT];
    for (int t = 0; t < NT; ++t) acc[t] = _mm256_setzero_ps();
    for (int64_t b = 0; b < nBlocks; ++b) {
        prefetchSlice(reinterpret_cast<uintptr_t>(wBase) + kPrefetchTiles * span, step, b);
        __m256i part[NT][8];
        __m128i mins[NT][8];
        const W* wb[8];
        for (int r = 0; r < 8; ++r) {
            const W& w = wRow[r][b];
            KScales k;
            T::prepare(w, k);
            __m256i sum[NT];
            for (int t = 0; t < NT; ++t) sum[t] = T::correction(k, aRow[t][b]);
            for (int j = 0; j < kQKK / 32; ++j) {
                const __m256i chunk = T::chunk(w, j), scale = T::chunkScale(k, j);
                for (int t = 0; t < NT; ++t) {
                    const __m256i prod = _mm256_maddubs_epi16(chunk, load256(aRow[t][b].qs + 32 * j));
                    sum[t] = _mm256_add_epi32(sum[t], _mm256_madd_epi16(prod, scale));
                }
            }
            for (int t = 0; t < NT; ++t) {
                part[t][r] = sum[t];
                mins[t][r] = T::kHasMins ? minPart(k, aRow[t][b]) : _mm_setzero_si128();
            }
            wb[r] = &w;
        }
        for (int t = 0; t < NT; ++t) {
            const __m256i msum = T::kHasMins ? hsumInt32x4x8(mins[t]) : _mm256_setzero_si256();
            acc[t] = _mm256_add_ps(acc[t], T::terms(wb, _mm256_set1_ps(aRow[t][b].d), hsumInt32x8(part[t]), msum));
        }
    }
    for (int t = 0; t < NT; ++t) _mm256_storeu_ps(m.y + t * m.yStride + row0, acc[t]);
}

template <class T>
void singleValues(const MatmulArgs& m, int64_t row, int64_t nBlocks) {
    const auto* w = reinterpret_cast<const typename T::W*>(static_cast<const uint8_t*>(m.weights) +
                                                           static_cast<size_t>(row) * m.weightRowBytes);
    for (int64_t t = 0; t < m.nTokens; ++t) {
        const auto* a = reinterpret_cast<const BlockQ8_K*>(static_cast<const uint8_t*>(m.acts) +
                                                           static_cast<size_t>(t) * m.actRowBytes);
        m.y[t * m.yStride + row] = dotRow<T>(w, a, nBlocks);
    }
}

// The same tiling as the 32-element types (dot_q32_tiles.h): 8 rows for one token, 8 × all for
// 2 or 3 tokens, else (and the rows left over) 4 × 2.
template <class T>
void rows(const MatmulArgs& m, int64_t rowBegin, int64_t rowEnd) {
    const int64_t nBlocks = m.nCols / kQKK;
    int64_t r = rowBegin;
    if (m.nTokens == 1) {
        for (; r + 8 <= rowEnd; r += 8) tile<T, 8, 1>(m, r, 0, nBlocks);
    } else {
        if (m.nTokens == 2)
            for (; r + 8 <= rowEnd; r += 8) batchTile<T, 2>(m, r, nBlocks);
        else if (m.nTokens == 3)
            for (; r + 8 <= rowEnd; r += 8) batchTile<T, 3>(m, r, nBlocks);
        for (; r + 4 <= rowEnd; r += 4) {
            int64_t t = 0;
            for (; t + 2 <= m.nTokens; t += 2) tile<T, 4, 2>(m, r, t, nBlocks);
            if (t < m.nTokens) tile<T, 4, 1>(m, r, t, nBlocks);
        }
    }
    for (; r < rowEnd; ++r) singleValues<T>(m, r, nBlocks);
}

}  // namespace

void matmulRowsK(const MatmulArgs& m, int64_t rowBegin, int64_t rowEnd) {
    switch (m.wType) {
    case DType::Q4_K: return rows<TQ4_K>(m, rowBegin, rowEnd);
    case DType::Q5_K: return rows<TQ5_K>(m, rowBegin, rowEnd);
    case DType::Q6_K: return rows<TQ6_K>(m, rowBegin, rowEnd);
    default: return;
    }
}

float vecDotK(DType w, const void* weightRow, const void* actRow, int64_t n) {
    const auto* a = static_cast<const BlockQ8_K*>(actRow);
    switch (w) {
    case DType::Q4_K: return dotRow<TQ4_K>(static_cast<const BlockQ4_K*>(weightRow), a, n / kQKK);
    case DType::Q5_K: return dotRow<TQ5_K>(static_cast<const BlockQ5_K*>(weightRow), a, n / kQKK);
    case DType::Q6_K: return dotRow<TQ6_K>(static_cast<const BlockQ6_K*>(weightRow), a, n / kQKK);
    default: return 0.0f;
    }
}

}  // namespace hearth::avx2
