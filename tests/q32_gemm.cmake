# The 32-element block kernels (kernels/cpu/avx2/gemm_q32*, dot_q32*), AVX2 and AVX-VNNI builds:
# tiling-edge parity test, and a micro-benchmark executable that is not a test (run it under perf stat).
hearth_add_test(NAME test_q32_gemm_tiles LABELS unit LIBS hearth_kernels SOURCES unit/test_q32_gemm_tiles.cpp)
add_executable(gemm_q32_bench perf/gemm_q32_bench.cpp)
target_link_libraries(gemm_q32_bench PRIVATE hearth_kernels hearth_common)
target_include_directories(gemm_q32_bench PRIVATE "${PROJECT_SOURCE_DIR}")
# On an AVX-VNNI CPU the backend runs the 32-block kernels' VNNI builds (gemm_q32_vnni.h): the
# backend and whole-model parity tests (tests/avx2.cmake, declared before this file: GLOB
# order) run a second time with HEARTH_CPU=avx2 so that the AVX2 builds are checked through
# them too. Not in the sanitizer tree (~10 s there; test_q32_gemm_tiles covers both builds).
foreach(parity test_avx2_kernels test_avx2_batch_invariance)
  if(TEST ${parity} AND NOT HEARTH_SANITIZE)
    get_test_property(${parity} ENVIRONMENT parityEnv)
    get_test_property(${parity} LABELS parityLabels)
    add_test(NAME ${parity}_hearth_cpu_avx2 COMMAND ${parity})
    set_tests_properties(${parity}_hearth_cpu_avx2 PROPERTIES LABELS "${parityLabels}" TIMEOUT 600
                         ENVIRONMENT "${parityEnv};HEARTH_CPU=avx2")
  endif()
endforeach()
