# app/cli_core: the Qt-free hearth-cli core reads options, writes JSON and cleans text exactly as
# the Qt classes it stands in for (QCommandLineParser, QJsonDocument, QString) on the same input,
# so that the Windows build (no Qt) and the Linux build print the same; and the Windows build's
# list of full-build commands is the Linux hearth-cli's.
hearth_add_test(NAME test_cli_core LABELS unit LIBS hearth_cli_core Qt6::Core SOURCES test_cli_core.cpp TIMEOUT 120)
