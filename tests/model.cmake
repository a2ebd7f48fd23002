# Tests of the model area (hearth_add_test calls).
