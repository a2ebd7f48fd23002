# app/docs: documents in a chat - reading files (PDF through pdftotext), passages, the FTS5
# trigram index and BM25 retrieval, the documents a turn carries, restart, export and import.
hearth_add_test(NAME test_documents LABELS unit LIBS hearth_app;Qt6::Gui SOURCES test_documents.cpp TIMEOUT 120)
