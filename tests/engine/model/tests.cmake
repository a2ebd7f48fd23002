# engine/model: the GGUF reader and writer (hostile files included; inputs that fuzzing found,
# fuzz/regressions), the reader against gguf-py on real files, the Llama and Gemma 3 forward
# passes on tiny random models, one batched forward pass bitwise equal to each sequence alone
# (label tiny: ASan covers the per-item K/V views), and the synthetic models (synth.h).
hearth_add_test(NAME test_gguf LABELS unit LIBS hearth_engine SOURCES test_gguf.cpp)
hearth_add_test(NAME test_gguf_in_place LABELS unit LIBS hearth_engine SOURCES test_gguf_in_place.cpp)
hearth_add_test(NAME test_gguf_regressions LABELS unit LIBS hearth_engine SOURCES test_gguf_regressions.cpp)
# The shared test data (small, also run by the sanitizer build) and the fetched models.
hearth_add_test(NAME test_gguf_testdata LABELS "model;tiny" LIBS hearth_engine SOURCES test_gguf_models.cpp)
target_compile_definitions(test_gguf_testdata PRIVATE HEARTH_GGUF_MODEL_SET=1)
hearth_add_test(NAME test_gguf_models LABELS model LIBS hearth_engine SOURCES test_gguf_models.cpp)
target_compile_definitions(test_gguf_models PRIVATE HEARTH_GGUF_MODEL_SET=2)
hearth_add_test(NAME test_llama_forward LABELS unit CPU_LEVELS LIBS hearth_engine SOURCES test_llama_forward.cpp)
hearth_add_test(NAME test_gemma3_forward LABELS unit CPU_LEVELS LIBS hearth_engine SOURCES test_gemma3_forward.cpp)
hearth_add_test(NAME test_forward_batch LABELS tiny LIBS hearth_engine SOURCES test_forward_batch.cpp)
hearth_add_test(NAME test_synth LABELS unit tiny LIBS hearth_engine Qt6::Core SOURCES test_synth.cpp)
# Split GGUF models (gguf-split's layout, written by the test): one model, the same greedy
# tokens as the whole file, a fingerprint over every part, clear errors for bad parts.
hearth_add_test(NAME test_gguf_split LABELS unit LIBS hearth_engine Qt6::Core SOURCES test_gguf_split.cpp)
hearth_add_test(NAME test_gguf_split_models LABELS model LIBS hearth_engine Qt6::Core SOURCES test_gguf_split.cpp)
target_compile_definitions(test_gguf_split_models PRIVATE HEARTH_SPLIT_REAL_MODELS=1)
# The disk cache of packed weights (pack_cache.h) on tiny synthetic models: hits bitwise, every
# damaged file ignored and rewritten, the newest files kept, the switches.
hearth_add_test(NAME test_pack_cache LABELS unit LIBS hearth_engine Qt6::Core SOURCES test_pack_cache.cpp)
# Issue 24's transfer count without a GPU: steps on a backend with memory of its own
# (tests/support/device_memory_backend.h) upload only their inputs and download only the wanted
# logits, once each, with every operand in that memory; logits bitwise the reference's.
hearth_add_test(NAME test_device_step LABELS unit tiny LIBS hearth_engine Qt6::Core SOURCES test_device_step.cpp)
