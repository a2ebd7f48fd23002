# engine/engine.h: the facade's prefix cache and step API (tiny random Llama), the resource
# limits on what a GGUF may ask for, and batch invariance of the AVX2 path through a whole model.
hearth_add_test(NAME test_engine_prefix_cache LABELS unit LIBS hearth_engine SOURCES test_engine_prefix_cache.cpp)
hearth_add_test(NAME test_engine_step LABELS unit LIBS hearth_engine SOURCES test_engine_step.cpp)
hearth_add_test(NAME test_resource_limits LABELS unit LIBS hearth_engine SOURCES test_resource_limits.cpp)
hearth_add_test(NAME test_avx2_batch_invariance LABELS unit tiny CPU_LEVELS LIBS hearth_engine SOURCES test_avx2_batch_invariance.cpp)
# Invariance deep into a conversation: 8,000 prompt tokens and 32 decoded, alone and batched, on
# 1, 2 and 3 threads (label long: the release tree only, about a minute; not under ASan).
hearth_add_test(NAME test_long_invariance LABELS long LIBS hearth_engine SOURCES test_long_invariance.cpp TIMEOUT 900)
# KV pools per attention group on a tiny Gemma 3 (window 32) decoding past several windows:
# logits bitwise equal to the all-positions layout, blocks freed as the window slides, save and
# restore exact, batch invariance.
hearth_add_test(NAME test_engine_kv_groups LABELS unit tiny LIBS hearth_engine SOURCES test_engine_kv_groups.cpp)
