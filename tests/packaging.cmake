# Tests of the packaging area (hearth_add_test calls). The packages themselves are tested by the
# test command's stages (packaging/scripts/test-stages.d/40-mingw.sh, 50-package.sh).
# test_mapped_file: the portable file mapping the GGUF reader uses (POSIX here; the Win32
# implementation is compiled by the mingw-w64 stage).
hearth_add_test(NAME test_mapped_file LABELS unit LIBS hearth_engine SOURCES unit/test_mapped_file.cpp)
