# app/models: the models already on the machine, found in fake trees of every layout (Hearth's
# and the user's folders, LM Studio, Ollama manifests and blobs, GPT4All, Jan, the Hugging Face
# cache's links, llama.cpp's cache, an unreadable folder), and the incremental catalog.
hearth_add_test(NAME test_model_sources LABELS unit LIBS hearth_app SOURCES test_model_sources.cpp TIMEOUT 120)
