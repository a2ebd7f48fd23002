# Install rules for what the desktop needs besides the executables: the .desktop file, the
# AppStream metainfo (its release version from the project), the icon (hicolor: the SVG and
# PNGs rendered from it at build time) and the licence. All in component "hearth".
set(_hearth_res "${HEARTH_REPO_ROOT}/resources")
set(HEARTH_ICON_SIZES 16 22 24 32 48 64 128 256 512)

if(NOT WIN32)
  install(FILES "${_hearth_res}/hearth.desktop"
          DESTINATION "${CMAKE_INSTALL_DATADIR}/applications" COMPONENT hearth)
  configure_file("${_hearth_res}/io.github.hearth.Hearth.metainfo.xml"
                 "${PROJECT_BINARY_DIR}/resources/io.github.hearth.Hearth.metainfo.xml" @ONLY)
  install(FILES "${PROJECT_BINARY_DIR}/resources/io.github.hearth.Hearth.metainfo.xml"
          DESTINATION "${CMAKE_INSTALL_DATADIR}/metainfo" COMPONENT hearth)
  install(FILES "${_hearth_res}/icons/hearth.svg"
          DESTINATION "${CMAKE_INSTALL_DATADIR}/icons/hicolor/scalable/apps" COMPONENT hearth)
  install(FILES "${HEARTH_REPO_ROOT}/LICENSE" RENAME copyright
          DESTINATION "${CMAKE_INSTALL_DATADIR}/doc/hearth" COMPONENT hearth)
endif()

# ImageMagick's convert, at its Debian path: another `convert` comes first on PATH here.
find_program(HEARTH_CONVERT convert PATHS /usr/bin NO_DEFAULT_PATH)
if(NOT HEARTH_CONVERT OR WIN32)
  message(STATUS "Hearth: no /usr/bin/convert (imagemagick): packages get only the SVG icon")
  return()
endif()
set(_hearth_pngs)
foreach(size IN LISTS HEARTH_ICON_SIZES)
  set(png "${PROJECT_BINARY_DIR}/resources/icons/${size}x${size}/hearth.png")
  # The SVG is drawn on a 128-unit grid: rasterise at the target size (density), not resized.
  math(EXPR density "72 * ${size} / 128")
  add_custom_command(OUTPUT "${png}"
    COMMAND ${CMAKE_COMMAND} -E make_directory "${PROJECT_BINARY_DIR}/resources/icons/${size}x${size}"
    COMMAND "${HEARTH_CONVERT}" -background none -density ${density} "${_hearth_res}/icons/hearth.svg"
            -resize ${size}x${size}! -strip "PNG32:${png}"
    DEPENDS "${_hearth_res}/icons/hearth.svg" VERBATIM)
  list(APPEND _hearth_pngs "${png}")
  install(FILES "${png}" DESTINATION "${CMAKE_INSTALL_DATADIR}/icons/hicolor/${size}x${size}/apps"
          COMPONENT hearth)
endforeach()
add_custom_target(hearth_icons ALL DEPENDS ${_hearth_pngs})
