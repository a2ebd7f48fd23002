# Speculative decoding (engine/spec), all through the engine's submit()/step() path: greedy
# exactness on tiny models (label tiny: ASan covers the rollbacks) and on SmolLM2 and Gemma 3
# (label model), the sampled distribution against the target's (chi-squared, with a negative
# control), the on/off policy, and speculating requests batched with others.
hearth_add_test(NAME test_spec_exact_tiny LABELS tiny LIBS hearth_engine SOURCES test_spec_exact_tiny.cpp)
hearth_add_test(NAME test_spec_exact_models LABELS model LIBS hearth_engine SOURCES test_spec_exact_models.cpp TIMEOUT 900)
hearth_add_test(NAME test_spec_distribution LABELS tiny LIBS hearth_engine SOURCES test_spec_distribution.cpp)
hearth_add_test(NAME test_spec_policy LABELS unit LIBS hearth_engine SOURCES test_spec_policy.cpp)
hearth_add_test(NAME test_spec_policy_model LABELS model LIBS hearth_engine SOURCES test_spec_policy_model.cpp TIMEOUT 300)
# Under load (2 shared cores, or ASan) a function can outlast Qt Test's 5-minute default.
set_property(TEST test_spec_exact_models test_spec_policy_model test_spec_distribution APPEND PROPERTY
             ENVIRONMENT "QTEST_FUNCTION_TIMEOUT=900000")
# Speculation inside submit()/step(): mixed batches, preemption, cuts inside accepted runs, cancel.
hearth_add_test(NAME test_spec_step LABELS tiny LIBS hearth_engine SOURCES test_spec_step.cpp)
# Tree speculation: the tree type, the n-gram tree, the tree verifiers, and the forward pass of a
# tree bitwise equal to its paths decoded linearly (reference, AVX2 / AVX-512, both K orders, Q8_0).
hearth_add_test(NAME test_spec_tree LABELS unit tiny CPU_LEVELS LIBS hearth_engine SOURCES test_spec_tree.cpp)
# History drafting (issue 25): the suffix index against brute force and its memory cap; greedy
# exactness of the History drafter on SmolLM2 and Gemma 3.
hearth_add_test(NAME test_suffix_index LABELS unit LIBS hearth_engine SOURCES test_suffix_index.cpp)
hearth_add_test(NAME test_spec_history LABELS model LIBS hearth_engine SOURCES test_spec_history.cpp TIMEOUT 600)
set_property(TEST test_spec_history APPEND PROPERTY ENVIRONMENT "QTEST_FUNCTION_TIMEOUT=600000")
hearth_add_test(NAME test_history_drafter LABELS unit LIBS hearth_engine SOURCES test_history_drafter.cpp)
