// hearth-cli bench-spec: output tokens/s without speculation, with the n-gram drafter (chains,
// and trees of its continuations with the policy choosing their width), the window's Default
// (auto: n-gram and history trees) and a draft model (chains, and trees branching at its
// runner-up), on four kinds of prompt (repeat/edit a passage, code completion as raw text and
// asked for in a chat, open-ended chat); greedy, so every mode produces the same tokens; runs interleaved, medians printed
// with the acceptance rate, target forward passes per output token and the speedup. Each
// speculative reply starts with a fresh policy (and draft model), as in a new engine.
#include <QDir>
#include <QFileInfo>
#include <algorithm>
#include <cstdio>
#include <map>

#include "app/cli/bench_spec_history.h"
#include "app/cli/cli_commands.h"

namespace hearth::cli {
namespace {

struct PromptKind {
    const char* name;
    bool chat;  // chat-formatted user message, else raw text to continue
    const char* text;
};

const PromptKind kKinds[] = {
    {"passage", true,
     "Repeat this passage, changing 'lighthouse keeper' to 'old sailor' and nothing else: The lighthouse keeper "
     "climbed the spiral stairs every evening at dusk. He wound the clockwork, trimmed the wick, and polished the "
     "great lens until it shone. Ships passing the rocky point saw the beam sweep across the water every ten "
     "seconds, and they knew they were safe. The lighthouse keeper never missed a night."},
    {"code", false,
     "def fibonacci(n):\n    a, b = 0, 1\n    for _ in range(n):\n        a, b = b, a + b\n    return a\n\n"
     "def factorial(n):\n    result = 1\n    for i in range(1, n + 1):\n        result = result * i\n    return "
     "result\n\n"
     "def sum_of_squares(n):\n"},
    {"chat", true, "What would you do on a rainy Sunday afternoon, and why?"},
    // Code asked for in a chat message: the raw "code" text above makes SmolLM2-135M-Instruct
    // answer in prose (a closing fence, then an explanation), so that row measures no code.
    {"codechat", true,
     "Complete this Python module: write sum_of_squares(n) and sum_of_cubes(n) in the same style as the "
     "functions above them.\n\n```python\ndef fibonacci(n):\n    a, b = 0, 1\n    for _ in range(n):\n"
     "        a, b = b, a + b\n    return a\n\ndef factorial(n):\n    result = 1\n    for i in range(1, n + 1):\n"
     "        result = result * i\n    return result\n```"},
};

struct Mode {
    const char* name;
    SpecOptions spec;
};

// The draft model branching at its runner-up (DraftModelDrafter::proposeTree).
SpecOptions draftTree(std::string path) {
    SpecOptions o = specDraftModel(std::move(path));
    o.tree = true;
    o.maxTreeNodes = 12;
    return o;
}

struct Cell {
    std::vector<double> tokensPerSecond;
    int64_t drafted = 0, accepted = 0, forwards = 0, tokens = 0;
};

double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

Result<void> runOnce(Engine& e, const std::vector<TokenId>& prompt, const Mode& mode, int32_t maxTokens, Cell& cell,
                     const std::string& dumpPath) {
    GenerateRequest req;
    req.prompt = prompt;
    req.maxTokens = maxTokens;
    req.sampling.temperature = 0.0f;
    req.spec = mode.spec;
    e.resetSpeculation();  // each reply from a fresh policy: no switch-off carried over from another prompt
    auto r = e.generate(req, [](TokenId, std::string_view) { return true; });
    if (!r) return std::unexpected(r.error());
    cell.tokensPerSecond.push_back(r->timings.decodeTokensPerSecond());
    cell.drafted += r->spec.drafted;
    cell.accepted += r->spec.accepted;
    cell.tokens += std::ssize(r->tokens);
    cell.forwards += mode.spec.drafter == SpecDrafter::Off ? std::ssize(r->tokens) : r->spec.targetForwards;
    if (!dumpPath.empty()) return writeReplyJson(dumpPath, prompt, r->tokens);
    return {};
}

void printTable(const char* model, const std::vector<Mode>& modes, const std::map<std::pair<int, int>, Cell>& cells) {
    std::printf("\n%s\n%-8s %-6s %10s %10s %12s %8s\n", model, "prompt", "mode", "tokens/s", "accept", "fwd/token",
                "speedup");
    for (int k = 0; k < static_cast<int>(std::size(kKinds)); ++k) {
        if (!cells.contains({k, 0})) continue;  // a prompt left out (--prompts)
        const double plain = median(cells.at({k, 0}).tokensPerSecond);
        for (int m = 0; m < std::ssize(modes); ++m) {
            const Cell& c = cells.at({k, m});
            const double tps = median(c.tokensPerSecond);
            char accept[16] = "-";
            if (c.drafted > 0)
                std::snprintf(accept, sizeof accept, "%.1f%%", 100.0 * double(c.accepted) / double(c.drafted));
            std::printf("%-8s %-6s %10.2f %10s %12.3f %7.2fx\n", kKinds[k].name, modes[static_cast<size_t>(m)].name,
                        tps, accept, c.tokens > 0 ? double(c.forwards) / double(c.tokens) : 0.0,
                        plain > 0 ? tps / plain : 0.0);
        }
    }
    std::fflush(stdout);
}

Result<void> benchModel(const QString& path, const QCommandLineParser& p, int runs, int32_t maxTokens, int threads,
                        int historyInstances) {
    auto options = readEngineOptions(p);
    if (!options) return std::unexpected(options.error());
    options->nThreads = threads;
    options->contextLength = 2048;
    auto engine = Engine::load(path.toStdString(), *options);
    if (!engine) return std::unexpected(engine.error());
    Engine& e = **engine;
    const std::string name = QFileInfo(path).fileName().toStdString(), dumpDir = p.value("dump").toStdString();
    std::vector<std::string> wantedModes;
    for (const QString& m : p.value("modes").split(',', Qt::SkipEmptyParts)) wantedModes.push_back(m.toStdString());
    if (historyInstances > 0) return benchSpecHistory(e, name, runs, maxTokens, historyInstances, dumpDir, wantedModes);
    const std::vector<Mode> all{{"plain", {}},
                                {"ngram", specNGram()},
                                {"tree", specNGramTree()},
                                {"auto", specAuto()},
                                {"draft", specDraftModel(path.toStdString())},
                                {"dtree", draftTree(path.toStdString())}};
    const QStringList wanted = p.value("modes").split(',', Qt::SkipEmptyParts);
    const QStringList wantedPrompts = p.value("prompts").split(',', Qt::SkipEmptyParts);
    const auto promptWanted = [&](int k) {
        return wantedPrompts.isEmpty() || wantedPrompts.contains(QLatin1String(kKinds[k].name));
    };
    std::vector<Mode> modes{all[0]};  // plain first: the speedups' base
    for (size_t i = 1; i < all.size(); ++i)
        if (wanted.isEmpty() || wanted.contains(QLatin1String(all[i].name))) modes.push_back(all[i]);
    std::map<std::pair<int, int>, Cell> cells;
    for (int run = 0; run < runs; ++run)
        for (int k = 0; k < static_cast<int>(std::size(kKinds)); ++k) {
            if (!promptWanted(k)) continue;
            const PromptKind& kind = kKinds[k];
            const std::vector<TokenId> prompt =
                kind.chat ? e.chatPrompt({{ChatRole::User, kind.text}}) : e.rawPrompt(kind.text);
            for (int m = 0; m < std::ssize(modes); ++m) {
                // --dump: the first run's plain reply.
                const std::string dump =
                    run == 0 && m == 0 && !dumpDir.empty() ? dumpDir + "/" + name + "." + kind.name + ".json" : "";
                if (auto r = runOnce(e, prompt, modes[static_cast<size_t>(m)], maxTokens, cells[{k, m}], dump); !r)
                    return r;
            }
            std::fprintf(stderr, "run %d/%d %s done\n", run + 1, runs, kind.name);
        }
    printTable(name.c_str(), modes, cells);
    return {};
}

int cmdBenchSpec(const QCommandLineParser& p) {
    const QStringList models = p.values("model");
    if (models.isEmpty()) return usageError("bench-spec needs --model (repeatable)");
    int runs = 5, threads = 2, instances = 4;
    int32_t maxTokens = 0;
    QString error;
    if (!number(p, "runs", runs, error) || !number(p, "threads", threads, error) ||
        !number(p, "max-tokens", maxTokens, error) || !number(p, "instances", instances, error))
        return usageError(error);
    if (runs < 1 || threads < 1 || maxTokens < 2 || instances < 1)
        return usageError("--runs, --threads and --instances must be >= 1, --max-tokens >= 2");
    const QString workload = p.value("workload");
    if (workload != "standard" && workload != "history")
        return usageError("--workload must be standard or history, not '" + workload + "'");
    const bool history = workload == "history";
    const QStringList known =
        history ? QStringList{"ngram", "history", "auto"} : QStringList{"ngram", "tree", "auto", "draft", "dtree"};
    for (const QString& m : p.value("modes").split(',', Qt::SkipEmptyParts))
        if (!known.contains(m))
            return usageError("--modes: '" + m + "' is not a mode of the " + workload + " workload (" +
                              known.join(',') + ")");
    if (p.isSet("dump") && !QDir().mkpath(p.value("dump")))
        return usageError("--dump: cannot create the folder '" + p.value("dump") + "'");
    if (history)
        std::printf(
            "greedy, %d tokens per reply, %d threads, median of %d interleaved runs; history workload: %d instances "
            "each of code-edit, summary and qa per set; the store holds set A's prompts and the model's replies; "
            "tokens/s per run = the set's decode tokens / decode time; verbatim = share of plain set-B reply tokens "
            "inside a run of >= %d tokens found in one stored message\n",
            maxTokens, threads, runs, instances, kVerbatimRun);
    else
        std::printf(
            "greedy, %d tokens per reply, %d threads, median of %d interleaved runs; the draft model is the target's "
            "own file (no smaller model with the same vocabulary is at hand)\n",
            maxTokens, threads, runs);
    for (const QString& m : models)
        if (auto r = benchModel(m, p, runs, maxTokens, threads, history ? instances : 0); !r)
            return failWith(r.error());
    return 0;
}

QList<QCommandLineOption> benchSpecOptions() {
    return {{"runs", "bench-spec: runs per cell (the median is printed).", "n", "5"},
            {"threads", "bench-spec: CPU threads.", "n", "2"},
            {"modes",
             "bench-spec: modes besides plain, comma-separated (standard: ngram,tree,auto,draft,dtree; history: "
             "ngram,history,auto; default all).",
             "list"},
            {"prompts",
             "bench-spec: the standard workload's prompts, comma-separated (passage,code,chat,codechat; default all).",
             "list"},
            {"workload", "bench-spec: standard (four prompts) or history (issue 25's task sets).", "name", "standard"},
            {"instances", "bench-spec --workload history: instances per task kind and set.", "n", "4"},
            {"dump",
             "bench-spec: write each prompt's plain reply (history: set B's, and the store) as JSON into this folder, "
             "for tests/perf/spec_ceiling.py.",
             "dir"}};
}

}  // namespace

Command benchSpecCommand() {
    return {"bench-spec",
            "  bench-spec --model PATH [--model PATH]... [--runs N] [--threads N] [--max-tokens N] [--modes LIST]\n"
            "           [--prompts LIST] [--workload standard|history] [--instances N] [--dump DIR]\n"
            "           output tokens/s with and without speculative decoding (n-gram chains and trees, draft\n"
            "           model; history: drafting from a store seeded with set A's replies, measured on set B)\n",
            benchSpecOptions, cmdBenchSpec};
}

}  // namespace hearth::cli
