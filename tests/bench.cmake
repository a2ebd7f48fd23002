# Synthetic models (engine/model/synth.h) and hearth-cli synth / bench (issue #5's measurements).
hearth_add_test(NAME test_synth LABELS unit tiny LIBS hearth_engine Qt6::Core SOURCES bench/test_synth.cpp)
hearth_add_test(NAME test_bench_cli LABELS unit tiny LIBS hearth_engine Qt6::Core SOURCES bench/test_bench_cli.cpp TIMEOUT 300)
