# tests/server: the local server. test_server_api (no model): request parsing, reply shapes,
# the admission gate. test_server: hearth-cli serve against the openai Python client.
hearth_add_test(NAME test_server_api LABELS unit server LIBS hearth_app SOURCES test_server_api.cpp)
hearth_add_test(NAME test_server LABELS model server LIBS Qt6::Core PkgConfig::HTTPLIB SOURCES test_server.cpp TIMEOUT 240)
# Remote mode: the window's controllers on hearth-cli serve (and llama-server when built), the
# keychain in a private D-Bus session (with_keyring.sh), failure paths on loopback fakes.
hearth_add_test(NAME test_remote LABELS model server LIBS hearth_app SOURCES test_remote.cpp remote_fakes.h TIMEOUT 300)
