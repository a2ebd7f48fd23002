# Flags shared by every Hearth target, in one INTERFACE target (hearth_common).
set(CMAKE_CXX_STANDARD 23)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
set(CMAKE_CXX_EXTENSIONS OFF)
set(CMAKE_EXPORT_COMPILE_COMMANDS ON)

if(NOT CMAKE_BUILD_TYPE AND NOT CMAKE_CONFIGURATION_TYPES)
  set(CMAKE_BUILD_TYPE Release CACHE STRING "Build type" FORCE)
endif()

# Every build tree goes through ccache when it is installed.
find_program(HEARTH_CCACHE ccache)
if(HEARTH_CCACHE)
  set(CMAKE_C_COMPILER_LAUNCHER "${HEARTH_CCACHE}")
  set(CMAKE_CXX_COMPILER_LAUNCHER "${HEARTH_CCACHE}")
endif()

add_library(hearth_common INTERFACE)
# Includes are rooted at the repository root: #include "engine/model/gguf.h".
target_include_directories(hearth_common INTERFACE "${PROJECT_SOURCE_DIR}")
target_compile_options(hearth_common INTERFACE -Wall -Wextra -Wno-unused-parameter)
# Warnings as errors: CI turns it on for the release tree (packaging/scripts/build.sh with
# CI=true); off by default so that a newer compiler's new warning does not stop a user's build.
option(HEARTH_WERROR "Treat C++ compiler warnings as errors" OFF)
if(HEARTH_WERROR)
  target_compile_options(hearth_common INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-Werror>)
endif()
target_compile_definitions(hearth_common INTERFACE HEARTH_VERSION="${PROJECT_VERSION}")
# Packaged code is built for baseline x86-64; fast paths are chosen at run time.
if(HEARTH_SANITIZE)
  target_compile_options(hearth_common INTERFACE -O1 -g -fno-omit-frame-pointer
                         -fsanitize=address,undefined -fno-sanitize-recover=undefined)
  target_link_options(hearth_common INTERFACE -fsanitize=address,undefined)
endif()
# ThreadSanitizer (the tsan preset: the engine host and scheduler tests). g++ or clang.
option(HEARTH_SANITIZE_THREAD "Build with ThreadSanitizer (-O1)" OFF)
if(HEARTH_SANITIZE_THREAD)
  target_compile_options(hearth_common INTERFACE -O1 -g -fno-omit-frame-pointer -fsanitize=thread)
  target_link_options(hearth_common INTERFACE -fsanitize=thread)
endif()
# libFuzzer builds (HEARTH_FUZZ, clang-19; fuzz/CMakeLists.txt): every library is instrumented
# for coverage; only the fuzz targets link libFuzzer itself (-fsanitize=fuzzer).
if(HEARTH_FUZZ)
  target_compile_options(hearth_common INTERFACE -O1 -g -fno-omit-frame-pointer
                         -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined)
  target_link_options(hearth_common INTERFACE -fsanitize=address,undefined)
endif()
