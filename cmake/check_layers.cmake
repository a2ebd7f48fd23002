# Fails the build when a lower layer includes a higher one (DESIGN.md "Layers"):
# kernels/ includes only kernels/; engine/ only engine/ and kernels/; neither includes Qt;
# app/ never includes ui/ except app/gui_main.cpp, the GUI's composition root; app/cli_core/
# (the Qt-free hearth-cli core, also built for Windows) includes neither Qt nor the rest of app/.
# Run as: cmake -DSOURCE_DIR=... -P check_layers.cmake
set(violations "")
function(check_dir dir forbidden_regex)
  file(GLOB_RECURSE files "${SOURCE_DIR}/${dir}/*.h" "${SOURCE_DIR}/${dir}/*.cpp" "${SOURCE_DIR}/${dir}/*.cu" "${SOURCE_DIR}/${dir}/*.cuh" "${SOURCE_DIR}/${dir}/*.inc")
  foreach(f ${files})
    file(RELATIVE_PATH rel "${SOURCE_DIR}" "${f}")
    if(rel STREQUAL "app/gui_main.cpp")
      continue()
    endif()
    file(STRINGS "${f}" lines REGEX "^[ \t]*#[ \t]*include")
    foreach(line ${lines})
      if(line MATCHES "${forbidden_regex}")
        set(violations "${violations}\n  ${rel}: ${line}" PARENT_SCOPE)
        set(violations "${violations}\n  ${rel}: ${line}")
      endif()
    endforeach()
  endforeach()
endfunction()

check_dir(kernels "[<\"](engine|app|ui)/|<Q[A-Za-z]*>|<Qt")
check_dir(engine "[<\"](app|ui)/|<Q[A-Za-z]*>|<Qt")
check_dir(app "[<\"]ui/")
check_dir(app/cli_core "[<\"](ui|app/(common|store|engine_host|chat|cli|server))/|<Q[A-Za-z]*>|<Qt")
if(violations)
  message(FATAL_ERROR "Layering violations (a lower layer includes a higher one or Qt):${violations}")
endif()
