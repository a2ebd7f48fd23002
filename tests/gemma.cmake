# Gemma 3: the 270M model against the numpy float reference (label model), and tiny random
# Gemma 3 models written by the tests themselves (label unit).
hearth_add_test(NAME test_gemma3 LABELS model LIBS hearth_engine SOURCES model/test_gemma3.cpp TIMEOUT 900)
hearth_add_test(NAME test_gemma3_forward LABELS unit LIBS hearth_engine SOURCES unit/test_gemma3_forward.cpp)
