# engine/tokenizer: both tokenizers on the test models, chat formats, the piece table, and the
# byte-level BPE against the tokenizers package.
hearth_add_test(NAME test_tokenizer LABELS model tiny LIBS hearth_engine SOURCES test_tokenizer.cpp)
hearth_add_test(NAME test_chat_format LABELS unit LIBS hearth_engine SOURCES test_chat_format.cpp)
hearth_add_test(NAME test_bpe_reference LABELS model LIBS hearth_engine SOURCES test_bpe_reference.cpp)
hearth_add_test(NAME test_piece_table LABELS unit LIBS hearth_engine SOURCES test_piece_table.cpp)
