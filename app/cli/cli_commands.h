// The hearth-cli commands of the full build, one function per command, each defined in its own
// cli_*.cpp. A new command: a new file, a declaration here, a line in cli.cpp's table.
// generate, tokenize and info are the Qt-free core's (app/cli_core/core_commands.h).
#pragma once

#include "app/cli/cli_common.h"

namespace hearth::cli {

Command batchCommand();  // cli_generate.cpp
Command chatCommand();  // cli_chat.cpp
Command synthCommand();  // cli_synth.cpp
Command benchCommand();  // cli_bench.cpp
Command conversationsCommand();  // cli_conversations.cpp
Command benchRestoreCommand();  // cli_bench_restore.cpp
Command benchKvCommand();  // cli_bench_kv.cpp
Command benchSpecCommand();  // cli_bench_spec.cpp
Command benchHistoryCommand();  // cli_bench_history.cpp
Command benchBatchCommand();  // cli_bench_batch.cpp
Command serveCommand();  // cli_serve.cpp
// generate and chat with --remote (cli_remote.cpp): command is "generate" or "chat", args
// its arguments after the command's name.
int runRemote(const QString& command, const QStringList& args);

}  // namespace hearth::cli
