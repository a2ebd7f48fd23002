# Synthetic models (engine/model/synth.h) and hearth-cli synth / bench (issue #5's measurements).
hearth_add_test(NAME test_synth LABELS unit tiny LIBS hearth_engine Qt6::Core SOURCES bench/test_synth.cpp)
hearth_add_test(NAME test_bench_cli LABELS unit tiny LIBS hearth_engine Qt6::Core SOURCES bench/test_bench_cli.cpp TIMEOUT 300)
# Where a decode step's time goes, operator by operator (not a test): decode_profile MODEL [THREADS] [PROMPT] [STEPS].
add_executable(decode_profile perf/decode_profile.cpp)
target_link_libraries(decode_profile PRIVATE hearth_engine)
target_include_directories(decode_profile PRIVATE "${PROJECT_SOURCE_DIR}")
