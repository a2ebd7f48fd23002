// gemm_q32_vnni.cpp built for EVEX vpdpbusd on YMM (vnni_encoding.h): AVX512_VNNI hosts without
// AVX-VNNI (MatmulArgs::vnniEvex).
#define HEARTH_VNNI_EVEX 1
#include "kernels/cpu/avx2/gemm_q32_vnni.cpp"  // NOLINT(bugprone-suspicious-include)
