// The AVX-512 VNNI build of the repacked 32-block decode tiles (gemm_q32_avx512vnni.cpp):
// gemmPackedRowsQ32's contract and bitwise its results, 16 rows per ZMM register. Call only
// when cpuFeatures().canRunAvx512Vnni() and with the AVX-VNNI build's activation info
// (args.avxVnni); gemmPackedRowsQ32 calls it when args.avx512Vnni and args.avxVnni. Plain C++.
#pragma once

#include <cstdint>

#include "kernels/cpu/avx2/kernels.h"

namespace hearth::avx2 {

// The types it has a build for (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0); the K-quants have theirs in
// gemm_kquants_avx512vnni.h.
bool packedRowsQ32Avx512VnniHandles(DType w);
void gemmPackedRowsQ32Avx512Vnni(const MatmulArgs& args, const void* actInfo, int64_t rowBegin, int64_t rowEnd);

}  // namespace hearth::avx2
