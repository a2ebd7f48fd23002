# app/remote: the OpenAI protocol as the remote engine speaks it (no network).
hearth_add_test(NAME test_remote_protocol LABELS unit server LIBS hearth_app SOURCES test_remote_protocol.cpp TIMEOUT 60)
