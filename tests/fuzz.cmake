# Hardening tests (issue #10), in the normal trees: inputs that fuzzing found (fuzz/regressions),
# the resource limits on what a GGUF may ask for, and the engine host across its thread (also
# built with ThreadSanitizer by the tsan preset). The libFuzzer targets are in fuzz/.
hearth_add_test(NAME test_resource_limits LABELS unit LIBS hearth_engine SOURCES unit/test_resource_limits.cpp)
hearth_add_test(NAME test_engine_host LABELS unit LIBS hearth_app SOURCES unit/test_engine_host.cpp TIMEOUT 300)
hearth_add_test(NAME test_gguf_regressions LABELS unit LIBS hearth_engine SOURCES unit/test_gguf_regressions.cpp)
# Store fault injection: disk full (a write-budget VFS; a real tmpfs for hearth-cli where mount
# is allowed), the database made read-only or deleted while running, the WAL cut after a crash.
hearth_add_test(NAME test_store_faults LABELS tiny LIBS hearth_app
                SOURCES store/test_store_faults.cpp store/test_store_faults_vfs.cpp TIMEOUT 300)
