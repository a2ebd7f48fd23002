# Packages (CPack): the metadata every generator shares, the install rules for the desktop
# files (install_resources.cmake), and per platform the generators: .deb and .rpm
# (cpack_linux.cmake), the NSIS installer (windows/cpack_nsis.cmake, unverified).
# Components: "hearth" (the executables, desktop file, icons, metainfo) is the package
# `hearth`; "cuda" becomes the separate package `hearth-cuda` once a target installs into it
# (issue #11's plugin): install(TARGETS <plugin> LIBRARY DESTINATION lib/hearth COMPONENT cuda).
include(GNUInstallDirs)
# The repository root (LICENSE, resources/), also when packaging/windows/nsis-check includes this.
get_filename_component(HEARTH_REPO_ROOT "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)

set(CPACK_PACKAGE_NAME "hearth")
set(CPACK_PACKAGE_VENDOR "The Hearth authors")
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Local LLM chat with its own inference engine")
set(CPACK_PACKAGE_DESCRIPTION
    "Hearth is a desktop chat application that runs large language models (GGUF files) on your own computer with its own inference engine: no remote service, no llama.cpp or ggml. It runs on any x86-64 processor and chooses an AVX2 path at run time. Includes hearth-cli, a terminal interface.")
set(CPACK_RESOURCE_FILE_LICENSE "${HEARTH_REPO_ROOT}/LICENSE")
set(CPACK_PACKAGE_CONTACT "The Hearth authors <hearth@localhost>" CACHE STRING
    "Package maintainer (Debian Maintainer, RPM Packager)")
set(CPACK_STRIP_FILES ON)
set(CPACK_PACKAGE_CHECKSUM SHA256)
set(CPACK_OUTPUT_FILE_PREFIX "${PROJECT_BINARY_DIR}/packages")

set(CPACK_COMPONENT_HEARTH_DISPLAY_NAME "Hearth")
set(CPACK_COMPONENT_HEARTH_DESCRIPTION "The Hearth window, hearth-cli and desktop integration")
set(CPACK_COMPONENT_HEARTH_REQUIRED ON)
set(CPACK_COMPONENT_CUDA_DISPLAY_NAME "CUDA backend")
set(CPACK_COMPONENT_CUDA_DESCRIPTION "The CUDA plugin for NVIDIA GPUs (needs the CUDA runtime)")
set(CPACK_COMPONENT_CUDA_DEPENDS hearth)

include("${CMAKE_CURRENT_LIST_DIR}/install_resources.cmake")
if(WIN32)
  include("${CMAKE_CURRENT_LIST_DIR}/windows/cpack_nsis.cmake")
else()
  include("${CMAKE_CURRENT_LIST_DIR}/cpack_linux.cmake")
endif()
# Always one package per component, even while "hearth" is the only one (CPack would otherwise
# build a single unnamed package and ignore the per-component settings).
get_cmake_property(CPACK_COMPONENTS_ALL COMPONENTS)
list(REMOVE_ITEM CPACK_COMPONENTS_ALL Unspecified)
include(CPack)
