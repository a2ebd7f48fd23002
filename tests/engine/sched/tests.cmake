# engine/sched: plans without a model (also built with ThreadSanitizer by the tsan preset).
hearth_add_test(NAME test_scheduler LABELS unit LIBS hearth_engine SOURCES test_scheduler.cpp)
# The step-state rule on a tiny random Llama: only the scheduler reserves and advances; a runner
# or model that does either on its own fails the step.
hearth_add_test(NAME test_step_state LABELS unit tiny LIBS hearth_engine SOURCES test_step_state.cpp)
