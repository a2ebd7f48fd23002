// The history workload's measurement: seeding, interleaved runs, the verbatim share of set B's
// replies (kVerbatimRun), and the table.
#include "app/cli/bench_spec_history.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>

#include "app/cli/history_workload.h"
#include "engine/spec/suffix_index.h"

namespace hearth::cli {
namespace {

struct Mode {
    const char* name;
    SpecOptions spec;
};

struct Cell {
    std::vector<double> tokensPerSecond;  // per run: the kind's decode tokens / decode time
    int64_t drafted = 0, accepted = 0, forwards = 0, tokens = 0;
};

double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

Result<GenerateResult> greedy(Engine& e, const std::vector<TokenId>& prompt, int32_t maxTokens,
                              const SpecOptions& spec) {
    GenerateRequest req;
    req.prompt = prompt;
    req.maxTokens = maxTokens;
    req.sampling.temperature = 0.0f;
    req.spec = spec;
    e.resetSpeculation();  // each reply from a fresh policy
    return e.generate(req, [](TokenId, std::string_view) { return true; });
}

// Tokens of reply inside a run of kVerbatimRun tokens that occurs in one stored message.
int64_t verbatimTokens(const SuffixIndex& store, const std::vector<TokenId>& reply) {
    std::vector<bool> covered(reply.size(), false);
    for (size_t i = 0; i + kVerbatimRun <= reply.size(); ++i)
        if (store.count(std::span(reply).subspan(i, kVerbatimRun)) > 0)
            std::fill(covered.begin() + static_cast<std::ptrdiff_t>(i),
                      covered.begin() + static_cast<std::ptrdiff_t>(i + kVerbatimRun), true);
    return std::count(covered.begin(), covered.end(), true);
}

const char* const kKinds[] = {"code-edit", "summary", "qa", "all"};

void printTable(const std::string& name, const std::vector<Mode>& modes, std::map<std::pair<int, int>, Cell>& cells,
                const std::map<int, std::pair<int64_t, int64_t>>& verbatim) {
    std::printf("\n%s: history workload, set B\n%-10s %-8s %10s %10s %10s %8s %9s\n", name.c_str(), "task", "mode",
                "tokens/s", "accept", "fwd/token", "speedup", "verbatim");
    for (int k = 0; k < 4; ++k) {
        const double plain = median(cells[{k, 0}].tokensPerSecond);
        const auto [covered, total] = verbatim.at(k);
        for (int m = 0; m < std::ssize(modes); ++m) {
            const Cell& c = cells[{k, m}];
            const double tps = median(c.tokensPerSecond);
            char accept[16] = "-";
            if (c.drafted > 0)
                std::snprintf(accept, sizeof accept, "%.1f%%", 100.0 * double(c.accepted) / double(c.drafted));
            std::printf("%-10s %-8s %10.2f %10s %10.3f %7.2fx %8.1f%%\n", kKinds[k], modes[static_cast<size_t>(m)].name,
                        tps, accept, c.tokens > 0 ? double(c.forwards) / double(c.tokens) : 0.0,
                        plain > 0 ? tps / plain : 0.0, total > 0 ? 100.0 * double(covered) / double(total) : 0.0);
        }
    }
    std::fflush(stdout);
}

int kindIndex(const std::string& kind) { return kind == "code-edit" ? 0 : kind == "summary" ? 1 : 2; }

void writeIds(std::ostream& out, std::span<const TokenId> ids) {
    out << '[';
    for (size_t i = 0; i < ids.size(); ++i) out << (i ? "," : "") << ids[i];
    out << ']';
}

Result<void> closeJson(std::ofstream& out, const std::string& path) {
    out << "}\n";
    out.close();
    if (!out) return fail(ErrorCode::Io, "cannot write " + path);
    return {};
}

}  // namespace

Result<void> writeReplyJson(const std::string& path, std::span<const TokenId> prompt, std::span<const TokenId> reply) {
    std::ofstream out(path);
    out << "{\"prompt_tokens\":";
    writeIds(out, prompt);
    out << ",\"tokens\":";
    writeIds(out, reply);
    return closeJson(out, path);
}

Result<void> writeStoreJson(const std::string& path, const std::vector<std::vector<TokenId>>& messages) {
    std::ofstream out(path);
    out << "{\"messages\":[";
    for (size_t i = 0; i < messages.size(); ++i) {
        if (i) out << ',';
        writeIds(out, messages[i]);
    }
    out << ']';
    return closeJson(out, path);
}

Result<void> benchSpecHistory(Engine& e, const std::string& name, int runs, int32_t maxTokens, int instances,
                              const std::string& dumpDir, const std::vector<std::string>& wanted) {
    const HistoryWorkload w = makeHistoryWorkload(instances);
    // The store: set A's user messages and the model's own greedy replies, as the app adds them.
    std::vector<std::vector<TokenId>> stored;
    for (const HistoryTask& t : w.setA) {
        auto r = greedy(e, e.chatPrompt({{ChatRole::User, t.prompt}}), maxTokens, {});
        if (!r) return std::unexpected(r.error());
        stored.push_back(e.tokenizer().encode(t.prompt, false, false));
        stored.push_back(r->tokens);
        e.addHistory(stored[stored.size() - 2]);
        e.addHistory(stored.back());
    }
    if (!dumpDir.empty())
        if (auto ok = writeStoreJson(dumpDir + "/" + name + ".store.json", stored); !ok) return ok;
    std::fprintf(stderr, "store seeded: %zu set-A replies, %lld tokens\n", w.setA.size(),
                 static_cast<long long>(e.history().nTokens()));
    std::vector<Mode> modes{{"plain", {}}};  // plain first: the speedups' base
    for (const Mode& m : {Mode{"ngram", specNGram()}, Mode{"history", specHistory()}, Mode{"auto", specAuto()}})
        if (wanted.empty() || std::find(wanted.begin(), wanted.end(), m.name) != wanted.end()) modes.push_back(m);
    std::map<std::pair<int, int>, Cell> cells;
    std::map<int, std::pair<int64_t, int64_t>> verbatim{{0, {}}, {1, {}}, {2, {}}, {3, {}}};
    for (int run = 0; run < runs; ++run) {
        std::map<std::pair<int, int>, std::pair<int64_t, double>> sums;  // (kind, mode) -> tokens, ms
        for (const HistoryTask& t : w.setB) {
            const std::vector<TokenId> prompt = e.chatPrompt({{ChatRole::User, t.prompt}});
            const int k = kindIndex(t.kind);
            for (int m = 0; m < std::ssize(modes); ++m) {
                auto r = greedy(e, prompt, maxTokens, modes[static_cast<size_t>(m)].spec);
                if (!r) return std::unexpected(r.error());
                for (int kk : {k, 3}) {
                    sums[{kk, m}].first += r->timings.decodeTokens;
                    sums[{kk, m}].second += r->timings.decodeMs;
                    Cell& c = cells[{kk, m}];
                    c.drafted += r->spec.drafted;
                    c.accepted += r->spec.accepted;
                    c.tokens += std::ssize(r->tokens);
                    c.forwards += m == 0 ? std::ssize(r->tokens) : r->spec.targetForwards;
                    if (run == 0 && m == 0) {
                        verbatim[kk].first += verbatimTokens(e.history(), r->tokens);
                        verbatim[kk].second += std::ssize(r->tokens);
                    }
                }
                if (run == 0 && m == 0 && !dumpDir.empty()) {
                    const std::string path =
                        dumpDir + "/" + name + ".B" + std::to_string(&t - w.setB.data()) + "-" + t.kind + ".json";
                    if (auto ok = writeReplyJson(path, prompt, r->tokens); !ok) return ok;
                }
            }
        }
        for (const auto& [key, s] : sums)
            cells[key].tokensPerSecond.push_back(s.second > 0 ? double(s.first) / s.second * 1000.0 : 0.0);
        std::fprintf(stderr, "run %d/%d done\n", run + 1, runs);
    }
    printTable(name, modes, cells, verbatim);
    return {};
}

}  // namespace hearth::cli
