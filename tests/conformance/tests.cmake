# The conformance suite: Hearth against the oracle (llama-cpp-python), label conformance.
# The oracle's health check runs first (a fixture every oracle test requires): one forward pass
# on each model, failing with the signal, build flags and likely cause if the oracle crashes.
hearth_add_test(NAME test_oracle_health LABELS conformance LIBS Qt6::Core
                SOURCES test_oracle_health.cpp TIMEOUT 900)
set_tests_properties(test_oracle_health PROPERTIES FIXTURES_SETUP oracle)
hearth_add_test(NAME test_conformance_tokenizer LABELS conformance LIBS hearth_engine
                SOURCES test_conformance_tokenizer.cpp TIMEOUT 1800)
hearth_add_test(NAME test_conformance_generation LABELS conformance LIBS hearth_engine
                SOURCES test_conformance_generation.cpp TIMEOUT 3000)
# The oracle's first (uncached) runs outlast Qt Test's default 5-minute limit per function.
set_property(TEST test_conformance_tokenizer test_conformance_generation APPEND PROPERTY
             ENVIRONMENT "QTEST_FUNCTION_TIMEOUT=2700000")
# Chat formats against the real templates rendered by Jinja2 (no model needed but SmolLM2's GGUF).
hearth_add_test(NAME test_conformance_chat LABELS conformance LIBS hearth_engine
                SOURCES test_conformance_chat.cpp TIMEOUT 300)
# Every weight type on a synthetic model quantized by llama.cpp.
hearth_add_test(NAME test_conformance_weight_types LABELS conformance LIBS hearth_engine
                SOURCES test_conformance_weight_types.cpp TIMEOUT 900)
# Perplexity on the real models, GPL-3 text.
hearth_add_test(NAME test_conformance_perplexity LABELS conformance LIBS hearth_engine
                SOURCES test_conformance_perplexity.cpp TIMEOUT 1800)
set_property(TEST test_conformance_weight_types test_conformance_perplexity APPEND PROPERTY
             ENVIRONMENT "QTEST_FUNCTION_TIMEOUT=1700000")
set_tests_properties(test_conformance_tokenizer test_conformance_generation
                     test_conformance_weight_types test_conformance_perplexity PROPERTIES FIXTURES_REQUIRED oracle)
# The oracle runs llama.cpp on 2 threads, which wait for each other by spinning: beside another
# test on a 2-core machine each of them ran 2-3x slower (test_conformance_generation, cold
# oracle cache: 214 s alone, 639 s under `ctest -j 2`). ctest gives them both slots.
set_tests_properties(test_conformance_generation test_conformance_weight_types test_conformance_perplexity
                     PROPERTIES PROCESSORS 2)
