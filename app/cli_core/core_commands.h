// The hearth-cli commands that need no Qt and no conversation store — generate, tokenize,
// info — and the dispatcher of the Qt-free build (hearth-cli.exe for Windows). The Linux
// hearth-cli runs these same commands from its own table (app/cli/cli.cpp) and adds those of the
// full build. generate's variants that live in the full build (--db, --beams, --spec) are hooks:
// the full build fills them in; without them generate says that they need the full build.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "app/cli_core/options.h"

namespace hearth::cli::core {

// The full build's parts of the core commands; each gets the parsed options and returns the
// exit code. Empty: not in this build.
struct FullBuildHooks {
    std::function<int(const OptionView&)> storedGenerate = {};  // generate --db
};

struct CoreCommand {
    const char* name;
    const char* usage;  // its lines of the usage text
    std::vector<OptionSpec> (*extraOptions)();  // may be null
    int (*run)(const OptionView& p, const FullBuildHooks& hooks);
};

[[nodiscard]] std::vector<CoreCommand> coreCommands();
// The commands that only the full build has (Qt, the conversation store, the server).
[[nodiscard]] const std::vector<std::string>& fullBuildCommandNames();

// Parses args (without the command name; options only) for command and runs it. Usage errors
// print and return 2.
int runCoreCommand(const CoreCommand& command, const std::vector<std::string>& args, const FullBuildHooks& hooks);

// True when a command's arguments ask for its help: --help or -h before any "--".
[[nodiscard]] bool asksForHelp(const std::vector<std::string>& args);
// `hearth-cli NAME --help`: the command's usage lines, then the options it reads, each with its
// description and default — those of common that its usage names (the sampling options when it
// says SAMPLING) and all of its own (extra).
[[nodiscard]] std::string commandHelp(const std::string& name, const std::string& usage,
                                      const std::vector<OptionSpec>& common, const std::vector<OptionSpec>& extra);

// The whole command line of the Qt-free build (arguments without the program name): --help,
// --version, the core commands, and for a command of the full build a clear message (exit 2).
int runCoreCli(const std::vector<std::string>& arguments);

// generate --beams K (K > 1): beam search instead of sampling (generate_beams.cpp).
int runBeamGenerate(const OptionView& p);
// generate --spec ngram|auto|draft:PATH: speculative decoding (generate_spec.cpp).
int runSpecGenerate(const OptionView& p);

}  // namespace hearth::cli::core
