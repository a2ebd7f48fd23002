# Where tests find their data. The same rules as packaging/scripts/common.sh:
# models in ${XDG_CACHE_HOME:-$HOME/.cache}/hearth/models, the test Python in .../hearth/venv,
# the shared test data beside the repository (../shared/testdata).
if(DEFINED ENV{XDG_CACHE_HOME} AND NOT "$ENV{XDG_CACHE_HOME}" STREQUAL "")
  set(_hearth_cache "$ENV{XDG_CACHE_HOME}/hearth")
else()
  set(_hearth_cache "$ENV{HOME}/.cache/hearth")
endif()
set(HEARTH_MODELS_DIR "${_hearth_cache}/models" CACHE PATH "Folder with the fetched GGUF models")
set(HEARTH_PYTHON "${_hearth_cache}/venv/bin/python3" CACHE FILEPATH "Python with the test-only packages (gguf, tokenizers)")
get_filename_component(_hearth_testdata "${PROJECT_SOURCE_DIR}/../shared/testdata" ABSOLUTE)
set(HEARTH_TESTDATA_DIR "${_hearth_testdata}" CACHE PATH "The shared test data folder")
set(HEARTH_ORACLE_PYTHON "${_hearth_cache}/oracle-venv/bin/python3" CACHE FILEPATH "Python with the conformance oracle (llama-cpp-python)")
set(HEARTH_ORACLE_CACHE "${_hearth_cache}/oracle-results" CACHE PATH "Cached oracle answers")
set(HEARTH_LLAMA_VOCAB_DIR "${_hearth_cache}/llama-vocab/0.3.36" CACHE PATH
    "llama.cpp's vocab-only GGUF files and their .inp/.out cases (setup-oracle.sh extracts them)")
