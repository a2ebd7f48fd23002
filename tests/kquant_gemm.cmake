# The prefill gemm of the K-quants (kernels/cpu/avx2/gemm_kquants.cpp): tiling-edge parity test,
# and a micro-benchmark executable that is not a test (run it under callgrind or perf).
hearth_add_test(NAME test_kquant_gemm_tiles LABELS unit LIBS hearth_kernels SOURCES unit/test_kquant_gemm_tiles.cpp)
add_executable(gemm_kquant_bench perf/gemm_kquant_bench.cpp)
target_link_libraries(gemm_kquant_bench PRIVATE hearth_kernels hearth_common)
target_include_directories(gemm_kquant_bench PRIVATE "${PROJECT_SOURCE_DIR}")
