# hearth-cli's contract and its handling of hostile files.
hearth_add_test(NAME test_cli LABELS unit LIBS hearth_engine Qt6::Core SOURCES unit/test_cli.cpp)
