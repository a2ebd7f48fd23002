// hearth-cli's dispatcher: the table of commands, the usage text built from it, --version.
// Each command parses its own options, loads the model through the engine facade and
// prints; errors become one line on stderr and exit code 1 (2 for usage).
#include "app/cli/cli.h"

#include <string>
#include <vector>

#include "app/cli/cli_commands.h"
#include "app/cli/cli_common.h"

namespace hearth {
namespace {

std::vector<cli::Command> commands() {
    return {cli::generateCommand(),     cli::batchCommand(),   cli::tokenizeCommand(),  cli::chatCommand(),
            cli::infoCommand(),         cli::synthCommand(),   cli::benchCommand(),     cli::conversationsCommand(),
            cli::benchRestoreCommand(), cli::benchKvCommand(), cli::benchSpecCommand(), cli::benchBatchCommand(),
            cli::serveCommand()};
}

std::string usage() {
    std::string text = "Usage: hearth-cli COMMAND [OPTIONS]\nCommands:\n";
    for (const cli::Command& c : commands()) text += c.usage;
    text +=
        "Sampling (applied in this order): [--logit-bias ID=BIAS]... (BIAS in [-100, 100] or -inf)\n"
        "  [--repeat-penalty R] [--repeat-last-n N] [--presence-penalty P] [--frequency-penalty F]\n"
        "  [--top-k K] [--typical-p P] [--top-p P] [--min-p P] [--temp T] [--seed S]\n"
        "Options: --help, --version\n";
    return text;
}

}  // namespace

int runCli(const QStringList& arguments) {
    if (arguments.isEmpty() || arguments.contains("--help") || arguments.contains("-h")) {
        cli::writeOut(usage());
        return arguments.isEmpty() ? 2 : 0;
    }
    if (arguments.first() == "--version") {
        cli::writeOut("hearth-cli " HEARTH_VERSION "\n");
        return 0;
    }
    const QString name = arguments.first();
    for (const cli::Command& command : commands()) {
        if (name != QLatin1String(command.name)) continue;
        QCommandLineParser parser;
        QString error;
        const QList<QCommandLineOption> extra =
            command.extraOptions ? command.extraOptions() : QList<QCommandLineOption>{};
        if (!cli::parseOptions(parser, QStringList{"hearth-cli"} + arguments.mid(1), error, extra))
            return cli::usageError(error);
        if (!parser.positionalArguments().isEmpty())
            return cli::usageError("unexpected argument: " + parser.positionalArguments().first());
        return command.run(parser);
    }
    return cli::usageError("unknown command: " + name);
}

}  // namespace hearth
