# app/engine_host: the engine host across its thread (also built with ThreadSanitizer by the
# tsan preset).
hearth_add_test(NAME test_engine_host LABELS unit LIBS hearth_app SOURCES test_engine_host.cpp TIMEOUT 300)
# The history index's feed from the store and from finished replies, its setting (issue 25).
hearth_add_test(NAME test_history_feed LABELS unit LIBS hearth_app SOURCES test_history_feed.cpp TIMEOUT 120)
