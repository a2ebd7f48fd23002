# kernels/cpu: the AVX2 backend against the reference (bitwise), its tiles, builds (AVX-VNNI,
# AVX-512) and thread pool, the reference quants, the attention softmax, and the CPU levels.
# CPU_LEVELS: also run at each HEARTH_CPU level by the test command (10-cpu-levels.sh).
hearth_add_test(NAME test_avx2_kernels LABELS unit CPU_LEVELS LIBS hearth_kernels SOURCES test_avx2_kernels.cpp)
hearth_add_test(NAME test_avx2_thread_pool LABELS unit LIBS hearth_kernels SOURCES test_avx2_thread_pool.cpp)
hearth_add_test(NAME test_quants LABELS unit LIBS hearth_kernels SOURCES test_quants.cpp)
# Tiling-edge parity of the prefill gemms: float types (gemm_float*), 32-element blocks
# (gemm_q32*, dot_q32*; AVX2 and AVX-VNNI builds), K-quants (gemm_kquants).
hearth_add_test(NAME test_float_gemm_tiles LABELS unit CPU_LEVELS LIBS hearth_kernels SOURCES test_float_gemm_tiles.cpp)
hearth_add_test(NAME test_q32_gemm_tiles LABELS unit CPU_LEVELS LIBS hearth_kernels SOURCES test_q32_gemm_tiles.cpp)
hearth_add_test(NAME test_kquant_gemm_tiles LABELS unit CPU_LEVELS LIBS hearth_kernels SOURCES test_kquant_gemm_tiles.cpp)
# The GELU of GeGLU (the oracle's formula) and the AVX2 backend's row-wise operators (RMSNorm,
# RoPE with its angle tables, K/V writes) spread over its threads, against the reference.
hearth_add_test(NAME test_avx2_elementwise LABELS unit CPU_LEVELS LIBS hearth_kernels SOURCES test_avx2_elementwise.cpp)
# The attention softmax's shared exponential, and attention over a long restored context.
hearth_add_test(NAME test_softmax_exp LABELS unit CPU_LEVELS LIBS hearth_kernels
                SOURCES test_softmax_exp.cpp softmax_exp_lanes.cpp)
if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64|i.86)$")
  set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/softmax_exp_lanes.cpp PROPERTIES COMPILE_OPTIONS "-mavx2;-mfma;-ffp-contract=off")
endif()
hearth_add_test(NAME test_attention_long_context LABELS unit CPU_LEVELS LIBS hearth_kernels
                SOURCES test_attention_long_context.cpp)
# HEARTH_CPU (cpu_features.h): names, capping, the switches, detection against /proc/cpuinfo.
hearth_add_test(NAME test_cpu_levels LABELS unit CPU_LEVELS LIBS hearth_kernels SOURCES test_cpu_levels.cpp)
# No AVX2: hearth-cli under qemu-user with a CPU model without AVX2 (Debian's qemu-user).
hearth_add_test(NAME test_no_avx2_qemu LABELS model LIBS Qt6::Core SOURCES test_no_avx2_qemu.cpp TIMEOUT 900)
