# app/store: the conversation store and KV persistence (engine/snapshot through it).
hearth_add_test(NAME test_store_schema LABELS unit LIBS hearth_app SOURCES test_store_schema.cpp TIMEOUT 120)
hearth_add_test(NAME test_store_kv LABELS tiny LIBS hearth_app SOURCES test_store_kv.cpp TIMEOUT 300)
hearth_add_test(NAME test_store_cli LABELS tiny LIBS hearth_app SOURCES test_store_cli.cpp TIMEOUT 300)
# 32 kills at named points and 25 at random moments of hearth-cli on a tiny model.
hearth_add_test(NAME test_store_crash LABELS tiny LIBS hearth_app SOURCES test_store_crash.cpp TIMEOUT 300)
# The same exactness on SmolLM2 (200 + 100 + 100 decoded tokens).
hearth_add_test(NAME test_store_model LABELS model LIBS hearth_app SOURCES test_store_model.cpp TIMEOUT 600)
# Fault injection: disk full (a write-budget VFS; a real tmpfs for hearth-cli where mount is
# allowed), the database made read-only or deleted while running, the WAL cut after a crash.
hearth_add_test(NAME test_store_faults LABELS tiny LIBS hearth_app
                SOURCES test_store_faults.cpp test_store_faults_vfs.cpp TIMEOUT 300)
# Conversations out and in: Hearth JSON with every branch, export -> delete -> import equal
# message for message, Markdown, malformed files, and the same through hearth-cli.
hearth_add_test(NAME test_conversation_export LABELS unit LIBS hearth_app SOURCES test_conversation_export.cpp TIMEOUT 120)
