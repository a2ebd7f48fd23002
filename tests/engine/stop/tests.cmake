# engine/stop: stop strings across token boundaries.
hearth_add_test(NAME test_stop_matcher LABELS unit LIBS hearth_engine SOURCES test_stop_matcher.cpp)
