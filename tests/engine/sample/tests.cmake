# engine/sample: the sampler chain, and beam search (selection, against an exhaustive search over
# a vocabulary of 8, shared prefix blocks).
hearth_add_test(NAME test_sampler LABELS unit LIBS hearth_engine SOURCES test_sampler.cpp)
hearth_add_test(NAME test_beam_search LABELS tiny LIBS hearth_engine SOURCES test_beam_search.cpp)
