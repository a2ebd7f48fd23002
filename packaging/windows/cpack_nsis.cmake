# The Windows installers (CPack NSIS), both for x86-64 (NSIS's amd64-unicode stubs; CPack's
# default would be a 32-bit installer) installing into the 64-bit Program Files:
# - the full one (a build with the `hearth` target) — UNVERIFIED: no Windows build of Qt exists
#   on the Linux machines this project is built on, so neither this installer nor
#   .github/workflows/windows.yml has been run. What it is meant to do: install bin/hearth.exe and
#   bin/hearth-cli.exe with the Qt DLLs and plugins (windeployqt) and every other DLL they load
#   (deploy.cmake.in), into a folder the user chooses (NSIS's directory page), with a Start-menu
#   shortcut and an uninstaller. Its script is compiled on stub executables (nsis-check/).
# - hearth-cli.exe alone (the Qt-free mingw-w64 build, HEARTH_ENGINE_ONLY): built, installed
#   silently, run and uninstalled under Wine by the test command (test-stages.d/40-mingw.sh,
#   45-wine.sh).
set(CPACK_GENERATOR NSIS)
# CPack has no option for the installer's architecture: its own NSIS script template, with
# "Target amd64-unicode" as the script's first command, generated into the build tree (CPack
# looks for NSIS.template.in on CMAKE_MODULE_PATH first).
file(READ "${CMAKE_ROOT}/Modules/Internal/CPack/NSIS.template.in" _hearth_nsis_template)
string(FIND "${_hearth_nsis_template}" "\n" _hearth_first_line_end)
math(EXPR _hearth_rest "${_hearth_first_line_end} + 1")
string(SUBSTRING "${_hearth_nsis_template}" 0 ${_hearth_rest} _hearth_head)
string(SUBSTRING "${_hearth_nsis_template}" ${_hearth_rest} -1 _hearth_tail)
file(WRITE "${PROJECT_BINARY_DIR}/packaging/nsis-template/NSIS.template.in"
     "${_hearth_head}Target amd64-unicode\n${_hearth_tail}")
list(PREPEND CMAKE_MODULE_PATH "${PROJECT_BINARY_DIR}/packaging/nsis-template")
set(CPACK_NSIS_INSTALL_ROOT "$PROGRAMFILES64")
set(CPACK_NSIS_ENABLE_UNINSTALL_BEFORE_INSTALL ON)
set(CPACK_NSIS_MODIFY_PATH OFF)
set(CPACK_NSIS_MANIFEST_DPI_AWARE ON)
set(CPACK_NSIS_COMPONENT_INSTALL ON)
set(CPACK_NSIS_EXECUTABLES_DIRECTORY bin)
if(TARGET hearth)
  set(CPACK_PACKAGE_INSTALL_DIRECTORY "Hearth")
  set(CPACK_PACKAGE_INSTALL_REGISTRY_KEY "Hearth")
  set(CPACK_NSIS_PACKAGE_NAME "Hearth")
  set(CPACK_NSIS_DISPLAY_NAME "Hearth ${PROJECT_VERSION}")
  set(CPACK_PACKAGE_EXECUTABLES hearth Hearth)  # Start menu: "Hearth" -> bin\hearth.exe
  set(CPACK_NSIS_INSTALLED_ICON_NAME "bin\\\\hearth.exe")
  set(CPACK_NSIS_MUI_FINISHPAGE_RUN "hearth.exe")
  set(CPACK_NSIS_UNINSTALL_NAME "Uninstall Hearth")
else()
  # A terminal program: no shortcut, nothing to run at the end; its own name and registry key,
  # so that it never uninstalls a full Hearth.
  set(CPACK_PACKAGE_FILE_NAME "hearth-cli-${PROJECT_VERSION}-win64")
  set(CPACK_PACKAGE_INSTALL_DIRECTORY "Hearth CLI")
  set(CPACK_PACKAGE_INSTALL_REGISTRY_KEY "Hearth CLI")
  set(CPACK_NSIS_PACKAGE_NAME "Hearth CLI")
  set(CPACK_NSIS_DISPLAY_NAME "Hearth CLI ${PROJECT_VERSION}")
  set(CPACK_NSIS_INSTALLED_ICON_NAME "bin\\\\hearth-cli.exe")
  set(CPACK_NSIS_UNINSTALL_NAME "Uninstall")
  set(CPACK_COMPONENT_HEARTH_DISPLAY_NAME "hearth-cli")
  set(CPACK_COMPONENT_HEARTH_DESCRIPTION "hearth-cli.exe: generate, tokenize, info (the Qt-free build)")
endif()

# Qt's deployment tool and the folders where the other DLLs are found (the compiler's bin
# folder holds the MinGW runtime and, under MSYS2, SentencePiece and SQLite).
find_program(HEARTH_WINDEPLOYQT NAMES windeployqt windeployqt6 windeployqt-qt6
             HINTS "${QT6_INSTALL_PREFIX}/${QT6_INSTALL_BINS}" "${QT6_INSTALL_PREFIX}/bin")
if(NOT HEARTH_WINDEPLOYQT AND TARGET hearth)
  message(WARNING "Hearth: windeployqt not found: the installer will lack Qt's DLLs")
endif()
get_filename_component(_hearth_compiler_bin "${CMAKE_CXX_COMPILER}" DIRECTORY)
set(HEARTH_WINDOWS_DLL_DIRS "${_hearth_compiler_bin};${QT6_INSTALL_PREFIX}/bin" CACHE STRING
    "Folders searched for the DLLs the executables load")
set(HEARTH_DEPLOYED_EXES "$<TARGET_FILE:hearth-cli>")
if(TARGET hearth)
  string(APPEND HEARTH_DEPLOYED_EXES ";$<TARGET_FILE:hearth>")
endif()
configure_file("${CMAKE_CURRENT_LIST_DIR}/deploy.cmake.in"
               "${PROJECT_BINARY_DIR}/packaging/windows_deploy.cmake.in" @ONLY)
file(GENERATE OUTPUT "${PROJECT_BINARY_DIR}/packaging/windows_deploy.cmake"
     INPUT "${PROJECT_BINARY_DIR}/packaging/windows_deploy.cmake.in")
install(SCRIPT "${PROJECT_BINARY_DIR}/packaging/windows_deploy.cmake" COMPONENT hearth)
install(FILES "${HEARTH_REPO_ROOT}/LICENSE" DESTINATION . RENAME LICENSE.txt COMPONENT hearth)
