# GUI tests: widgets under the offscreen platform.
if(HEARTH_BUILD_GUI)
  hearth_add_test(NAME test_main_window LABELS gui LIBS hearth_ui SOURCES gui/test_main_window.cpp)
endif()
