# .deb and .rpm, one package per component: `hearth` (component hearth) and, once issue #11's
# plugin installs into component cuda, `hearth-cuda`, which depends on the CUDA runtime
# explicitly (CPack's shlibdeps drops CUDA libraries, TOOLCHAIN.md) and on hearth.
set(CPACK_GENERATOR DEB RPM)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_RPM_COMPONENT_INSTALL ON)
set(_hearth_pkg_version "${PROJECT_VERSION}")

# Debian: Depends from dpkg-shlibdeps, plus the Qt plugins it cannot see (added at packaging
# time by cpack_project_config.cmake, from what the built binaries link).
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_HEARTH_PACKAGE_NAME hearth)
set(CPACK_DEBIAN_HEARTH_DESCRIPTION "${CPACK_PACKAGE_DESCRIPTION}")
# A CJK font, so that the Simplified Chinese interface has glyphs (recommended, not required).
set(CPACK_DEBIAN_HEARTH_PACKAGE_RECOMMENDS "fonts-wqy-microhei")
set(CPACK_DEBIAN_CUDA_PACKAGE_NAME hearth-cuda)
set(CPACK_DEBIAN_CUDA_PACKAGE_SHLIBDEPS ON)  # libc6 etc.; the CUDA libraries it drops are named below
set(HEARTH_CUDA_DEB_DEPENDS "cuda-cudart-13-0, libcublas-13-0" CACHE STRING
    "Debian Depends of hearth-cuda: the CUDA runtime packages (NVIDIA's repository names)")
set(CPACK_DEBIAN_CUDA_PACKAGE_DEPENDS
    "hearth (= ${_hearth_pkg_version}-1), ${HEARTH_CUDA_DEB_DEPENDS}")

# RPM: Requires from rpmbuild's automatic ELF dependencies, plus the Qt plugins (Fedora names).
set(CPACK_RPM_PACKAGE_RELEASE 1)
set(CPACK_RPM_FILE_NAME RPM-DEFAULT)
set(CPACK_RPM_PACKAGE_LICENSE MIT)
set(CPACK_RPM_PACKAGE_GROUP "Applications/Productivity")
set(CPACK_RPM_HEARTH_PACKAGE_NAME hearth)
set(CPACK_RPM_HEARTH_PACKAGE_SUMMARY "${CPACK_PACKAGE_DESCRIPTION_SUMMARY}")
set(CPACK_RPM_HEARTH_PACKAGE_DESCRIPTION "${CPACK_PACKAGE_DESCRIPTION}")
set(CPACK_RPM_CUDA_PACKAGE_NAME hearth-cuda)
set(HEARTH_CUDA_RPM_REQUIRES "cuda-cudart-13-0, libcublas-13-0" CACHE STRING
    "RPM Requires of hearth-cuda: the CUDA runtime packages (NVIDIA's repository names)")
set(CPACK_RPM_CUDA_PACKAGE_REQUIRES
    "hearth = ${_hearth_pkg_version}-1, ${HEARTH_CUDA_RPM_REQUIRES}")
set(CPACK_RPM_CUDA_PACKAGE_AUTOREQ OFF)
# No /usr/lib/.build-id links, and no ownership of directories other packages own.
set(CPACK_RPM_SPEC_MORE_DEFINE "%define _build_id_links none")
set(CPACK_RPM_EXCLUDE_FROM_AUTO_FILELIST_ADDITION
    /usr/share/applications /usr/share/metainfo /usr/share/icons /usr/share/icons/hicolor)
foreach(size IN ITEMS scalable 16 22 24 32 48 64 128 256 512)
  if(size STREQUAL scalable)
    set(dir /usr/share/icons/hicolor/scalable)
  else()
    set(dir /usr/share/icons/hicolor/${size}x${size})
  endif()
  list(APPEND CPACK_RPM_EXCLUDE_FROM_AUTO_FILELIST_ADDITION "${dir}" "${dir}/apps")
endforeach()

# Decided at packaging time from the binaries' NEEDED entries (readelf -d).
set(_hearth_bins "$<TARGET_FILE:hearth-cli>")
if(TARGET hearth)
  string(APPEND _hearth_bins ";$<TARGET_FILE:hearth>")
endif()
file(GENERATE OUTPUT "${PROJECT_BINARY_DIR}/packaging/cpack_project_config.cmake"
     CONTENT "set(HEARTH_PACKAGED_BINARIES \"${_hearth_bins}\")\ninclude(\"${CMAKE_CURRENT_LIST_DIR}/cpack_plugin_depends.cmake\")\n")
set(CPACK_PROJECT_CONFIG_FILE "${PROJECT_BINARY_DIR}/packaging/cpack_project_config.cmake")
