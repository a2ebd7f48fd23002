# Tests of engine/sched (plans without a model), engine/stop, the step API (tiny random Llama)
# and hearth-cli's stop/timeout options and batch command.
hearth_add_test(NAME test_scheduler LABELS unit LIBS hearth_engine SOURCES unit/test_scheduler.cpp)
hearth_add_test(NAME test_stop_matcher LABELS unit LIBS hearth_engine SOURCES unit/test_stop_matcher.cpp)
hearth_add_test(NAME test_engine_step LABELS unit LIBS hearth_engine SOURCES unit/test_engine_step.cpp)
hearth_add_test(NAME test_cli_batch LABELS unit LIBS Qt6::Core hearth_engine SOURCES unit/test_cli_batch.cpp)
