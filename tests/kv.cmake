# Tests of engine/kv (block pool, paged KV cache), engine/sample and engine/util/sha256.
hearth_add_test(NAME test_sha256 LABELS unit LIBS hearth_engine SOURCES unit/test_sha256.cpp)
hearth_add_test(NAME test_block_pool LABELS unit LIBS hearth_engine SOURCES unit/test_block_pool.cpp)
hearth_add_test(NAME test_kv_cache LABELS unit LIBS hearth_engine SOURCES unit/test_kv_cache.cpp)
hearth_add_test(NAME test_sampler LABELS unit LIBS hearth_engine SOURCES unit/test_sampler.cpp)
hearth_add_test(NAME test_engine_prefix_cache LABELS unit LIBS hearth_engine SOURCES unit/test_engine_prefix_cache.cpp)
hearth_add_test(NAME test_cli_sampling LABELS unit LIBS Qt6::Core hearth_engine SOURCES unit/test_cli_sampling.cpp)
# Q8_0 KV: memory, kernels' parity (AVX2 vs reference), generation close to F16 (tiny Llama).
hearth_add_test(NAME test_kv_q8 LABELS unit LIBS hearth_engine SOURCES unit/test_kv_q8.cpp)
# Beam search: selection, against an exhaustive search (vocabulary of 8), shared prefix blocks.
hearth_add_test(NAME test_beam_search LABELS tiny LIBS hearth_engine SOURCES unit/test_beam_search.cpp)
# hearth-cli --kv-type, generate --beams and bench-kv on tiny random Llamas.
hearth_add_test(NAME test_kv_cli LABELS unit LIBS Qt6::Core hearth_engine SOURCES unit/test_kv_cli.cpp)
