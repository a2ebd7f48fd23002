// hearth-cli generate, tokenize and info, and the Qt-free build's dispatcher.
#include "app/cli_core/core_commands.h"

#include <algorithm>
#include <cstdio>
#include <iterator>

#include "app/cli_core/core_common.h"
#include "app/cli_core/info_text.h"
#include "app/cli_core/model_facts.h"
#include "app/cli_core/text.h"
#include "engine/model/gguf.h"
#include "engine/str_cat.h"
#include "engine/tokenizer/tokenizer.h"

namespace hearth::cli::core {
namespace {

int fullBuildOnly(const std::string& what) {
    return usageError(what +
                      " needs the full build of hearth-cli (Linux: Qt, the conversation store); this build has "
                      "generate, tokenize and info");
}

int cmdGenerate(const OptionView& p, const FullBuildHooks& hooks) {
    if (p.isSet("db")) return hooks.storedGenerate ? hooks.storedGenerate(p) : fullBuildOnly("generate --db");
    if (!p.isSet("model")) return usageError("generate needs --model");
    if (p.isSet("prompt") == p.isSet("prompt-file")) return usageError("generate needs --prompt or --prompt-file");
    GenerateRequest req;
    std::string error;
    if (!readSampling(p, req, error)) return usageError(error);  // before the model loads
    if (req.maxTokens < 0) return usageError("--max-tokens must be >= 0");
    if (p.value("beams") != "1") return runBeamGenerate(p);  // generate_beams.cpp
    if (p.isSet("spec")) return runSpecGenerate(p);  // generate_spec.cpp
    const auto tLoad = Clock::now();
    auto engine = loadEngine(p);
    if (!engine) return failWith(engine.error());
    const double loadMs = msSince(tLoad);
    Engine& e = **engine;
    req = GenerateRequest{};
    if (!readRequest(p, e, req, error)) return failWith({ErrorCode::Io, error});  // the prompt file
    const bool json = p.isSet("json");
    auto id = e.submit(req);
    if (!id) return failWith(id.error());
    Outcome o;
    while (!o.finished)
        for (const EngineEvent& ev : e.step())
            if (const std::string_view shown = record(o, ev); !json) writeOut(shown);
    if (o.error) return failWith(*o.error);
    if (json) {
        writeOut(generateJson(req, o, loadMs).compact() + "\n");
    } else {
        writeOut("\n");
        printStats(o);
    }
    return 0;
}

int cmdTokenize(const OptionView& p, const FullBuildHooks&) {
    if (!p.isSet("model") || !p.isSet("text")) return usageError("tokenize needs --model and --text");
    // The tokenizer alone, as the engine builds it, without the weights: a vocabulary-only GGUF
    // (llama.cpp's ggml-vocab-*.gguf) has no tensors, and a model's need not be loaded for this.
    auto file = GgufFile::open(p.value("model"));
    if (!file) return failWith(file.error());
    auto tokenizer = Tokenizer::fromGguf(**file);
    if (!tokenizer) return failWith(tokenizer.error());
    const Tokenizer& tok = **tokenizer;
    const std::vector<TokenId> ids = tok.encode(p.value("text"), tok.addBosByDefault() && !p.isSet("no-bos"), false);
    if (p.isSet("json")) {
        writeOut(Json(Json::Object{{"tokens", toJson(ids)}}).compact() + "\n");
        return 0;
    }
    for (TokenId id : ids) writeOut(strCat(id, "\t", validUtf8(tok.pieceText(id)), "\n"));
    return 0;
}

int cmdInfo(const OptionView& p, const FullBuildHooks&) {
    writeOut(cpuText());
    writeOut(backendsText());
    if (!p.isSet("model")) return 0;
    // The file is opened and its model and vocabulary built once: by the engine when Hearth runs
    // it; only for a file it cannot run, by inspectModelFacts, for the facts and the reason.
    auto engine = loadEngine(p, /*packWeights=*/false);  // facts only: no repacking
    if (!engine) {
        auto inspected = inspectModelFacts(p.value("model"));
        if (!inspected) return failWith(inspected.error());
        writeOut(modelFileText(*inspected));
        return failWith(engine.error());
    }
    writeOut(modelFileText(describeModelFacts((**engine).file(), &(**engine).chatFormat())));
    writeOut(modelInfoText(**engine));
    return 0;
}

std::vector<OptionSpec> generateOptions() { return storeOptionSpecs(); }

std::string coreUsage() {
    std::string text = "Usage: hearth-cli COMMAND [OPTIONS]\nCommands:\n";
    for (const CoreCommand& c : coreCommands()) text += c.usage;
    text += "Commands of the full build (Linux), not in this one: ";
    const auto& names = fullBuildCommandNames();
    for (size_t i = 0; i < names.size(); ++i) text += (i ? ", " : "") + names[i];
    text +=
        "\n  and generate --db\n"
        "Sampling (applied in this order): [--logit-bias ID=BIAS]... (BIAS in [-100, 100] or -inf)\n"
        "  [--repeat-penalty R] [--repeat-last-n N] [--presence-penalty P] [--frequency-penalty F]\n"
        "  [--top-k K] [--typical-p P] [--top-p P] [--min-p P] [--temp T] [--seed S]\n"
        "Options: --help, --version; hearth-cli COMMAND --help: that command's options\n";
    return text;
}

}  // namespace

std::vector<CoreCommand> coreCommands() {
    return {
        {"generate",
         "  generate --model PATH (--prompt TEXT | --prompt-file F) [--raw] [--system TEXT] [--no-think]\n"
         "           [--max-tokens N] [--stop STR]... [--timeout-ms N] [SAMPLING] [--json [--top-logits N]]\n"
         "           [--kv-type f16|q8_0] [--beams K [--beam-length-norm A]]  (beam search: logit bias, penalties, "
         "--stop, --timeout-ms apply; no sampling)\n"
         "           [--spec ngram|auto|draft:PATH [--spec-max N]]  (speculative decoding; same output)\n"
         "           [--db PATH --conversation ID [--no-kv-restore]]  (a stored conversation's next turn)\n",
         generateOptions, cmdGenerate},
        {"tokenize", "  tokenize --model PATH --text TEXT [--no-bos] [--json]\n", nullptr, cmdTokenize},
        {"info", "  info     [--model PATH]\n", nullptr, cmdInfo},
    };
}

const std::vector<std::string>& fullBuildCommandNames() {
    static const std::vector<std::string> names = {"batch",         "chat",          "synth",    "bench",
                                                   "conversations", "bench-restore", "bench-kv", "bench-spec",
                                                   "bench-batch",   "bench-history", "serve"};
    return names;
}

bool asksForHelp(const std::vector<std::string>& args) {
    for (const std::string& a : args) {
        if (a == "--") return false;
        if (a == "--help" || a == "-h") return true;
    }
    return false;
}

std::string commandHelp(const std::string& name, const std::string& usage, const std::vector<OptionSpec>& common,
                        const std::vector<OptionSpec>& extra) {
    static const char* const sampling[] = {"logit-bias",
                                           "repeat-penalty",
                                           "repeat-last-n",
                                           "presence-penalty",
                                           "frequency-penalty",
                                           "top-k",
                                           "typical-p",
                                           "top-p",
                                           "min-p",
                                           "temp",
                                           "seed"};
    const bool saysSampling = usage.find("SAMPLING") != std::string::npos;
    const auto named = [&](const std::string& option) {
        const std::string flag = "--" + option;
        for (size_t at = usage.find(flag); at != std::string::npos; at = usage.find(flag, at + 1)) {
            const size_t end = at + flag.size();
            const char next = end < usage.size() ? usage[end] : ' ';
            if (!((next >= 'a' && next <= 'z') || next == '-')) return true;
        }
        return saysSampling && std::find(std::begin(sampling), std::end(sampling), option) != std::end(sampling);
    };
    std::vector<const OptionSpec*> shown;
    for (const OptionSpec& o : common)
        if (named(o.name)) shown.push_back(&o);
    for (const OptionSpec& o : extra)
        if (std::none_of(shown.begin(), shown.end(), [&](const OptionSpec* s) { return s->name == o.name; }))
            shown.push_back(&o);
    std::string text = "Usage: hearth-cli " + name + " [OPTIONS]\n" + usage + "Options:\n";
    for (const OptionSpec* o : shown) {
        std::string left = "  --" + o->name + (o->valueName.empty() ? "" : " <" + o->valueName + ">");
        left += std::string(left.size() < 30 ? 30 - left.size() : 1, ' ');
        text += left + o->description + (o->defaultValue.empty() ? "" : " (default: " + o->defaultValue + ")") + "\n";
    }
    text += "  --help" + std::string(22, ' ') + "This help.\n";
    return text;
}

int runCoreCommand(const CoreCommand& command, const std::vector<std::string>& args, const FullBuildHooks& hooks) {
    if (asksForHelp(args)) {
        writeOut(commandHelp(command.name, command.usage, commonOptionSpecs(),
                             command.extraOptions ? command.extraOptions() : std::vector<OptionSpec>{}));
        return 0;
    }
    std::vector<OptionSpec> specs = commonOptionSpecs();
    if (command.extraOptions) {
        const std::vector<OptionSpec> extra = command.extraOptions();
        specs.insert(specs.end(), extra.begin(), extra.end());
    }
    ArgParser parser(std::move(specs));
    std::vector<std::string> withProgram{"hearth-cli"};
    withProgram.insert(withProgram.end(), args.begin(), args.end());
    if (!parser.parse(withProgram)) return usageError(parser.errorText());
    if (!parser.positionalArguments().empty())
        return usageError("unexpected argument: " + parser.positionalArguments().front());
    return command.run(parser, hooks);
}

int runCoreCli(const std::vector<std::string>& arguments) {
    const auto has = [&](const char* a) { return std::find(arguments.begin(), arguments.end(), a) != arguments.end(); };
    const bool commandFirst = !arguments.empty() && !arguments.front().empty() && arguments.front()[0] != '-';
    if (arguments.empty() || (!commandFirst && (has("--help") || has("-h")))) {
        writeOut(coreUsage());
        return arguments.empty() ? 2 : 0;
    }
    if (arguments.front() == "--version") {
        writeOut("hearth-cli " HEARTH_VERSION "\n");
        return 0;
    }
    const std::string& name = arguments.front();
    const std::vector<std::string> rest(arguments.begin() + 1, arguments.end());
    for (const CoreCommand& command : coreCommands())
        if (name == command.name) return runCoreCommand(command, rest, FullBuildHooks{});
    const auto& full = fullBuildCommandNames();
    if (std::find(full.begin(), full.end(), name) != full.end()) return fullBuildOnly("'" + name + "'");
    return usageError("unknown command: " + name);
}

}  // namespace hearth::cli::core
