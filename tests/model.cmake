# Tests of the model forward passes through hearth-cli, and of the engine's small parts.
hearth_add_test(NAME test_stories LABELS model tiny LIBS Qt6::Core SOURCES model/test_stories.cpp)
hearth_add_test(NAME test_smollm LABELS model LIBS hearth_engine SOURCES model/test_smollm.cpp TIMEOUT 900)
hearth_add_test(NAME test_backends LABELS unit gpu LIBS hearth_kernels SOURCES unit/test_backends.cpp)
hearth_add_test(NAME test_llama_forward LABELS unit LIBS hearth_engine SOURCES unit/test_llama_forward.cpp)
