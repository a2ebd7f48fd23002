# app/chat: a thinking model's turn, from the chat settings to the prompt it is rendered into.
hearth_add_test(NAME test_thinking_turn LABELS unit LIBS hearth_app SOURCES test_thinking_turn.cpp thinking_model.h TIMEOUT 120)
