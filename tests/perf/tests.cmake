# Benchmarks and profilers (executables, not tests): where a decode step's time goes
# (decode_profile MODEL [THREADS] [PROMPT] [STEPS]), and the prefill gemms one by one (run them
# under perf stat or callgrind).
add_executable(decode_profile ${CMAKE_CURRENT_LIST_DIR}/decode_profile.cpp)
target_link_libraries(decode_profile PRIVATE hearth_engine)
foreach(bench gemm_float_bench gemm_q32_bench gemm_kquant_bench)
  add_executable(${bench} ${CMAKE_CURRENT_LIST_DIR}/${bench}.cpp)
  target_link_libraries(${bench} PRIVATE hearth_kernels hearth_common)
endforeach()
add_executable(attention_bench ${CMAKE_CURRENT_LIST_DIR}/attention_bench.cpp)
target_link_libraries(attention_bench PRIVATE hearth_engine)  # the KV lives in the engine's KvCache
foreach(tool decode_profile gemm_float_bench gemm_q32_bench gemm_kquant_bench attention_bench)
  target_include_directories(${tool} PRIVATE "${PROJECT_SOURCE_DIR}")
endforeach()
# The sanitizer build runs none of them: built there only when asked for by name.
if(HEARTH_SANITIZE)
  set_target_properties(decode_profile gemm_float_bench gemm_q32_bench gemm_kquant_bench attention_bench
    PROPERTIES EXCLUDE_FROM_ALL ON)
endif()
