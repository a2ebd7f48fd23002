# The Windows installer (CPack NSIS) — UNVERIFIED: no Windows build of Qt exists on the Linux
# machines this project is built on, so neither the installer nor .github/workflows/windows.yml
# has been run. What it is meant to do: install bin/hearth.exe and bin/hearth-cli.exe with the
# Qt DLLs and plugins (windeployqt) and every other DLL they load (deploy.cmake.in), into a
# folder the user chooses (NSIS's directory page), with a Start-menu shortcut and an uninstaller.
set(CPACK_GENERATOR NSIS)
set(CPACK_PACKAGE_INSTALL_DIRECTORY "Hearth")
set(CPACK_PACKAGE_INSTALL_REGISTRY_KEY "Hearth")
set(CPACK_NSIS_PACKAGE_NAME "Hearth")
set(CPACK_NSIS_DISPLAY_NAME "Hearth ${PROJECT_VERSION}")
set(CPACK_PACKAGE_EXECUTABLES hearth Hearth)  # Start menu: "Hearth" -> bin\hearth.exe
set(CPACK_NSIS_EXECUTABLES_DIRECTORY bin)
set(CPACK_NSIS_INSTALLED_ICON_NAME "bin\\\\hearth.exe")
set(CPACK_NSIS_MUI_FINISHPAGE_RUN "hearth.exe")
set(CPACK_NSIS_ENABLE_UNINSTALL_BEFORE_INSTALL ON)
set(CPACK_NSIS_MODIFY_PATH OFF)
set(CPACK_NSIS_MANIFEST_DPI_AWARE ON)
set(CPACK_NSIS_UNINSTALL_NAME "Uninstall Hearth")
set(CPACK_NSIS_COMPONENT_INSTALL ON)

# Qt's deployment tool and the folders where the other DLLs are found (the compiler's bin
# folder holds the MinGW runtime and, under MSYS2, SentencePiece and SQLite).
find_program(HEARTH_WINDEPLOYQT NAMES windeployqt windeployqt6 windeployqt-qt6
             HINTS "${QT6_INSTALL_PREFIX}/${QT6_INSTALL_BINS}" "${QT6_INSTALL_PREFIX}/bin")
if(NOT HEARTH_WINDEPLOYQT)
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
