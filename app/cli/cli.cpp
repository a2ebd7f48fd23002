// hearth-cli's dispatcher: the table of commands, the usage text built from it, --version.
// Each command parses its own options, loads the model through the engine facade and
// prints; errors become one line on stderr and exit code 1 (2 for usage). generate, tokenize
// and info are the Qt-free core's (app/cli_core/core_commands.h: the Windows build runs the
// same code); the others need Qt, the conversation store or the server (the full build).
#include "app/cli/cli.h"

#include <string>
#include <vector>

#include "app/cli/cli_commands.h"
#include "app/cli/cli_common.h"
#include "app/cli/cli_store.h"
#include "app/cli_core/core_commands.h"

namespace hearth {
namespace {

// One line of the table: a command of the core or one of the full build.
struct Entry {
    const char* name;
    const char* usage;
    const cli::core::CoreCommand* core;  // null: full
    cli::Command full;
};

std::vector<Entry> commands(const std::vector<cli::core::CoreCommand>& core) {
    const auto coreNamed = [&](const char* name) -> Entry {
        for (const cli::core::CoreCommand& c : core)
            if (std::string(c.name) == name) return {c.name, c.usage, &c, {}};
        return {name, "", nullptr, {}};  // not reached: every name below is a core command
    };
    const auto full = [](cli::Command c) -> Entry { return {c.name, c.usage, nullptr, c}; };
    return {coreNamed("generate"),
            full(cli::batchCommand()),
            coreNamed("tokenize"),
            full(cli::chatCommand()),
            coreNamed("info"),
            full(cli::synthCommand()),
            full(cli::benchCommand()),
            full(cli::conversationsCommand()),
            full(cli::benchRestoreCommand()),
            full(cli::benchKvCommand()),
            full(cli::benchSpecCommand()),
            full(cli::benchHistoryCommand()),
            full(cli::benchBatchCommand()),
            full(cli::serveCommand())};
}

std::string usage(const std::vector<Entry>& entries) {
    std::string text = "Usage: hearth-cli COMMAND [OPTIONS]\nCommands:\n";
    for (const Entry& e : entries) text += e.usage;
    text +=
        "  generate|chat --remote URL --remote-model NAME [--api-key-env VAR] [--remote-timeout S]\n"
        "           [--prompt TEXT] [--system TEXT] [--max-tokens N] [--stop STR]... [SAMPLING]\n"
        "           (the reply runs on an OpenAI-compatible server: vLLM, SGLang, llama-server, Hearth)\n";
    text +=
        "Sampling (applied in this order): [--logit-bias ID=BIAS]... (BIAS in [-100, 100] or -inf)\n"
        "  [--repeat-penalty R] [--repeat-last-n N] [--presence-penalty P] [--frequency-penalty F]\n"
        "  [--top-k K] [--typical-p P] [--top-p P] [--min-p P] [--temp T] [--seed S]\n"
        "Options: --help, --version; hearth-cli COMMAND --help: that command's options\n";
    return text;
}

// generate --db, given the same arguments parsed by Qt (the core parsed them already with the
// same option table, so this cannot fail).
cli::core::FullBuildHooks fullBuildHooks(const QStringList& commandArgs) {
    const auto withQt = [commandArgs](int (*run)(const QCommandLineParser&)) {
        return [commandArgs, run](const cli::core::OptionView&) {
            QCommandLineParser parser;
            QString error;
            if (!cli::parseOptions(parser, QStringList{"hearth-cli"} + commandArgs, error, cli::storeOptions()))
                return cli::usageError(error);
            return run(parser);
        };
    };
    return {withQt(cli::runStoredGenerate)};
}

}  // namespace

int runCli(const QStringList& arguments) {
    const std::vector<cli::core::CoreCommand> core = cli::core::coreCommands();
    const std::vector<Entry> entries = commands(core);
    const bool commandFirst = !arguments.isEmpty() && !arguments.first().startsWith('-');
    if (arguments.isEmpty() || (!commandFirst && (arguments.contains("--help") || arguments.contains("-h")))) {
        cli::writeOut(usage(entries));
        return arguments.isEmpty() ? 2 : 0;
    }
    if (arguments.first() == "--version") {
        cli::writeOut("hearth-cli " HEARTH_VERSION "\n");
        return 0;
    }
    const QString name = arguments.first();
    // --remote: the reply runs on an OpenAI-compatible server, not on a model loaded here.
    if ((name == QLatin1String("generate") || name == QLatin1String("chat")) && arguments.contains("--remote"))
        return cli::runRemote(name, arguments.mid(1));
    for (const Entry& entry : entries) {
        if (name != QLatin1String(entry.name)) continue;
        if (entry.core != nullptr) {
            std::vector<std::string> args;
            for (const QString& a : arguments.mid(1)) args.push_back(a.toStdString());
            return cli::core::runCoreCommand(*entry.core, args, fullBuildHooks(arguments.mid(1)));
        }
        const cli::Command& command = entry.full;
        std::vector<std::string> rest;
        for (const QString& a : arguments.mid(1)) rest.push_back(a.toStdString());
        if (cli::core::asksForHelp(rest)) {
            std::vector<cli::core::OptionSpec> extra;
            if (command.extraOptions)
                for (const QCommandLineOption& o : command.extraOptions())
                    extra.push_back({o.names().first().toStdString(), o.description().toStdString(),
                                     o.valueName().toStdString(), o.defaultValues().value(0).toStdString()});
            cli::writeOut(cli::core::commandHelp(command.name, command.usage, cli::core::commonOptionSpecs(), extra));
            return 0;
        }
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
