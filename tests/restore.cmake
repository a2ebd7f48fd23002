# Issue #6's restore path: the attention softmax's shared exponential and attention over a long
# restored context (hearth_add_test calls).
hearth_add_test(NAME test_softmax_exp LABELS unit LIBS hearth_kernels
                SOURCES restore/test_softmax_exp.cpp restore/softmax_exp_lanes.cpp)
if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64|i.86)$")
  set_source_files_properties(restore/softmax_exp_lanes.cpp PROPERTIES COMPILE_OPTIONS "-mavx2;-mfma;-ffp-contract=off")
endif()
hearth_add_test(NAME test_attention_long_context LABELS unit LIBS hearth_kernels
                SOURCES restore/test_attention_long_context.cpp)
