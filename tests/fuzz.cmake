# Hardening tests (issue #10), in the normal trees: inputs that fuzzing found (fuzz/regressions),
# the resource limits on what a GGUF may ask for, and the engine host across its thread (also
# built with ThreadSanitizer by the tsan preset). The libFuzzer targets are in fuzz/.
hearth_add_test(NAME test_resource_limits LABELS unit LIBS hearth_engine SOURCES unit/test_resource_limits.cpp)
hearth_add_test(NAME test_engine_host LABELS unit LIBS hearth_app SOURCES unit/test_engine_host.cpp TIMEOUT 300)
hearth_add_test(NAME test_gguf_regressions LABELS unit LIBS hearth_engine SOURCES unit/test_gguf_regressions.cpp)
