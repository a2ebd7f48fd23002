# engine/util: SHA-256, and the portable file mapping the GGUF reader uses (POSIX here; the
# Win32 implementation is compiled by the mingw-w64 stage).
hearth_add_test(NAME test_sha256 LABELS unit LIBS hearth_engine SOURCES test_sha256.cpp)
hearth_add_test(NAME test_mapped_file LABELS unit LIBS hearth_engine SOURCES test_mapped_file.cpp)
