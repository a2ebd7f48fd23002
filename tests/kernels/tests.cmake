# kernels/: the backend registry (and the CUDA loader's answers), and every tensor of the test
# models dequantized by Hearth and by gguf-py, compared bit for bit.
hearth_add_test(NAME test_backends LABELS unit gpu LIBS hearth_kernels SOURCES test_backends.cpp)
hearth_add_test(NAME test_dequant_reference LABELS model LIBS hearth_kernels
                SOURCES test_dequant_reference.cpp TIMEOUT 300)
