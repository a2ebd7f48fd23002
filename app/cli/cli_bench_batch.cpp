// hearth-cli bench-batch: what continuous batching buys. N different chat prompts submitted
// together through Engine::submit/step (greedy, end tokens banned so every reply has the same
// length) against the same requests run one after another; prints aggregate decode tokens/s
// per concurrency level and checks that every request's tokens equal its solo run.
#include <QFileInfo>
#include <algorithm>
#include <cstdio>
#include <limits>

#include "app/cli/cli_commands.h"
#include "engine/str_cat.h"

namespace hearth::cli {
namespace {

const char* const kQuestions[] = {
    "What would you do on a rainy Sunday afternoon, and why?",
    "Explain how a bicycle stays upright while moving.",
    "Write a short poem about the sea at night.",
    "Give three tips for learning a new language.",
    "Why is the sky blue? Answer for a ten-year-old.",
    "Describe the taste of a fresh lemon to someone who never had one.",
    "What are the pros and cons of working from home?",
    "Tell a short story about a robot who learns to paint.",
};

// What one run produced: each request's tokens, and the steps in which every request in flight
// was already decoding (its first token out): their tokens and time.
struct RunStats {
    std::vector<std::vector<TokenId>> tokens;
    int64_t decodeTokens = 0;
    double decodeMs = 0;
    double wallMs = 0;
};

std::vector<GenerateRequest> makeRequests(const Engine& e, int n, int32_t maxTokens) {
    std::vector<GenerateRequest> reqs;
    const auto nQuestions = static_cast<int>(std::size(kQuestions));
    for (int i = 0; i < n; ++i) {
        std::string question = kQuestions[i % nQuestions];
        if (i >= nQuestions) question += strCat(" Answer in ", 2 + i / nQuestions, " paragraphs.");
        GenerateRequest& req = reqs.emplace_back();
        req.prompt = e.chatPrompt({{ChatRole::User, question}});
        req.maxTokens = maxTokens;
        req.sampling.temperature = 0;
        for (TokenId t = 0; t < e.tokenizer().nVocab(); ++t)
            if (e.tokenizer().isEndOfGeneration(t))
                req.sampling.logitBias.push_back({t, -std::numeric_limits<float>::infinity()});
    }
    return reqs;
}

// Submits reqs together and steps until all are done.
Result<RunStats> runTogether(Engine& e, std::span<const GenerateRequest> reqs) {
    RunStats s;
    s.tokens.resize(reqs.size());
    std::vector<RequestId> ids;
    for (const GenerateRequest& r : reqs) {
        auto id = e.submit(r);
        if (!id) return std::unexpected(id.error());
        ids.push_back(*id);
    }
    const auto t0 = Clock::now();
    while (!e.idle()) {
        const bool decoding = std::none_of(s.tokens.begin(), s.tokens.end(), [](const auto& t) { return t.empty(); });
        const auto stepStart = Clock::now();
        const std::vector<EngineEvent> events = e.step();
        const double ms = msSince(stepStart);
        int64_t n = 0;
        for (const EngineEvent& ev : events) {
            const auto i = static_cast<size_t>(std::find(ids.begin(), ids.end(), ev.request) - ids.begin());
            if (ev.kind == EngineEvent::Kind::Finish && ev.error) return std::unexpected(*ev.error);
            if (ev.kind != EngineEvent::Kind::Token || i >= ids.size()) continue;
            s.tokens[i].push_back(ev.token);
            ++n;
        }
        if (decoding) {
            s.decodeMs += ms;
            s.decodeTokens += n;
        }
    }
    s.wallMs = msSince(t0);
    return s;
}

double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

struct Level {
    std::vector<double> together, alone, wallTogether, wallAlone;  // decode tokens/s, wall ms; one per run
    int nSame = 0, nRequests = 0;
};

// Runs each request alone for two tokens, so that every timed run finds the prompts' whole
// blocks in the prefix cache (and the KV memory touched) whatever ran before it.
Result<void> warmUp(Engine& e, int n) {
    for (const GenerateRequest& r : makeRequests(e, n, 2))
        if (auto s = runTogether(e, std::span(&r, 1)); !s) return std::unexpected(s.error());
    return {};
}

// Which runs bench-batch makes; Both compares them, the others exist to count one mode's
// instructions (valgrind --tool=callgrind --toggle-collect on Engine::step).
enum class Mode { Both, Together, OneByOne };

// The decode rate of the first n runs' steps, summed.
double ratePerSecond(std::span<const RunStats> runs) {
    int64_t tokens = 0;
    double ms = 0;
    for (const RunStats& r : runs) {
        tokens += r.decodeTokens;
        ms += r.decodeMs;
    }
    return ms > 0 ? double(tokens) / ms * 1000.0 : 0.0;
}

// One run of every level: each request alone (once, for the largest level), then each level's
// first n requests together.
Result<void> runLevels(Engine& e, const std::vector<int>& levels, int32_t maxTokens, Mode mode,
                       std::vector<Level>& out) {
    const int nMax = *std::max_element(levels.begin(), levels.end());
    const std::vector<GenerateRequest> reqs = makeRequests(e, nMax, maxTokens);
    std::vector<RunStats> alone;
    for (size_t i = 0; mode != Mode::Together && i < reqs.size(); ++i) {
        auto s = runTogether(e, std::span(reqs).subspan(i, 1));
        if (!s) return std::unexpected(s.error());
        alone.push_back(std::move(*s));
    }
    for (size_t l = 0; l < levels.size(); ++l) {
        const auto n = static_cast<size_t>(levels[l]);
        if (mode != Mode::Together) {
            out[l].alone.push_back(ratePerSecond(std::span(alone).first(n)));
            double wall = 0;
            for (size_t i = 0; i < n; ++i) wall += alone[i].wallMs;
            out[l].wallAlone.push_back(wall);
        }
        if (mode == Mode::OneByOne) continue;
        auto together = runTogether(e, std::span(reqs).first(n));
        if (!together) return std::unexpected(together.error());
        out[l].together.push_back(ratePerSecond(std::span(&*together, 1)));
        out[l].wallTogether.push_back(together->wallMs);
        for (size_t i = 0; mode == Mode::Both && i < n; ++i) {
            out[l].nSame += together->tokens[i] == alone[i].tokens[0] ? 1 : 0;
            ++out[l].nRequests;
        }
    }
    return {};
}

bool parseLevels(const QString& text, int maxRunning, std::vector<int>& levels) {
    for (const QString& part : text.split(',')) {
        bool ok = false;
        const int n = part.trimmed().toInt(&ok);
        if (!ok || n < 1 || n > maxRunning) return false;
        levels.push_back(n);
    }
    return !levels.empty();
}

// "-" for a mode that did not run.
std::string cell(const std::vector<double>& values, const char* format) {
    if (values.empty()) return "-";
    char text[32];
    std::snprintf(text, sizeof text, format, median(values));
    return text;
}

void printLevels(const std::vector<int>& levels, const std::vector<Level>& out) {
    std::printf("%5s %18s %18s %8s %14s %14s %12s\n", "seqs", "together tok/s", "one-by-one tok/s", "speedup",
                "wall together", "wall 1-by-1", "same tokens");
    for (size_t l = 0; l < levels.size(); ++l) {
        const Level& v = out[l];
        const std::vector<double> speedup = v.together.empty() || v.alone.empty()
            ? std::vector<double>{}
            : std::vector<double>{median(v.together) / median(v.alone)};
        std::printf("%5d %18s %18s %8s %14s %14s %8d/%d\n", levels[l], cell(v.together, "%.1f").c_str(),
                    cell(v.alone, "%.1f").c_str(), cell(speedup, "%.2fx").c_str(),
                    cell(v.wallTogether, "%.0fms").c_str(), cell(v.wallAlone, "%.0fms").c_str(), v.nSame, v.nRequests);
    }
}

struct BenchArgs {
    int threads = 2, runs = 1;
    int32_t maxTokens = 64;
    std::vector<int> levels;
    Mode mode = Mode::Both;
};

bool readArgs(const QCommandLineParser& p, int maxRunning, BenchArgs& a, QString& error) {
    if (!number(p, "threads", a.threads, error) || !number(p, "tokens", a.maxTokens, error) ||
        !number(p, "runs", a.runs, error))
        return false;
    if (a.threads < 1 || a.runs < 1 || a.maxTokens < 2) {
        error = "--threads and --runs must be >= 1, --tokens >= 2";
        return false;
    }
    if (!parseLevels(p.value("seqs"), maxRunning, a.levels)) {
        error = QStringLiteral("--seqs: a comma-separated list of numbers in [1, %1]").arg(maxRunning);
        return false;
    }
    const QString mode = p.value("mode");
    a.mode = mode == "together" ? Mode::Together : mode == "one-by-one" ? Mode::OneByOne : Mode::Both;
    if (mode != "both" && a.mode == Mode::Both) error = "--mode must be both, together or one-by-one";
    return error.isEmpty();
}

int cmdBenchBatch(const QCommandLineParser& p) {
    if (!p.isSet("model")) return usageError("bench-batch needs --model");
    auto options = readEngineOptions(p);
    if (!options) return failWith(options.error());
    BenchArgs a;
    if (QString error; !readArgs(p, options->scheduler.maxRunning, a, error)) return usageError(error);
    options->nThreads = a.threads;
    auto engine = Engine::load(p.value("model").toStdString(), *options);
    if (!engine) return failWith(engine.error());
    Engine& e = **engine;
    std::printf(
        "%s, %s, %d threads, %d tokens per reply (greedy, end tokens banned), median of %d runs, prompts "
        "warmed into the prefix cache first; tok/s: tokens of the steps in which every request was decoding, "
        "over those steps' time\n",
        QFileInfo(p.value("model")).fileName().toUtf8().constData(), e.backendName().c_str(), a.threads, a.maxTokens,
        a.runs);
    if (auto r = warmUp(e, *std::max_element(a.levels.begin(), a.levels.end())); !r) return failWith(r.error());
    std::vector<Level> out(a.levels.size());
    for (int run = 0; run < a.runs; ++run) {
        if (auto r = runLevels(e, a.levels, a.maxTokens, a.mode, out); !r) return failWith(r.error());
        std::fprintf(stderr, "run %d/%d done\n", run + 1, a.runs);
    }
    printLevels(a.levels, out);
    if (a.mode != Mode::Both) return 0;
    const bool allSame = std::all_of(out.begin(), out.end(), [](const Level& v) { return v.nSame == v.nRequests; });
    std::printf("every request's tokens together equal its solo run: %s\n", allSame ? "yes" : "NO");
    return allSame ? 0 : 1;
}

QList<QCommandLineOption> benchBatchOptions() {
    return {{"threads", "bench-batch: CPU threads.", "n", "2"},
            {"seqs", "bench-batch: concurrency levels, comma-separated.", "list", "1,2,4,8"},
            {"tokens", "bench-batch: tokens generated per request.", "n", "64"},
            {"runs", "bench-batch: runs (the median is printed).", "n", "1"},
            {"mode", "bench-batch: both, together or one-by-one (to count one mode's instructions).", "mode", "both"}};
}

}  // namespace

Command benchBatchCommand() {
    return {"bench-batch",
            "  bench-batch --model PATH [--threads N] [--seqs 1,2,4,8] [--tokens N] [--runs N]\n"
            "           [--mode both|together|one-by-one]\n"
            "           decode tokens/s of N requests stepped together vs one after another,\n"
            "           and whether each request's tokens equal its solo run\n",
            benchBatchOptions, cmdBenchBatch};
}

}  // namespace hearth::cli
