// The AVX-VNNI builds of the 32-block kernels: the prefill gemm (gemm_q32_vnni.cpp) and the
// matrix-vector tiles (dot_q32_vnni.cpp), with the contracts and scratch sizes of their AVX2
// builds (kernels.h) and bitwise the same results. Call only when cpuFeatures().canRunAvxVnni();
// gemmActInfoQ32, gemmPanelQ32 and matmulRowsQ32 call these when args.avxVnni. The *Evex
// functions are the same sources built for EVEX (vnni_encoding.h): call them instead when
// args.vnniEvex (cpuFeatures().canRunAvx512Vnni(), no AVX-VNNI). Plain C++.
#pragma once

#include <cstdint>

#include "kernels/cpu/avx2/kernels.h"

namespace hearth::avx2 {

// Activation info for the VNNI panels only (its offsets differ from the AVX2 build's).
void gemmActInfoQ32Vnni(const MatmulArgs& args, int64_t tokenBegin, int64_t tokenEnd, void* info);
void gemmPanelQ32Vnni(const MatmulArgs& args, const void* actInfo, int64_t row0, void* scratch);
void matmulRowsQ32Vnni(const MatmulArgs& args, int64_t rowBegin, int64_t rowEnd);
void gemmPackedRowsQ32Vnni(const MatmulArgs& args, const void* actInfo, int64_t rowBegin, int64_t rowEnd);

void gemmActInfoQ32VnniEvex(const MatmulArgs& args, int64_t tokenBegin, int64_t tokenEnd, void* info);
void gemmPanelQ32VnniEvex(const MatmulArgs& args, const void* actInfo, int64_t row0, void* scratch);
void matmulRowsQ32VnniEvex(const MatmulArgs& args, int64_t rowBegin, int64_t rowEnd);
void gemmPackedRowsQ32VnniEvex(const MatmulArgs& args, const void* actInfo, int64_t rowBegin, int64_t rowEnd);

}  // namespace hearth::avx2
