// hearth-cli bench-history: the history index (engine/spec/suffix_index.h) for a store of N
// conversations — tokenizing their messages with the model's vocabulary, building the index
// (adding every message as the engine host does after a load), its memory, and the time of one
// drafting step (HistoryDrafter::propose over a growing context) on held-out conversations.
// The conversations are the history workload's tasks (app/cli/history_workload.h) with the
// generator's own replies standing in for a model's.
#include <QFile>
#include <algorithm>
#include <cstdio>
#include <unordered_map>

#include "app/cli/cli_commands.h"
#include "app/cli/history_workload.h"
#include "engine/spec/history_drafter.h"

namespace hearth::cli {
namespace {

std::string loadAverage() {
    QFile f("/proc/loadavg");
    if (!f.open(QIODevice::ReadOnly)) return "unknown";
    return f.readAll().trimmed().toStdString();
}

double percentile(std::vector<double> v, double q) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, static_cast<size_t>(q * double(v.size() - 1) + 0.5))];
}

// Bytes allocated through it, for the trie's memory.
template <class T>
struct CountingAllocator {
    using value_type = T;
    size_t* bytes;
    explicit CountingAllocator(size_t* b) : bytes(b) {}
    template <class U>
    CountingAllocator(const CountingAllocator<U>& o) : bytes(o.bytes) {}
    T* allocate(size_t n) {
        *bytes += n * sizeof(T);
        return std::allocator<T>().allocate(n);
    }
    void deallocate(T* ptr, size_t n) {
        *bytes -= n * sizeof(T);
        std::allocator<T>().deallocate(ptr, n);
    }
    template <class U>
    bool operator==(const CountingAllocator<U>& o) const {
        return bytes == o.bytes;
    }
};

// The alternative measured: SuffixDecoding's structure, a suffix trie of bounded depth with a
// count per node (every suffix of every message inserted up to depth tokens), children in one
// hash map keyed by (parent, token), against the suffix arrays for the same messages.
void compareWithTrie(const std::vector<std::vector<TokenId>>& messages, int32_t depth) {
    size_t mapBytes = 0;
    using Key = uint64_t;
    std::unordered_map<Key, int32_t, std::hash<Key>, std::equal_to<Key>,
                       CountingAllocator<std::pair<const Key, int32_t>>>
        children(16, std::hash<Key>(), std::equal_to<Key>(),
                 CountingAllocator<std::pair<const Key, int32_t>>(&mapBytes));
    std::vector<int32_t> counts(1, 0);
    auto t0 = Clock::now();
    int64_t nTokens = 0;
    for (const std::vector<TokenId>& m : messages) {
        nTokens += std::ssize(m);
        for (size_t start = 0; start < m.size(); ++start) {
            int32_t node = 0;
            for (size_t k = start; k < m.size() && k < start + static_cast<size_t>(depth); ++k) {
                const Key key = (static_cast<Key>(static_cast<uint32_t>(node)) << 32) | static_cast<uint32_t>(m[k]);
                auto [it, added] = children.try_emplace(key, static_cast<int32_t>(counts.size()));
                if (added) counts.push_back(0);
                node = it->second;
                ++counts[static_cast<size_t>(node)];
            }
        }
    }
    const double trieMs = msSince(t0);
    const size_t trieBytes = mapBytes + counts.capacity() * sizeof(int32_t);
    SuffixIndex index;
    t0 = Clock::now();
    for (const std::vector<TokenId>& m : messages) index.add(m);
    const double saMs = msSince(t0);
    std::printf(
        "choice, on %zu messages (%lld tokens): depth-%d suffix trie %zu nodes, %.2f MiB (%.1f bytes per token), "
        "built in %.0f ms; suffix arrays %.2f MiB (%.1f bytes per token), built in %.0f ms\n",
        messages.size(), static_cast<long long>(nTokens), depth, counts.size(), double(trieBytes) / (1 << 20),
        double(trieBytes) / double(nTokens), trieMs, double(index.memoryBytes()) / (1 << 20),
        double(index.memoryBytes()) / double(nTokens), saMs);
}

int cmdBenchHistory(const QCommandLineParser& p) {
    int conversations = 1000, turns = 3, heldOut = 30;
    QString error;
    if (!number(p, "conversations", conversations, error) || !number(p, "turns", turns, error) ||
        !number(p, "held-out", heldOut, error))
        return usageError(error);
    if (conversations < 1 || turns < 1 || heldOut < 1)
        return usageError("--conversations, --turns and --held-out must be >= 1");
    auto options = readEngineOptions(p);
    if (!options) return failWith(options.error());
    options->contextLength = 2048;
    if (!p.isSet("model")) return usageError("bench-history needs --model (its vocabulary tokenizes the store)");
    auto engine = Engine::load(p.value("model").toStdString(), *options);
    if (!engine) return failWith(engine.error());
    const Engine& e = **engine;
    std::printf("load average at start: %s\n", loadAverage().c_str());

    // Tasks for every turn of every conversation: sets A and B of one workload together.
    const int nTasks = conversations * turns;
    const HistoryWorkload w = makeHistoryWorkload((nTasks + 5) / 6, 1000);
    std::vector<HistoryTask> tasks = w.setA;
    tasks.insert(tasks.end(), w.setB.begin(), w.setB.end());
    tasks.resize(static_cast<size_t>(nTasks));

    auto t0 = Clock::now();
    std::vector<std::vector<TokenId>> messages;
    for (const HistoryTask& t : tasks) {
        messages.push_back(e.tokenizer().encode(t.prompt, false, false));
        messages.push_back(e.tokenizer().encode(t.reference, false, false));
    }
    const double tokenizeMs = msSince(t0);
    SuffixIndex index;  // the engine's configuration
    t0 = Clock::now();
    for (const std::vector<TokenId>& m : messages) index.add(m);
    const double buildMs = msSince(t0);
    std::printf("%d conversations, %zu messages, %lld tokens: tokenize %.0f ms, build %.0f ms (%.2f us per token)\n",
                conversations, messages.size(), static_cast<long long>(index.nTokens()), tokenizeMs, buildMs,
                buildMs * 1000.0 / double(std::max<int64_t>(1, index.nTokens())));
    std::printf("memory: %.2f MiB (%.2f bytes per token), %d segments, cap %lld tokens\n",
                double(index.memoryBytes()) / (1 << 20), double(index.memoryBytes()) / double(index.nTokens()),
                index.nSegments(), static_cast<long long>(index.config().capTokens));

    // One drafting step per reply token of held-out conversations (another seed), as the engine
    // calls the drafter: the chat prompt and the reply so far, 8 tokens asked.
    const HistoryWorkload held = makeHistoryWorkload((heldOut + 2) / 3, 2000);
    HistoryDrafter drafter(index, {});
    const SpecSampler sampler{SamplingParams{}};
    std::vector<double> stepUs;
    int64_t drafts = 0, draftedTokens = 0;
    for (int i = 0; i < heldOut; ++i) {
        const HistoryTask& t = held.setA[static_cast<size_t>(i) % held.setA.size()];
        std::vector<TokenId> context = e.chatPrompt({{ChatRole::User, t.prompt}});
        for (TokenId next : e.tokenizer().encode(t.reference, false, false)) {
            const auto s = Clock::now();
            auto d = drafter.propose(context, 8, sampler);
            stepUs.push_back(msSince(s) * 1000.0);
            if (d && !d->tokens.empty()) {
                ++drafts;
                draftedTokens += std::ssize(d->tokens);
            }
            context.push_back(next);
        }
    }
    std::printf(
        "lookup per step (%zu steps, contexts of %d held-out tasks): median %.1f us, p90 %.1f us, p99 %.1f us, "
        "max %.1f us; %.0f%% of steps drafted (%.1f tokens on average)\n",
        stepUs.size(), heldOut, percentile(stepUs, 0.5), percentile(stepUs, 0.9), percentile(stepUs, 0.99),
        percentile(stepUs, 1.0), 100.0 * double(drafts) / double(std::max<size_t>(1, stepUs.size())),
        drafts > 0 ? double(draftedTokens) / double(drafts) : 0.0);
    // The trie on a tenth of the store (its memory grows with depth x tokens).
    compareWithTrie({messages.begin(), messages.begin() + static_cast<std::ptrdiff_t>(messages.size() / 10)}, 32);
    std::printf("load average at end: %s\n", loadAverage().c_str());
    return 0;
}

QList<QCommandLineOption> benchHistoryOptions() {
    return {{"conversations", "bench-history: conversations in the store.", "n", "1000"},
            {"turns", "bench-history: user/assistant turns per conversation.", "n", "3"},
            {"held-out", "bench-history: held-out tasks whose replies are drafted step by step.", "n", "30"}};
}

}  // namespace

Command benchHistoryCommand() {
    return {"bench-history",
            "  bench-history --model PATH [--conversations N] [--turns N] [--held-out N]\n"
            "           the history index for a store of N conversations: build time, memory, lookup per step\n",
            benchHistoryOptions, cmdBenchHistory};
}

}  // namespace hearth::cli
