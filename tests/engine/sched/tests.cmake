# engine/sched: plans without a model (also built with ThreadSanitizer by the tsan preset).
hearth_add_test(NAME test_scheduler LABELS unit LIBS hearth_engine SOURCES test_scheduler.cpp)
