// hearth-cli: the headless interface that tests and benchmarks build on —
// generate, tokenize, chat, info. Output contracts are in README.md ("hearth-cli").
#pragma once

#include <QStringList>

namespace hearth {

// Runs the command line (arguments without the program name). Returns the exit code.
// Results go to stdout, errors to stderr.
int runCli(const QStringList& arguments);

}  // namespace hearth
