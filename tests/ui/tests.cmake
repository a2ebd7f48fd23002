# GUI tests: widgets under the offscreen platform, real models on the engine thread.
if(HEARTH_BUILD_GUI)
  hearth_add_test(NAME test_chat_window LABELS gui LIBS hearth_ui SOURCES test_chat_window.cpp gui_app.h TIMEOUT 300)
endif()
if(HEARTH_BUILD_GUI)
  hearth_add_test(NAME test_settings_and_models LABELS gui LIBS hearth_ui SOURCES test_settings_and_models.cpp gui_app.h TIMEOUT 300)
endif()
if(HEARTH_BUILD_GUI)
  hearth_add_test(NAME test_kv_restore LABELS gui LIBS hearth_ui SOURCES test_kv_restore.cpp gui_app.h TIMEOUT 300)
endif()
if(HEARTH_BUILD_GUI)
  hearth_add_test(NAME test_message_view LABELS gui LIBS hearth_ui SOURCES test_message_view.cpp TIMEOUT 120)
endif()
if(HEARTH_BUILD_GUI)
  hearth_add_test(NAME test_engine_settings LABELS gui LIBS hearth_ui SOURCES test_engine_settings.cpp gui_app.h TIMEOUT 300)
endif()
# The responsiveness benchmark: built, not run by CTest (xvfb-run -a build-tests/gui_bench).
if(HEARTH_BUILD_GUI AND HEARTH_BUILD_TESTS)
  add_executable(gui_bench ${CMAKE_CURRENT_LIST_DIR}/bench/gui_bench.cpp)
  target_link_libraries(gui_bench PRIVATE hearth_ui Qt6::Test hearth_common)
  target_include_directories(gui_bench PRIVATE "${PROJECT_SOURCE_DIR}")
endif()
if(HEARTH_BUILD_GUI AND HEARTH_BUILD_TESTS)
  add_executable(gui_screenshots ${CMAKE_CURRENT_LIST_DIR}/bench/gui_screenshots.cpp)
  target_link_libraries(gui_screenshots PRIVATE hearth_ui Qt6::Test hearth_common)
  target_include_directories(gui_screenshots PRIVATE "${PROJECT_SOURCE_DIR}")
endif()
if(HEARTH_BUILD_GUI)
  hearth_add_test(NAME test_thinking_window LABELS gui LIBS hearth_ui SOURCES test_thinking_window.cpp gui_app.h
                  ../app/chat/thinking_model.h TIMEOUT 120)
endif()
# The model picker over the catalog: fake trees of every source, grouped, with memory verdicts.
if(HEARTH_BUILD_GUI)
  hearth_add_test(NAME test_model_picker LABELS gui LIBS hearth_ui SOURCES test_model_picker.cpp TIMEOUT 120)
endif()
if(HEARTH_BUILD_GUI)
  hearth_add_test(NAME test_window_polish LABELS gui LIBS hearth_ui SOURCES test_window_polish.cpp gui_app.h TIMEOUT 300)
endif()
# Conversations in and out through the window's actions (export, delete, import; ChatGPT, Claude).
if(HEARTH_BUILD_GUI)
  hearth_add_test(NAME test_conversation_transfer LABELS gui LIBS hearth_ui SOURCES test_conversation_transfer.cpp gui_app.h
                  TIMEOUT 180)
endif()
# Documents in a chat through the window: paperclip, drop, retrieval into the turn, cited sources.
if(HEARTH_BUILD_GUI)
  hearth_add_test(NAME test_documents_window LABELS gui;model LIBS hearth_ui SOURCES test_documents_window.cpp gui_app.h
                  TIMEOUT 300)
endif()
# The window's local server switch (GET /health on, refused off) and a chat on a remote endpoint.
if(HEARTH_BUILD_GUI)
  hearth_add_test(NAME test_local_server LABELS gui server LIBS hearth_ui SOURCES test_local_server.cpp gui_app.h TIMEOUT 300)
endif()
# Issue 27's pages: first start without a model, the welcome page of an empty chat, in both languages.
if(HEARTH_BUILD_GUI)
  hearth_add_test(NAME test_start_pages LABELS gui LIBS hearth_ui SOURCES test_start_pages.cpp gui_app.h TIMEOUT 180)
endif()
# Issue 27's plain-word errors: summaries from error codes, the technical line behind "Details…".
if(HEARTH_BUILD_GUI)
  hearth_add_test(NAME test_error_texts LABELS gui LIBS hearth_ui SOURCES test_error_texts.cpp gui_app.h TIMEOUT 120)
endif()
# Issue 27's zh_CN coverage, part one: the catalogue is complete and holds every tr() string of
# the sources (lupdate over update_translations' project, on a copy).
if(HEARTH_BUILD_GUI)
  hearth_add_test(NAME test_translation_catalogue LABELS unit SOURCES test_translation_catalogue.cpp chinese_words.h
                  TIMEOUT 120)
  target_compile_definitions(test_translation_catalogue PRIVATE
    HEARTH_LUPDATE="$<TARGET_FILE:Qt6::lupdate>"
    HEARTH_LUPDATE_PROJECT="${PROJECT_BINARY_DIR}/ui/.lupdate/hearth_ui_project.cmake")
endif()
# Issue 27's zh_CN coverage, part two: the window and its dialogs under the Chinese interface.
if(HEARTH_BUILD_GUI)
  hearth_add_test(NAME test_chinese_ui LABELS gui LIBS hearth_ui SOURCES test_chinese_ui.cpp chinese_words.h gui_app.h
                  TIMEOUT 180)
endif()
# Issue 27: replies labelled with their model when a chat has several; base models flagged.
if(HEARTH_BUILD_GUI)
  hearth_add_test(NAME test_model_labels LABELS gui;model LIBS hearth_ui SOURCES test_model_labels.cpp gui_app.h TIMEOUT 180)
endif()
# Issue 27's design pass: WCAG AA contrast of both palettes and the message view's colours, the
# chips readable at rest, the branch switcher as one control, theme icons with a fallback.
if(HEARTH_BUILD_GUI)
  hearth_add_test(NAME test_appearance LABELS gui LIBS hearth_ui SOURCES test_appearance.cpp TIMEOUT 60)
endif()
# Issue 27's sidebar: search snippets and branches, the chosen branch kept, rename in place, the menu's chat.
if(HEARTH_BUILD_GUI)
  hearth_add_test(NAME test_sidebar_polish LABELS gui LIBS hearth_ui SOURCES test_sidebar_polish.cpp gui_app.h TIMEOUT 120)
endif()
