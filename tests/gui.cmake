# Tests of the gui area (hearth_add_test calls).
