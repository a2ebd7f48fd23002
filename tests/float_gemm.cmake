# The prefill gemm of the float weight types (kernels/cpu/avx2/gemm_float.cpp): tiling-edge
# parity test, and a micro-benchmark executable that is not a test.
hearth_add_test(NAME test_float_gemm_tiles LABELS unit LIBS hearth_kernels SOURCES unit/test_float_gemm_tiles.cpp)
add_executable(gemm_float_bench perf/gemm_float_bench.cpp)
target_link_libraries(gemm_float_bench PRIVATE hearth_kernels hearth_common)
target_include_directories(gemm_float_bench PRIVATE "${PROJECT_SOURCE_DIR}")
