// The AVX-512 VNNI build of the repacked K-quant decode tiles (gemm_kquants_avx512vnni.cpp):
// gemmPackedRowsK's contract and bitwise its results, 16 rows per ZMM register, for Q4_K, Q5_K
// and Q6_K. Call only when cpuFeatures().canRunAvx512Vnni(); gemmPackedRowsK calls it when
// args.avx512Vnni. Plain C++.
#pragma once

#include <cstdint>

#include "kernels/cpu/avx2/kernels.h"

namespace hearth::avx2 {

// The types it has a build for: Q4_K, Q5_K, Q6_K.
bool packedRowsKAvx512VnniHandles(DType w);
void gemmPackedRowsKAvx512Vnni(const MatmulArgs& args, const void* actInfo, int64_t rowBegin, int64_t rowEnd);

}  // namespace hearth::avx2
