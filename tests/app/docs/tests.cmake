# app/docs: documents in a chat - reading files (PDF through pdftotext), passages, the FTS5
# trigram index and BM25 retrieval, the documents a turn carries, restart, export and import.
# The PDF case writes its PDF with Qt Gui's QPdfWriter: trees without the GUI (the sanitizer
# builds) run the test without it.
if(TARGET Qt6::Gui)
  hearth_add_test(NAME test_documents LABELS unit LIBS hearth_app;Qt6::Gui SOURCES test_documents.cpp TIMEOUT 120)
  target_compile_definitions(test_documents PRIVATE HEARTH_TEST_PDF_WRITER)
else()
  hearth_add_test(NAME test_documents LABELS unit LIBS hearth_app SOURCES test_documents.cpp TIMEOUT 120)
endif()
