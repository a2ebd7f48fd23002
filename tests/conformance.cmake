# The conformance suite: Hearth against the oracle (llama-cpp-python), label conformance.
hearth_add_test(NAME test_conformance_tokenizer LABELS conformance LIBS hearth_engine
                SOURCES conformance/test_conformance_tokenizer.cpp TIMEOUT 1800)
hearth_add_test(NAME test_conformance_generation LABELS conformance LIBS hearth_engine
                SOURCES conformance/test_conformance_generation.cpp TIMEOUT 3000)
# The oracle's first (uncached) runs outlast Qt Test's default 5-minute limit per function.
set_property(TEST test_conformance_tokenizer test_conformance_generation APPEND PROPERTY
             ENVIRONMENT "QTEST_FUNCTION_TIMEOUT=2700000")
