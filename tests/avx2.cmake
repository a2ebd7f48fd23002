# Tests of the AVX2 fast path (kernels/cpu/avx2) and the thread pool (hearth_add_test calls).
hearth_add_test(NAME test_avx2_kernels LABELS unit LIBS hearth_kernels SOURCES unit/test_avx2_kernels.cpp)
hearth_add_test(NAME test_avx2_thread_pool LABELS unit LIBS hearth_kernels SOURCES unit/test_avx2_thread_pool.cpp)
hearth_add_test(NAME test_avx2_batch_invariance LABELS unit tiny LIBS hearth_engine SOURCES unit/test_avx2_batch_invariance.cpp)
