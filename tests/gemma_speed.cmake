# Issue #5, Gemma 3 prefill on several threads: the GELU of GeGLU (the oracle's formula),
# and the AVX2 backend's row-wise operators (RMSNorm, RoPE with its angle tables, K/V writes),
# spread over its threads, against the reference (hearth_add_test calls).
hearth_add_test(NAME test_avx2_elementwise LABELS unit LIBS hearth_kernels SOURCES gemma/test_avx2_elementwise.cpp)
