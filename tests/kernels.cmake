# Tests of the kernels area (hearth_add_test calls).
