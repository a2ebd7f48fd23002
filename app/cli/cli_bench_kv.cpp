// hearth-cli bench-kv: KV memory per token for each element type, the waste of the paged
// layout (block slots allocated vs positions held) for 8 sequences of random lengths run
// together through the real engine, and the KV bytes one sequence of the context's length holds
// under the all-positions layout and under per-group pools (a benchmark, not a test).
#include <algorithm>
#include <cstdio>
#include <limits>
#include <random>

#include "app/cli/cli_commands.h"
#include "engine/str_cat.h"

namespace hearth::cli {
namespace {

constexpr int kSequences = 8;

struct Mix {
    std::vector<std::vector<TokenId>> prompts;
    std::vector<int32_t> maxTokens;
};

// Prompts of 16..300 random ordinary tokens, 64..192 tokens to generate each.
Mix randomMix(const Engine& e, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<int32_t> promptLen(16, 300), genLen(64, 192), id(0, e.tokenizer().nVocab() - 1);
    Mix mix;
    for (int i = 0; i < kSequences; ++i) {
        std::vector<TokenId>& p = mix.prompts.emplace_back();
        const int32_t n = promptLen(rng);
        while (std::ssize(p) < n)
            if (const TokenId t = id(rng); !e.tokenizer().isEndOfGeneration(t)) p.push_back(t);
        mix.maxTokens.push_back(genLen(rng));
    }
    return mix;
}

struct Waste {
    int64_t nSteps = 0;  // steps with every sequence decoding and none finished
    double sumWasteFraction = 0;
    int64_t peakHeld = 0, peakSlots = 0;
};

// Runs the mix greedily (end tokens banned, so each runs its length) and samples the waste at
// each step where all 8 sequences hold their prompt and none has finished: positions held
// are then prompt + generated - 1 each (the last token's K/V is computed next step).
Result<Waste> runMix(Engine& e, const Mix& mix) {
    std::vector<int32_t> generated(kSequences, 0);
    std::vector<RequestId> ids;
    for (int i = 0; i < kSequences; ++i) {
        GenerateRequest req;
        req.prompt = mix.prompts[static_cast<size_t>(i)];
        req.maxTokens = mix.maxTokens[static_cast<size_t>(i)];
        req.sampling.temperature = 0;
        for (TokenId t = 0; t < e.tokenizer().nVocab(); ++t)
            if (e.tokenizer().isEndOfGeneration(t))
                req.sampling.logitBias.push_back({t, -std::numeric_limits<float>::infinity()});
        auto id = e.submit(std::move(req));
        if (!id) return std::unexpected(id.error());
        ids.push_back(*id);
    }
    Waste w;
    bool anyFinished = false;
    while (!e.idle()) {
        for (const EngineEvent& ev : e.step()) {
            const auto i = static_cast<size_t>(std::find(ids.begin(), ids.end(), ev.request) - ids.begin());
            if (ev.kind == EngineEvent::Kind::Finish) {
                if (ev.error) return std::unexpected(*ev.error);
                anyFinished = true;
            } else {
                ++generated[i];
            }
        }
        if (anyFinished || std::find(generated.begin(), generated.end(), 0) != generated.end()) continue;
        int64_t held = 0;
        for (int i = 0; i < kSequences; ++i)
            held += std::ssize(mix.prompts[static_cast<size_t>(i)]) + generated[static_cast<size_t>(i)] - 1;
        const int64_t nSlots = int64_t{e.metrics().blocksUsed} * e.kvBlockSize();
        ++w.nSteps;
        w.sumWasteFraction += double(nSlots - held) / double(nSlots);
        if (held > w.peakHeld) {
            w.peakHeld = held;
            w.peakSlots = nSlots;
        }
    }
    return w;
}

struct Held {
    size_t bytes = 0;
    int32_t fullBlocks = 0, windowBlocks = 0;
};

// One sequence of nTokens positions as the engine's scheduler reserves and advances it (prefill
// chunks of the token budget, then one decode step at the last position) in a cache of `layout`
// holding just that sequence: the blocks and bytes its tables hold then. No forward pass runs:
// which blocks are held depends on the positions only, not on the values written into them.
Result<Held> holdOneSequence(const KvLayout& layout, int32_t nTokens, const SchedulerConfig& config) {
    auto cache = KvCache::create(layout, nTokens);
    if (!cache) return std::unexpected(cache.error());
    Scheduler sched(**cache, config);
    std::vector<int32_t> prompt(static_cast<size_t>(nTokens - 1));
    for (size_t i = 0; i < prompt.size(); ++i) prompt[i] = static_cast<int32_t>(i);  // no prefix repeats
    const SeqId id = sched.add(std::move(prompt));
    while (sched.contains(id) && sched.kvSequence(id).nTokens < nTokens) {
        const StepPlan plan = sched.schedule();
        if (!plan.failed.empty() || plan.chunks.empty())
            return fail(ErrorCode::OutOfMemory, strCat("one sequence of ", nTokens, " tokens does not fit"));
        StepResult result;
        for (const PlannedChunk& c : plan.chunks)
            if (c.sample) result.sampled.push_back({c.seq, 0});
        sched.complete(plan, result);
    }
    const KvSequence& kv = sched.kvSequence(id);
    return Held{(*cache)->heldBytes(kv), (*cache)->nHeldBlocks(kv, 0),
                (*cache)->nGroups() > 1 ? (*cache)->nHeldBlocks(kv, 1) : 0};
}

// bench-kv --ctx N: one sequence of N tokens under both layouts.
Result<void> printOneSequence(const Engine& e, const SchedulerConfig& config) {
    const int32_t n = e.contextLength();
    KvLayout all = e.kvLayout();
    all.window = 0;
    all.windowLayers.clear();
    auto allHeld = holdOneSequence(all, n, config);
    if (!allHeld) return std::unexpected(allHeld.error());
    const auto mib = [](size_t bytes) { return double(bytes) / (1024.0 * 1024.0); };
    std::printf("      one sequence of %d tokens: all positions %.1f MiB (%d blocks of every layer)", n,
                mib(allHeld->bytes), allHeld->fullBlocks);
    if (!hasWindowGroup(e.kvLayout())) {
        std::printf("; no sliding-window layers here, so per-group pools are the same layout\n");
        return {};
    }
    auto grouped = holdOneSequence(e.kvLayout(), n, config);
    if (!grouped) return std::unexpected(grouped.error());
    std::printf(
        "; per-group pools %.1f MiB (%d blocks of the %d full-attention layers, %d of the %d window layers): "
        "%.1f%% of all positions\n",
        mib(grouped->bytes), grouped->fullBlocks, nGroupLayers(e.kvLayout(), 0), grouped->windowBlocks,
        nGroupLayers(e.kvLayout(), 1), 100.0 * double(grouped->bytes) / double(allHeld->bytes));
    return {};
}

int benchType(const QCommandLineParser& p, KvElementType type, uint64_t seed) {
    auto options = readEngineOptions(p);
    if (!options) return failWith(options.error());
    options->kvType = type;
    auto engine = Engine::load(p.value("model").toStdString(), *options);
    if (!engine) {
        std::printf("%-5s refused: %s\n", kvElementTypeName(type), engine.error().message.c_str());
        return 0;
    }
    Engine& e = **engine;
    const double perToken = double(e.kvBytesPerBlock()) / e.kvBlockSize();
    std::printf("%-5s %s: %.0f bytes per token (%.1f KiB), %zu bytes per block of %d\n", kvElementTypeName(type),
                describe(e.kvLayout()).c_str(), perToken, perToken / 1024.0, e.kvBytesPerBlock(), e.kvBlockSize());
    const Mix mix = randomMix(e, seed);
    auto w = runMix(e, mix);
    if (!w) return failWith(w.error());
    if (e.metrics().nPreemptions > 0)
        return failWith({ErrorCode::OutOfMemory,
                         "the KV cache was too small for the 8 sequences (they were preempted); use a larger --ctx"});
    if (w->nSteps == 0) return failWith({ErrorCode::InvalidArgument, "no step had all 8 sequences decoding"});
    std::printf(
        "      paged layout, 8 sequences: at the peak %lld positions held in %lld block slots (%.1f MiB): "
        "waste %lld slots = %.2f%%; mean waste over %lld steps %.2f%%\n",
        static_cast<long long>(w->peakHeld), static_cast<long long>(w->peakSlots),
        double(w->peakSlots) * perToken / (1024.0 * 1024.0), static_cast<long long>(w->peakSlots - w->peakHeld),
        100.0 * double(w->peakSlots - w->peakHeld) / double(w->peakSlots), static_cast<long long>(w->nSteps),
        100.0 * w->sumWasteFraction / double(w->nSteps));
    if (auto r = printOneSequence(e, options->scheduler); !r) return failWith(r.error());
    return 0;
}

int cmdBenchKv(const QCommandLineParser& p) {
    if (!p.isSet("model")) return usageError("bench-kv needs --model");
    bool ok = false;
    const uint64_t seed = p.isSet("seed") ? p.value("seed").toULongLong(&ok) : std::random_device{}();
    if (p.isSet("seed") && !ok) return usageError("--seed must be a number");
    std::vector<KvElementType> types{KvElementType::F16, KvElementType::Q8_0};
    if (p.isSet("kv-type")) {
        const auto type = parseKvElementType(p.value("kv-type").toStdString());
        if (!type) return usageError("--kv-type must be f16 or q8_0");
        types = {*type};
    }
    std::printf("seed %llu: 8 sequences, prompts of 16-300 random tokens, 64-192 generated tokens each\n",
                static_cast<unsigned long long>(seed));
    for (KvElementType type : types)
        if (const int rc = benchType(p, type, seed); rc != 0) return rc;
    return 0;
}

}  // namespace

Command benchKvCommand() {
    return {"bench-kv",
            "  bench-kv --model PATH [--kv-type f16|q8_0] [--seed S] [--ctx N]\n"
            "           KV bytes per token (both types unless --kv-type), the paged layout's waste\n"
            "           for 8 sequences of random lengths (the seed is printed), and the KV bytes one\n"
            "           sequence of the context's length (--ctx) holds with every position kept in\n"
            "           every layer and with per-group pools (sliding-window layers keep their window)\n",
            nullptr, cmdBenchKv};
}

}  // namespace hearth::cli
