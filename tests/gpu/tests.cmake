# The CUDA backend's tests. gpu: parity with the CPU reference (skip without a device; on the
# lent GPU they run through tests/gpu/run-device-checks.sh). unit: the hidden-library fallback.
include(${PROJECT_SOURCE_DIR}/tests/gpu/gpu_targets.cmake)
hearth_add_gpu_tests(hearth_engine)

# Hides the CUDA libraries in a private mount namespace and checks that `hearth-cli info`
# says why CUDA is unavailable and that `generate` runs on the CPU (skips where unshare or
# mount is not permitted, and in builds without the plugin).
add_test(NAME test_cuda_fallback
         COMMAND bash "${PROJECT_SOURCE_DIR}/tests/gpu/test_cuda_fallback.sh" "$<TARGET_FILE:hearth-cli>")
set_tests_properties(test_cuda_fallback PROPERTIES LABELS unit SKIP_RETURN_CODE 77 TIMEOUT 120)
