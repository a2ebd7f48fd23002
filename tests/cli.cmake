# Tests of the cli area (hearth_add_test calls).
