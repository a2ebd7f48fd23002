# engine/tokenizer: both tokenizers on the test models, chat formats and roles, reasoning spans, the piece
# table, the byte-level BPE against the tokenizers package, and every vocabulary of llama.cpp's
# own tokenizer cases (HEARTH_LLAMA_VOCAB; renamed pre-tokenizers against the oracle).
hearth_add_test(NAME test_tokenizer LABELS model tiny LIBS hearth_engine SOURCES test_tokenizer.cpp)
hearth_add_test(NAME test_chat_format LABELS unit LIBS hearth_engine SOURCES test_chat_format.cpp)
hearth_add_test(NAME test_reasoning LABELS unit LIBS hearth_engine SOURCES test_reasoning.cpp)
hearth_add_test(NAME test_chat_role LABELS unit LIBS hearth_engine SOURCES test_chat_role.cpp)
hearth_add_test(NAME test_bpe_reference LABELS model LIBS hearth_engine SOURCES test_bpe_reference.cpp)
hearth_add_test(NAME test_piece_table LABELS unit LIBS hearth_engine SOURCES test_piece_table.cpp)
hearth_add_test(NAME test_llama_vocab_files LABELS model LIBS hearth_engine SOURCES test_llama_vocab_files.cpp TIMEOUT 900)
