# Tests of the tokenizer area (hearth_add_test calls).
hearth_add_test(NAME test_tokenizer LABELS model tiny LIBS hearth_engine SOURCES unit/test_tokenizer.cpp)
hearth_add_test(NAME test_chat_format LABELS unit LIBS hearth_engine SOURCES unit/test_chat_format.cpp)
hearth_add_test(NAME test_bpe_reference LABELS model LIBS hearth_engine SOURCES model/test_bpe_reference.cpp)
hearth_add_test(NAME test_piece_table LABELS unit LIBS hearth_engine SOURCES unit/test_piece_table.cpp)
