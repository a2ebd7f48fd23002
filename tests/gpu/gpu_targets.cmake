# The gpu tests and the GPU benchmark: plain executables (no Qt Test: the device machine has
# no Qt) that exit 77 (CTest's skip) without a CUDA device. Included by tests/gpu/tests.cmake (the
# normal build, engine = hearth_engine) and by the HEARTH_DEVICE_CHECK build (engine =
# hearth_engine_core: the engine without the tokenizer, so without SentencePiece).
# Executables go to <build>/bin so that the loader finds the plugin in <build>/lib/hearth.
function(hearth_add_gpu_executable name engine)
  add_executable(${name} ${ARGN})
  target_link_libraries(${name} PRIVATE ${engine} hearth_kernels hearth_common)
  target_include_directories(${name} PRIVATE "${PROJECT_SOURCE_DIR}")
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY "${CMAKE_BINARY_DIR}/bin")
endfunction()

function(hearth_add_gpu_tests engine)
  set(dir "${PROJECT_SOURCE_DIR}/tests/gpu")
  hearth_add_gpu_executable(test_cuda_ops ${engine} "${dir}/test_cuda_ops.cpp" "${dir}/test_cuda_attention.cpp")
  hearth_add_gpu_executable(test_cuda_forward ${engine} "${dir}/test_cuda_forward.cpp")
  hearth_add_gpu_executable(hearth-gpu-bench ${engine} "${dir}/gpu_bench.cpp")
  if(HEARTH_SANITIZE)  # runs none of these (CMakePresets.json's asan preset: unit and tiny tests)
    set_target_properties(test_cuda_ops test_cuda_forward hearth-gpu-bench PROPERTIES EXCLUDE_FROM_ALL ON)
  endif()
  foreach(t test_cuda_ops test_cuda_forward)
    add_test(NAME ${t} COMMAND ${t})
    set_tests_properties(${t} PROPERTIES LABELS gpu SKIP_RETURN_CODE 77 TIMEOUT 300)
  endforeach()
  # The operator checks above on the CPU: the reference behind a backend with memory of its own
  # (tests/support/device_memory_backend.h), driven through the adapter the CUDA checks use
  # (tests/support/host_operands_backend.h): every operand in that memory, bitwise results.
  hearth_add_gpu_executable(test_host_operands ${engine} "${dir}/test_cuda_ops.cpp" "${dir}/test_cuda_attention.cpp")
  target_compile_definitions(test_host_operands PRIVATE HEARTH_OPS_ON_TEST_DEVICE=1)
  add_test(NAME test_host_operands COMMAND test_host_operands)
  set_tests_properties(test_host_operands PROPERTIES LABELS unit TIMEOUT 120)
  # The kernels' block arithmetic on the CPU (nvcc-compiled host code; no device needed).
  if(HEARTH_HAVE_CUDA)
    hearth_add_gpu_executable(test_cuda_block_math ${engine} "${dir}/test_cuda_block_math.cu" "${dir}/block_math_weights.cpp")
    set_target_properties(test_cuda_block_math PROPERTIES CUDA_RUNTIME_LIBRARY Static)
    add_test(NAME test_cuda_block_math COMMAND test_cuda_block_math)
    set_tests_properties(test_cuda_block_math PROPERTIES LABELS "unit;gpu" TIMEOUT 60)
  endif()
endfunction()
