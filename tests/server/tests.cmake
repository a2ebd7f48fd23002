# tests/server: the local server. test_server_api (no model): request parsing, reply shapes,
# the admission gate. test_server: hearth-cli serve against the openai Python client.
hearth_add_test(NAME test_server_api LABELS unit server LIBS hearth_app SOURCES test_server_api.cpp)
hearth_add_test(NAME test_server LABELS model server LIBS Qt6::Core PkgConfig::HTTPLIB SOURCES test_server.cpp TIMEOUT 240)
