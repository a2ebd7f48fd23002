# app/common: what the model picker and hearth-cli info say about a file before loading it.
hearth_add_test(NAME test_model_info LABELS unit LIBS hearth_app SOURCES test_model_info.cpp TIMEOUT 60)
# The memory verdict: MemAvailable, the engine's KV size at the chosen context, the thresholds.
hearth_add_test(NAME test_memory_fit LABELS unit LIBS hearth_app SOURCES test_memory_fit.cpp TIMEOUT 60)
# Readable model names: real files' metadata (SmolLM2, Gemma 3), file-name cleaning, synthetic files.
hearth_add_test(NAME test_model_names LABELS unit LIBS hearth_app SOURCES test_model_names.cpp TIMEOUT 60)
# The code blocks' syntax highlighter (issue 27): token classes per language, open strings and comments.
hearth_add_test(NAME test_code_highlighter LABELS unit LIBS hearth_app SOURCES test_code_highlighter.cpp TIMEOUT 60)
