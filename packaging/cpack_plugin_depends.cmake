# Run by cpack (CPACK_PROJECT_CONFIG_FILE) before each generator: adds the Qt plugin packages
# that shlibdeps and rpm's ELF scan cannot see, judged from what the built binaries link —
# the xcb platform plugin for the GUI (libQt6Gui), the SQLite driver for Qt SQL (libQt6Sql), Qt's
# translations, the icon theme and the SVG icon engine for the widgets (libQt6Widgets) -
# and poppler-utils, whose pdftotext reads attached PDFs.
find_program(_hearth_readelf readelf)
if(NOT _hearth_readelf)
  message(FATAL_ERROR "Hearth packaging: readelf (binutils) is needed to read the binaries' NEEDED entries")
endif()
set(_needed "")
foreach(bin IN LISTS HEARTH_PACKAGED_BINARIES)
  if(NOT EXISTS "${bin}")
    message(FATAL_ERROR "Hearth packaging: ${bin} is not built (build the release tree first)")
  endif()
  execute_process(COMMAND "${_hearth_readelf}" -d "${bin}" OUTPUT_VARIABLE out COMMAND_ERROR_IS_FATAL ANY)
  string(REGEX MATCHALL "Shared library: \\[[^]]+\\]" libs "${out}")
  list(APPEND _needed ${libs})
endforeach()
set(_deb "")
set(_rpm "")
if(_needed MATCHES "libQt6Gui\\.so")
  list(APPEND _deb qt6-qpa-plugins)
  list(APPEND _rpm qt6-qtbase-gui)
endif()
# Qt's own catalogues (qtbase: OK/Cancel, the file dialog) for the window's language; loaded by
# path at run time (ui/interface_language.cpp).
if(_needed MATCHES "libQt6Widgets\\.so")
  list(APPEND _deb qt6-translations-l10n)
  list(APPEND _rpm qt6-qttranslations)
  # The window's icons: the Breeze theme (light and dark) and Qt's SVG icon engine plugin.
  list(APPEND _deb breeze-icon-theme libqt6svg6)
  list(APPEND _rpm breeze-icon-theme qt6-qtsvg)
endif()
if(_needed MATCHES "libQt6Sql\\.so")
  list(APPEND _deb libqt6sql6-sqlite)  # Fedora ships the SQLite driver in qt6-qtbase itself
endif()
# pdftotext, run (not linked) for PDFs attached to a chat: invisible to shlibdeps too.
list(APPEND _deb poppler-utils)
list(APPEND _rpm poppler-utils)
string(REPLACE ";" ", " CPACK_DEBIAN_HEARTH_PACKAGE_DEPENDS "${_deb}")
string(REPLACE ";" ", " CPACK_RPM_HEARTH_PACKAGE_REQUIRES "${_rpm}")
message(STATUS "Hearth packaging (${CPACK_GENERATOR}): extra dependencies: deb '${CPACK_DEBIAN_HEARTH_PACKAGE_DEPENDS}', rpm '${CPACK_RPM_HEARTH_PACKAGE_REQUIRES}'")
