# Tests of the gguf area (hearth_add_test calls).
# test_gguf: the reader and writer on files the test writes itself, hostile ones included.
hearth_add_test(NAME test_gguf LABELS unit LIBS hearth_engine SOURCES unit/test_gguf.cpp)

# The reader against the reference reader (Python gguf.GGUFReader) on real files: the shared
# test data (small, also run by the sanitizer build) and the fetched models.
hearth_add_test(NAME test_gguf_testdata LABELS "model;tiny" LIBS hearth_engine
                SOURCES model/test_gguf_models.cpp)
target_compile_definitions(test_gguf_testdata PRIVATE HEARTH_GGUF_MODEL_SET=1)
hearth_add_test(NAME test_gguf_models LABELS model LIBS hearth_engine
                SOURCES model/test_gguf_models.cpp)
target_compile_definitions(test_gguf_models PRIVATE HEARTH_GGUF_MODEL_SET=2)
# test_gguf_in_place: long metadata arrays left in the file (GgufArray::inPlace), hostile ones too.
hearth_add_test(NAME test_gguf_in_place LABELS unit LIBS hearth_engine SOURCES unit/test_gguf_in_place.cpp)
