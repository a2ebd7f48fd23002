# engine/kv: the block pool, the paged KV cache, Q8_0 KV (memory, AVX2 against reference,
# generation close to F16 on a tiny Llama).
hearth_add_test(NAME test_block_pool LABELS unit LIBS hearth_engine SOURCES test_block_pool.cpp)
hearth_add_test(NAME test_kv_cache LABELS unit LIBS hearth_engine SOURCES test_kv_cache.cpp)
hearth_add_test(NAME test_kv_q8 LABELS unit LIBS hearth_engine SOURCES test_kv_q8.cpp)
# Per-group pools for sliding-window models: blocks freed as the window slides, shared ones kept,
# rollback, forks and prefix reuse per group.
hearth_add_test(NAME test_kv_groups LABELS unit LIBS hearth_engine SOURCES test_kv_groups.cpp)
