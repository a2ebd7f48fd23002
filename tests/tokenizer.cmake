# Tests of the tokenizer area (hearth_add_test calls).
