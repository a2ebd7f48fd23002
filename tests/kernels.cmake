# Tests of the kernels area (hearth_add_test calls).
hearth_add_test(NAME test_quants LABELS unit LIBS hearth_kernels SOURCES unit/test_quants.cpp)
# Every tensor of the test models dequantized by Hearth and by gguf-py, compared bit for bit.
hearth_add_test(NAME test_dequant_reference LABELS model LIBS hearth_kernels
                SOURCES model/test_dequant_reference.cpp TIMEOUT 300)
