# app/cli: hearth-cli's contract and its handling of hostile files, sampling options, stop and
# timeout options and the batch command, --kv-type / --beams / bench-kv, --spec, synth and bench.
hearth_add_test(NAME test_cli LABELS unit LIBS hearth_engine Qt6::Core SOURCES test_cli.cpp)
hearth_add_test(NAME test_cli_sampling LABELS unit LIBS Qt6::Core hearth_engine SOURCES test_cli_sampling.cpp)
hearth_add_test(NAME test_cli_batch LABELS unit LIBS Qt6::Core hearth_engine SOURCES test_cli_batch.cpp)
hearth_add_test(NAME test_kv_cli LABELS unit LIBS Qt6::Core hearth_engine SOURCES test_kv_cli.cpp)
hearth_add_test(NAME test_cli_spec LABELS tiny LIBS Qt6::Core hearth_engine SOURCES test_cli_spec.cpp)
hearth_add_test(NAME test_bench_cli LABELS unit tiny LIBS hearth_engine Qt6::Core SOURCES test_bench_cli.cpp TIMEOUT 300)
# hearth-cli chat driven through a pipe with SmolLM2: /help and the other commands, the token
# limit and /more, tokens/s, the window's database by default, --no-db, Ctrl-C (SIGINT).
hearth_add_test(NAME test_cli_chat LABELS model LIBS hearth_app SOURCES test_cli_chat.cpp TIMEOUT 600)
