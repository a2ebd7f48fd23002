# Whole models against references (golden tests): stories260K against llama.cpp's outputs in
# ../shared/testdata, SmolLM2, and Gemma 3 270M against the numpy float reference.
hearth_add_test(NAME test_stories LABELS model tiny CPU_LEVELS LIBS Qt6::Core SOURCES test_stories.cpp)
hearth_add_test(NAME test_smollm LABELS model CPU_LEVELS LIBS hearth_engine SOURCES test_smollm.cpp TIMEOUT 900)
hearth_add_test(NAME test_gemma3 LABELS model CPU_LEVELS LIBS hearth_engine SOURCES test_gemma3.cpp TIMEOUT 900)
hearth_add_test(NAME test_repacked_weights LABELS model LIBS hearth_engine SOURCES test_repacked_weights.cpp TIMEOUT 300)
