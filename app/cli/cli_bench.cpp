// hearth-cli bench: prefill and decode speed of one model, stated against what the machine
// gives (read/triad bandwidth, fp32 FMA peak, measured in the same run with the same threads),
// optionally against llama.cpp on the same file, runs interleaved. Each repeat is a fresh random
// prompt, so the prefix cache never helps (checked); decode is timed after the whole prefill.
#include <QJsonDocument>
#include <QJsonObject>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>

#include "app/cli/bench_cost.h"
#include "app/cli/bench_oracle.h"
#include "app/cli/cli_bench_shared.h"
#include "app/cli/cli_commands.h"
#include "app/cli/cli_common.h"
#include "engine/model/gguf.h"
#include "engine/str_cat.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/machine_probe.h"
#include "kernels/cpu/thread_pool.h"

namespace hearth::cli {

Spread spreadOf(std::vector<double> v) {
    if (v.empty()) return {};
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return {n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2, v.front(), v.back()};
}

// A random prompt of n ids drawn from the tokens that are neither control nor end-of-generation
// pieces. No BOS: the engine would reuse a previous run's K/V of it. The first id is the
// run's own (run-th of those tokens), so no two runs share even their first token.
std::vector<TokenId> randomPrompt(const Engine& e, int n, uint64_t seed, int run) {
    const Tokenizer& tok = e.tokenizer();
    std::vector<TokenId> pool;
    for (TokenId id = 0; id < tok.nVocab(); ++id)
        if (!tok.isControl(id) && !tok.isEndOfGeneration(id)) pool.push_back(id);
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<size_t> pick(0, pool.size() - 1);
    std::vector<TokenId> ids{pool[static_cast<size_t>(run) % pool.size()]};
    while (std::ssize(ids) < n) ids.push_back(pool[pick(rng)]);
    return ids;
}

// Greedy, with every end-of-generation token banned, so that each run generates nGen tokens.
GenerateRequest benchRequest(const Engine& e, std::vector<TokenId> prompt, int nGen) {
    GenerateRequest req;
    req.prompt = std::move(prompt);
    req.maxTokens = nGen;
    req.sampling.temperature = 0;
    for (TokenId id = 0; id < e.tokenizer().nVocab(); ++id)
        if (e.tokenizer().isEndOfGeneration(id))
            req.sampling.logitBias.push_back({id, -std::numeric_limits<float>::infinity()});
    return req;
}

Result<GenerateTimings> runHearth(Engine& e, const GenerateRequest& req, int32_t expectedPrefixHit) {
    auto id = e.submit(req);
    if (!id) return std::unexpected(id.error());
    Outcome o;
    while (!o.finished)
        for (const EngineEvent& ev : e.step()) record(o, ev);
    if (o.error) return std::unexpected(*o.error);
    if (expectedPrefixHit >= 0 && o.timings.prefixCacheHitTokens != expectedPrefixHit)
        return fail(ErrorCode::InvalidArgument,
                    strCat("bench: the prefix cache served ", o.timings.prefixCacheHitTokens, " prompt tokens (",
                           expectedPrefixHit, " expected); each run must compute what it times"));
    return o.timings;
}

std::string spreadText(const std::vector<double>& v, int precision) {
    const Spread s = spreadOf(v);
    char buf[160];
    std::snprintf(buf, sizeof buf, "%9.*f  [%.*f .. %.*f]", precision, s.median, precision, s.min, precision, s.max);
    return buf;
}

// The backend's name, with +VNNI when the AVX2 backend runs the AVX-VNNI builds of its integer
// gemms and +AVX-512 when it runs the AVX-512 build of its float gemm. (The name itself stays
// "CPU (AVX2)": it keys saved KV caches, and the bits are the same.)
std::string backendLabel(const Engine& e) {
    if (e.backendName() != "CPU (AVX2)") return e.backendName();
    return std::string("CPU (AVX2") + (avxVnniEnabled() ? "+VNNI" : "") + (avx512Enabled() ? "+AVX-512" : "") + ")";
}

namespace {

// /proc/self/status VmHWM in kB (0 when unreadable), and its reset (Linux clear_refs "5").
int64_t vmHwmKb() {
    std::ifstream in("/proc/self/status");
    for (std::string line; std::getline(in, line);)
        if (line.rfind("VmHWM:", 0) == 0) return std::atoll(line.c_str() + 6);
    return 0;
}

bool resetHwm() {
    std::ofstream out("/proc/self/clear_refs");
    out << "5";
    return static_cast<bool>(out.flush());
}

// Everything measured, for the text and JSON reports.
struct BenchResults {
    std::vector<double> readGBps, triadGBps;
    FmaPeak fma;
    std::vector<double> prefillTps, decodeTps, oraclePrefillTps, oracleDecodeTps;
    int64_t peakRssKb = 0;
    bool rssIncludesProbe = false;
    double loadSeconds = 0;  // Engine::load: mapping, checks, fingerprint, the backend's repacking
    QString oracleVersion;
    double bandwidth() const { return std::max(spreadOf(readGBps).median, spreadOf(triadGBps).median); }
};

// The peak resident memory of the engine: VmHWM sampled before each probe, which maps and
// frees its own 1 GiB; the mark is then reset so that the probe's pages do not count.
class RssWatch {
public:
    explicit RssWatch(BenchResults& r) : r_(r) {}
    void beforeProbe() { note(); }
    void afterProbe() { r_.rssIncludesProbe = r_.rssIncludesProbe || !resetHwm(); }
    void note() { r_.peakRssKb = std::max(r_.peakRssKb, vmHwmKb()); }

private:
    BenchResults& r_;
};

void probeBandwidth(ThreadPool& pool, const BenchOptions& o, BenchResults& r, RssWatch& rss) {
    rss.beforeProbe();
    const BandwidthSample s = measureBandwidth(pool, o.probeBytes);
    rss.afterProbe();
    r.readGBps.push_back(s.readGBps);
    r.triadGBps.push_back(s.triadGBps);
}

Result<void> runAll(Engine& e, OracleBench* oracle, ThreadPool& pool, const BenchOptions& o, BenchResults& r) {
    RssWatch rss(r);
    rss.note();  // loading
    rss.beforeProbe();
    r.fma = measureFmaPeak(pool);
    probeBandwidth(pool, o, r, rss);
    // A warm-up run of each engine (first touches of the weights, lazy set-up), not counted.
    const GenerateRequest warm =
        benchRequest(e, randomPrompt(e, std::min(o.nPrompt, 32), o.seed + 999, o.nRepeat), std::min(o.nGen, 4));
    if (auto t = runHearth(e, warm); !t) return std::unexpected(t.error());
    if (oracle)
        if (auto t = oracle->run(warm.prompt, warm.maxTokens); !t) return std::unexpected(t.error());
    for (int rep = 0; rep < o.nRepeat; ++rep) {
        const GenerateRequest req =
            benchRequest(e, randomPrompt(e, o.nPrompt, o.seed + static_cast<uint64_t>(rep), rep), o.nGen);
        auto t = runHearth(e, req);
        if (!t) return std::unexpected(t.error());
        r.prefillTps.push_back(t->prefillTokensPerSecond());
        r.decodeTps.push_back(t->decodeTokensPerSecond());
        rss.note();
        if (oracle) {
            auto ot = oracle->run(req.prompt, o.nGen);
            if (!ot) return std::unexpected(ot.error());
            r.oraclePrefillTps.push_back(ot->prefillMs > 0 ? ot->prefillTokens / ot->prefillMs * 1000 : 0);
            r.oracleDecodeTps.push_back(ot->decodeMs > 0 ? ot->decodeTokens / ot->decodeMs * 1000 : 0);
        }
        probeBandwidth(pool, o, r, rss);
        std::fprintf(stderr, "run %d/%d: hearth prefill %.1f t/s, decode %.2f t/s%s; read %.2f GB/s, triad %.2f GB/s\n",
                     rep + 1, o.nRepeat, r.prefillTps.back(), r.decodeTps.back(),
                     oracle ? strCat("; llama.cpp prefill ", r.oraclePrefillTps.back(), " t/s, decode ",
                                     r.oracleDecodeTps.back(), " t/s")
                                  .c_str()
                            : "",
                     r.readGBps.back(), r.triadGBps.back());
    }
    rss.note();
    return {};
}

QJsonObject spreadJson(const std::vector<double>& v) {
    const Spread s = spreadOf(v);
    return {{"median", s.median}, {"min", s.min}, {"max", s.max}};
}

struct Derived {
    double decodePctBw = 0, prefillPctFma = 0, prefillPctAvx512 = 0, prefillFlopsPerToken = 0;
};

Derived derive(const ModelCost& cost, const BenchOptions& o, const BenchResults& r) {
    Derived d;
    d.prefillFlopsPerToken = cost.prefillFlopsPerToken(o.nPrompt);
    const double bw = r.bandwidth() * 1e9;
    if (bw > 0)
        d.decodePctBw = 100.0 * spreadOf(r.decodeTps).median * static_cast<double>(cost.weightBytesPerToken) / bw;
    if (r.fma.gflops > 0)
        d.prefillPctFma = 100.0 * spreadOf(r.prefillTps).median * d.prefillFlopsPerToken / (r.fma.gflops * 1e9);
    if (r.fma.avx512Gflops > 0)
        d.prefillPctAvx512 =
            100.0 * spreadOf(r.prefillTps).median * d.prefillFlopsPerToken / (r.fma.avx512Gflops * 1e9);
    return d;
}

QJsonObject resultsJson(const Engine& e, const ModelCost& cost, const BenchOptions& o, const BenchResults& r) {
    const Derived d = derive(cost, o, r);
    QJsonObject j{{"model", QString::fromStdString(e.file().path())},
                  {"backend", QString::fromStdString(e.backendName())},
                  {"threads", o.nThreads},
                  {"prompt_tokens", o.nPrompt},
                  {"gen_tokens", o.nGen},
                  {"repeat", o.nRepeat},
                  {"bandwidth_gb_s", r.bandwidth()},
                  {"read_gb_s", spreadJson(r.readGBps)},
                  {"triad_gb_s", spreadJson(r.triadGBps)},
                  {"fma_peak_gflops", r.fma.gflops},
                  {"fma_plain_loop_gflops", r.fma.plainGflops},
                  {"weight_bytes_per_token", static_cast<qint64>(cost.weightBytesPerToken)},
                  {"decode_flops_per_token", static_cast<double>(cost.decodeFlopsPerToken())},
                  {"prefill_flops_per_token", d.prefillFlopsPerToken},
                  {"prefill_attention_flops", attentionFlops(e.config(), 0, o.nPrompt)},
                  {"decode_tokens_per_s", spreadOf(r.decodeTps).median},
                  {"decode", spreadJson(r.decodeTps)},
                  {"decode_pct_of_bandwidth", d.decodePctBw},
                  {"prefill_tokens_per_s", spreadOf(r.prefillTps).median},
                  {"prefill", spreadJson(r.prefillTps)},
                  {"prefill_pct_of_fma_peak", d.prefillPctFma},
                  {"fma_peak_avx512_gflops", r.fma.avx512Gflops},
                  {"prefill_pct_of_avx512_fma_peak", d.prefillPctAvx512},
                  {"peak_rss_mb", static_cast<double>(r.peakRssKb) / 1024.0},
                  {"load_s", r.loadSeconds},
                  {"pack_cache", packCacheOutcomeName(e.packCacheReport().outcome)},
                  {"pack_cache_check_s", e.packCacheReport().checkSeconds},
                  {"peak_rss_includes_probe", r.rssIncludesProbe},
                  {"weights_mb", static_cast<double>(cost.tensorBytes) / (1 << 20)},
                  {"kv_cache_mb", static_cast<double>(cost.kvBytesPerPosition) * e.contextLength() / (1 << 20)}};
    if (!r.oracleDecodeTps.empty()) {
        j["oracle"] = QJsonObject{{"version", r.oracleVersion},
                                  {"prefill", spreadJson(r.oraclePrefillTps)},
                                  {"decode", spreadJson(r.oracleDecodeTps)}};
        j["prefill_ratio_vs_oracle"] = spreadOf(r.prefillTps).median / spreadOf(r.oraclePrefillTps).median;
        j["decode_ratio_vs_oracle"] = spreadOf(r.decodeTps).median / spreadOf(r.oracleDecodeTps).median;
    }
    return j;
}

void printText(const Engine& e, const ModelCost& cost, const BenchOptions& o, const BenchResults& r) {
    const Derived d = derive(cost, o, r);
    std::string t =
        strCat("model: ", e.file().path(), " (", e.config().architecture, ", ", e.config().nParams / 1e6,
               " M params)\n", "backend: ", backendLabel(e), ", ", o.nThreads, " thread(s); prompt ", o.nPrompt,
               " tokens, ", o.nGen, " generated, ", o.nRepeat, " repeats (median [min .. max])\n");
    char buf[512];
    std::snprintf(buf, sizeof buf,
                  "weights per decode token: %.1f MB; arithmetic per token: decode %.3f GFLOP, prefill %.3f GFLOP "
                  "(output layer once per prompt); attention: %.3f GFLOP per %d-token prefill\n",
                  cost.weightBytesPerToken / 1e6, cost.decodeFlopsPerToken() / 1e9, d.prefillFlopsPerToken / 1e9,
                  attentionFlops(e.config(), 0, o.nPrompt) / 1e9, o.nPrompt);
    t += buf;
    t += strCat("read bandwidth GB/s  ", spreadText(r.readGBps, 2), "  (", r.readGBps.size(),
                " samples: before, between, after)\n");
    t += strCat("triad bandwidth GB/s ", spreadText(r.triadGBps, 2), "\n");
    std::snprintf(
        buf, sizeof buf,
        "bandwidth used: %.2f GB/s; fp32 FMA peak: %.1f GFLOP/s (plain 12-chain vfmadd loop: %.1f, %.0f%%)%s\n",
        r.bandwidth(), r.fma.gflops, r.fma.plainGflops,
        r.fma.plainGflops > 0 ? 100 * r.fma.gflops / r.fma.plainGflops : 0.0,
        r.fma.avx2 ? "" : " [no AVX2: scalar loops]");
    t += buf;
    if (r.fma.avx512Gflops > 0) {
        std::snprintf(buf, sizeof buf, "AVX-512 FMA peak (the same chains on ZMM): %.1f GFLOP/s\n", r.fma.avx512Gflops);
        t += buf;
    }
    const char* repack = std::getenv("HEARTH_REPACK");
    const PackCacheReport& pack = e.packCacheReport();
    std::snprintf(buf, sizeof buf, "load: %.2f s%s; packed weights' disk cache: %s", r.loadSeconds,
                  repack && std::string(repack) == "0" ? " (HEARTH_REPACK=0: weights kept in the file's layout)" : "",
                  packCacheOutcomeName(pack.outcome));
    t += buf;
    if (pack.outcome == PackCacheReport::Outcome::Hit) {
        std::snprintf(buf, sizeof buf, " (read and checked in %.3f s)", pack.checkSeconds);
        t += buf;
    }
    t += "\n";
    if (!pack.note.empty()) t += pack.note + "\n";
    t += strCat("hearth     prefill t/s ", spreadText(r.prefillTps), "   decode t/s ", spreadText(r.decodeTps), "\n");
    if (!r.oracleDecodeTps.empty()) {
        t += strCat("llama.cpp  prefill t/s ", spreadText(r.oraclePrefillTps), "   decode t/s ",
                    spreadText(r.oracleDecodeTps), "   (llama-cpp-python ", r.oracleVersion.toStdString(), ")\n");
        std::snprintf(buf, sizeof buf, "hearth / llama.cpp: prefill %.2fx, decode %.2fx\n",
                      spreadOf(r.prefillTps).median / spreadOf(r.oraclePrefillTps).median,
                      spreadOf(r.decodeTps).median / spreadOf(r.oracleDecodeTps).median);
        t += buf;
    }
    std::snprintf(buf, sizeof buf,
                  "decode: %.1f%% of bandwidth; prefill: %.1f%% of fp32 FMA peak; peak RSS %.0f MiB%s (weights %.0f "
                  "MiB, KV %.0f MiB)\n",
                  d.decodePctBw, d.prefillPctFma, r.peakRssKb / 1024.0,
                  r.rssIncludesProbe ? " (includes the bandwidth probe's buffer)" : "",
                  static_cast<double>(cost.tensorBytes) / (1 << 20),
                  static_cast<double>(cost.kvBytesPerPosition) * e.contextLength() / (1 << 20));
    t += buf;
    if (r.fma.avx512Gflops > 0) {
        std::snprintf(buf, sizeof buf, "prefill: %.1f%% of the AVX-512 FMA peak\n", d.prefillPctAvx512);
        t += buf;
    }
    writeOut(t);
}

bool readBenchOptions(const QCommandLineParser& p, BenchOptions& o, QString& error) {
    if (!number(p, "threads", o.nThreads, error) || !number(p, "prompt-tokens", o.nPrompt, error) ||
        !number(p, "gen-tokens", o.nGen, error) || !number(p, "repeat", o.nRepeat, error) ||
        !number(p, "seed", o.seed, error) || !number(p, "probe-mb", o.probeBytes, error))
        return false;
    o.probeBytes <<= 20;
    if (o.nThreads < 0 || o.nPrompt < 1 || o.nGen < 2 || o.nRepeat < 1 || o.probeBytes < (uint64_t{4} << 20)) {
        error = "bench needs --threads >= 0, --prompt-tokens >= 1, --gen-tokens >= 2, --repeat >= 1, --probe-mb >= 4";
        return false;
    }
    if (o.nThreads == 0) {  // as the engine chooses: HEARTH_THREADS, else the physical cores
        const char* env = std::getenv("HEARTH_THREADS");
        o.nThreads = env && std::atoi(env) > 0 ? std::atoi(env) : physicalCoreCount();
    }
    o.json = p.isSet("json");
    o.compareOracle = p.isSet("compare-oracle");
    return true;
}

int cmdBench(const QCommandLineParser& p) {
    if (!p.isSet("model")) return usageError("bench needs --model");
    BenchOptions o;
    QString error;
    if (!readBenchOptions(p, o, error)) return usageError(error);
    if (p.isSet("depth")) return runDepthBench(p, o);
    EngineOptions options;
    options.nThreads = o.nThreads;
    options.contextLength = o.nPrompt + o.nGen + 16;
    options.scheduler.tokenBudget = o.nPrompt;  // the whole prompt in one batch, as llama.cpp's n_batch 512
    const auto loadStart = std::chrono::steady_clock::now();
    auto engine = Engine::load(p.value("model").toStdString(), options);
    if (!engine) return failWith(engine.error());
    const double loadSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - loadStart).count();
    Engine& e = **engine;
    if (e.contextLength() < options.contextLength)
        return failWith(
            {ErrorCode::InvalidArgument,
             strCat("the model's context (", e.contextLength(), ") is shorter than prompt + generated tokens")});
    std::unique_ptr<OracleBench> oracle;
    BenchResults r;
    if (o.compareOracle) {
        auto started = OracleBench::start(OracleBench::defaultPython(), OracleBench::defaultScript(), p.value("model"),
                                          o.nThreads, options.contextLength);
        if (!started) return failWith(started.error());
        oracle = std::move(*started);
        r.oracleVersion = oracle->version();
    }
    r.loadSeconds = loadSeconds;
    ThreadPool pool(o.nThreads);
    if (auto ok = runAll(e, oracle.get(), pool, o, r); !ok) return failWith(ok.error());
    const ModelCost cost = modelCost(e.file(), e.config());
    if (o.json) writeOut(QJsonDocument(resultsJson(e, cost, o, r)).toJson(QJsonDocument::Compact).toStdString() + "\n");
    else printText(e, cost, o, r);
    return 0;
}

QList<QCommandLineOption> benchOptions() {
    return {{"threads", "Threads (0 = HEARTH_THREADS, else one per physical core).", "n", "0"},
            {"prompt-tokens", "Prompt length.", "n", "512"},
            {"gen-tokens", "Tokens generated after the prompt.", "n", "128"},
            {"repeat", "Runs (each a fresh random prompt).", "n", "5"},
            {"probe-mb", "Bandwidth probe buffer in MiB.", "n", "1024"},
            {"compare-oracle",
             "Also time llama.cpp on the same file, runs interleaved (llama-cpp-python; with --depth, "
             "llama.cpp's own llama-bench)."},
            {"depth", "Depth mode: decode and a prefill at each of these context depths (N[,N...]).", "n,n"},
            {"kv-k",
             "With --depth: K order in the KV cache, dims (dimension-major, the CPU default) or rows (token-major).",
             "order", "dims"},
            {"kv-v",
             "With --depth: V order in the KV cache, heads (each head's rows of a block together, the CPU "
             "default) or rows (token-major).",
             "order", "heads"}};
}

}  // namespace

Command benchCommand() {
    return {"bench",
            "  bench    --model PATH [--threads N] [--prompt-tokens 512] [--gen-tokens 128] [--repeat R]\n"
            "           [--json] [--compare-oracle] [--probe-mb 1024] [--seed S]\n"
            "           prefill and decode tokens/s against the measured bandwidth and fp32 FMA peak\n"
            "  bench    --model PATH --depth N[,N...] [--threads N] [--prompt-tokens 512] [--gen-tokens 128]\n"
            "           [--repeat R] [--json] [--compare-oracle] [--kv-k dims|rows]\n"
            "           [--kv-v heads|rows]\n"
            "           decode at position N and a prefill at depth N, against the bandwidth bound\n",
            benchOptions, cmdBench};
}

}  // namespace hearth::cli
