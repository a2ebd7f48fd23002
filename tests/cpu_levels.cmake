# CPU kernel levels (HEARTH_CPU, kernels/cpu/cpu_features.h). The label cpu-levels marks the
# kernel parity and golden tests that the test command runs again at each level the host has
# (packaging/scripts/test-stages.d/10-cpu-levels.sh); the release run covers the best level.
hearth_add_test(NAME test_cpu_levels LABELS unit cpu-levels LIBS hearth_kernels SOURCES cpu/test_cpu_levels.cpp)
# No AVX2: hearth-cli under qemu-user with a CPU model without AVX2 (Debian's qemu-user).
hearth_add_test(NAME test_no_avx2_qemu LABELS model LIBS Qt6::Core SOURCES cpu/test_no_avx2_qemu.cpp TIMEOUT 900)
# Labelled cpu-levels in tests/CMakeLists.txt once every file has declared its tests.
set(HEARTH_CPU_LEVEL_TESTS test_avx2_kernels test_avx2_batch_invariance test_avx2_elementwise test_q32_gemm_tiles
    test_kquant_gemm_tiles test_float_gemm_tiles test_softmax_exp test_attention_long_context
    test_llama_forward test_gemma3_forward test_stories test_smollm test_gemma3)
