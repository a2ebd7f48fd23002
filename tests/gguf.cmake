# Tests of the gguf area (hearth_add_test calls).
