# The 32-element block kernels (kernels/cpu/avx2/gemm_q32*, dot_q32*), AVX2 and AVX-VNNI builds:
# tiling-edge parity test, and a micro-benchmark executable that is not a test (run it under perf stat).
hearth_add_test(NAME test_q32_gemm_tiles LABELS unit LIBS hearth_kernels SOURCES unit/test_q32_gemm_tiles.cpp)
add_executable(gemm_q32_bench perf/gemm_q32_bench.cpp)
target_link_libraries(gemm_q32_bench PRIVATE hearth_kernels hearth_common)
target_include_directories(gemm_q32_bench PRIVATE "${PROJECT_SOURCE_DIR}")
