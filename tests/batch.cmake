# One forward pass over all sequences of a step (Model::forwardBatch, the Runner): batched
# logits bitwise equal to each sequence alone on tiny Llama and Gemma 3 models (label tiny:
# ASan covers the per-item K/V views).
hearth_add_test(NAME test_forward_batch LABELS tiny LIBS hearth_engine SOURCES unit/test_forward_batch.cpp)
