// hearth-cli bench --depth N[,N...]: decode and prefill deep into a conversation. At each depth
// N a fresh random N-token prompt is computed (untimed), then nGen tokens are generated (decode
// timed at positions N onward); then the same N tokens plus nPrompt new ones are submitted and
// the prefix cache serves the N (checked), so the prefill of the nPrompt tokens at depth N is
// timed alone. Decode is stated against the bandwidth bound: the weight bytes and the KV bytes a
// decode token reads, over the read bandwidth measured in the same run. With --compare-oracle,
// llama.cpp's own llama-bench (build-llama-tools.sh) runs the same depths after Hearth's runs of
// each depth (interleaved), flash attention off and on; the faster of the two is quoted.
#include <QCommandLineParser>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <algorithm>
#include <cstdio>

#include "app/cli/bench_cost.h"
#include "app/cli/bench_llama.h"
#include "app/cli/cli_bench_shared.h"
#include "app/cli/cli_commands.h"
#include "engine/kv/kv_layout.h"
#include "engine/model/gguf.h"
#include "engine/str_cat.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/machine_probe.h"
#include "kernels/cpu/thread_pool.h"

namespace hearth::cli {
namespace {

// llama-bench's figures at one depth over the repeats: [flash attention off, on].
struct LlamaFigures {
    std::vector<double> decode[2], prefill[2];
};

struct DepthRow {
    int depth = 0;
    bool prefillMeasured = false;  // depth + nPrompt fits in the trained context
    std::vector<double> decodeTps, prefillTps;
    double kvBytesPerToken = 0;  // averaged over the timed decode positions
    LlamaFigures llama;
};

struct DepthResults {
    std::vector<DepthRow> rows;
    std::vector<double> readGBps, triadGBps;
    LlamaBenchTool llamaTool;
    QString llamaMissing;  // why llama.cpp did not run (with --compare-oracle)
    QString llamaCpuInfo;
    std::vector<double> loadAverages;  // /proc/loadavg's 1-minute figure at the start and after each repeat
    double bandwidth() const { return std::max(spreadOf(readGBps).median, spreadOf(triadGBps).median); }
};

// The host in words: /proc/cpuinfo's model name and the instruction-set flags that matter here.
struct HostInfo {
    std::string cpu;
    std::vector<std::string> flags;
};

HostInfo hostInfo() {
    HostInfo h{"unknown CPU", {}};
    QFile f("/proc/cpuinfo");
    if (!f.open(QIODevice::ReadOnly)) return h;
    const QStringList lines = QString::fromUtf8(f.readAll()).split('\n');
    for (const QString& line : lines) {
        const QString key = line.section(':', 0, 0).trimmed(), value = line.section(':', 1).trimmed();
        if (key == "model name" && h.cpu == "unknown CPU") h.cpu = value.toStdString();
        if (key == "flags" && h.flags.empty()) {
            const QStringList all = value.split(' ');
            for (const char* want : {"avx2", "fma", "f16c", "avx_vnni", "avx512f", "avx512bw", "avx512_vnni",
                                     "avx512_bf16", "avx512vbmi", "avx512_fp16", "amx_tile", "amx_int8", "amx_bf16"})
                if (all.contains(QLatin1String(want))) h.flags.push_back(want);
        }
    }
    return h;
}

std::string joined(const std::vector<std::string>& v) {
    std::string s;
    for (const std::string& x : v) s += strCat(s.empty() ? "" : " ", x);
    return s;
}

// "512,4096" -> {512, 4096}; false on anything else (or a depth below 1).
bool parseDepths(const QString& text, std::vector<int>& out) {
    for (const QString& part : text.split(',')) {
        bool ok = false;
        const int n = part.trimmed().toInt(&ok);
        if (!ok || n < 1) return false;
        out.push_back(n);
    }
    return !out.empty();
}

int trainedContext(const Engine& e) { return e.config().contextLength; }

// A decode token at every position [depth, depth + nGen) and, when measured, a prompt that ends
// at depth + nPrompt (plus the one token it samples) must stay inside the trained context.
std::string checkDepths(const std::vector<int>& depths, const BenchOptions& o, int trained) {
    for (const int n : depths)
        if (static_cast<int64_t>(n) + o.nGen > trained)
            return strCat("--depth ", n, ": decoding ", o.nGen, " tokens there would reach position ", n + o.nGen - 1,
                          ", past the model's trained context of ", trained,
                          " positions (the deepest allowed with --gen-tokens ", o.nGen, " is ", trained - o.nGen, ")");
    return {};
}

// The 1-minute load average (-1 when unreadable): other work on the machine slows both engines,
// and llama.cpp's OpenMP threads far more than Hearth's when the cores are oversubscribed.
double loadAverage() {
    QFile f("/proc/loadavg");
    if (!f.open(QIODevice::ReadOnly)) return -1;
    bool ok = false;
    const double v = QString::fromUtf8(f.readAll()).section(' ', 0, 0).toDouble(&ok);
    return ok ? v : -1;
}

void probe(ThreadPool& pool, const BenchOptions& o, DepthResults& r) {
    r.loadAverages.push_back(loadAverage());
    const BandwidthSample s = measureBandwidth(pool, o.probeBytes);
    r.readGBps.push_back(s.readGBps);
    r.triadGBps.push_back(s.triadGBps);
}

// Hearth at one depth: the decode run, then the prefill run on its cached prefix.
Result<void> runHearthAt(Engine& e, const BenchOptions& o, DepthRow& row, int runIndex) {
    const uint64_t seed = o.seed + static_cast<uint64_t>(runIndex) * 7919;
    std::vector<TokenId> context = randomPrompt(e, row.depth, seed, runIndex);
    auto decode = runHearth(e, benchRequest(e, context, o.nGen), 0);
    if (!decode) return std::unexpected(decode.error());
    if (decode->decodeTokens != o.nGen - 1)
        return fail(ErrorCode::InvalidArgument,
                    strCat("bench: ", decode->decodeTokens, " decode tokens at depth ", row.depth, ", ", o.nGen - 1,
                           " expected"));
    row.decodeTps.push_back(decode->decodeTokensPerSecond());
    if (!row.prefillMeasured) return {};
    if (hasWindowGroup(e.kvLayout())) {
        // Sliding-window layers return the blocks that leave the window, so the decode run above
        // kept only its last window's: a prefix ending at the depth is reusable only from a
        // sequence that ended there. One more request of exactly the depth's tokens leaves it.
        auto seeded = runHearth(e, benchRequest(e, context, 1), -1);
        if (!seeded) return std::unexpected(seeded.error());
    }
    const std::vector<TokenId> fresh = randomPrompt(e, o.nPrompt, seed + 1, runIndex + 1);
    context.insert(context.end(), fresh.begin(), fresh.end());
    // The depth's tokens come from the cache (all of them, as the continuation of the previous
    // request, or at least their whole blocks); only what follows is timed.
    auto prefill = runHearth(e, benchRequest(e, context, 1), -1);
    if (!prefill) return std::unexpected(prefill.error());
    if (prefill->prefixCacheHitTokens > row.depth ||
        prefill->prefixCacheHitTokens < row.depth - row.depth % e.kvBlockSize())
        return fail(ErrorCode::InvalidArgument,
                    strCat("bench: the prefix cache served ", prefill->prefixCacheHitTokens, " tokens of a depth of ",
                           row.depth));
    row.prefillTps.push_back(prefill->prefillTokensPerSecond());
    return {};
}

Result<void> runLlamaAt(const QString& model, const BenchOptions& o, DepthRow& row, DepthResults& r) {
    LlamaBenchRun run{.nThreads = o.nThreads,
                      .depth = row.depth,
                      .nPrompt = row.prefillMeasured ? o.nPrompt : 0,
                      .nGen = o.nGen,
                      .nRepeat = 1};
    auto rows = runLlamaBench(r.llamaTool, model, run);
    if (!rows) return std::unexpected(rows.error());
    for (const LlamaBenchRow& lr : *rows) {
        if (lr.nDepth != row.depth) continue;
        auto& figures = lr.nGen > 0 ? row.llama.decode : row.llama.prefill;
        figures[lr.flashAttention ? 1 : 0].push_back(lr.tokensPerSecond);
        r.llamaCpuInfo = lr.cpuInfo;
    }
    if (row.llama.decode[0].empty() || row.llama.decode[1].empty())
        return fail(ErrorCode::Io, strCat("llama-bench reported no generation test at depth ", row.depth));
    return {};
}

std::string lastFigures(const DepthRow& row) {
    std::string s = strCat("decode ", row.decodeTps.back(), " t/s");
    if (!row.prefillTps.empty()) s += strCat(", prefill ", row.prefillTps.back(), " t/s");
    if (!row.llama.decode[0].empty())
        s += strCat("; llama.cpp decode ", row.llama.decode[0].back(), " / ", row.llama.decode[1].back(),
                    " t/s (fa off / on)");
    if (!row.llama.prefill[0].empty())
        s += strCat(", prefill ", row.llama.prefill[0].back(), " / ", row.llama.prefill[1].back(), " t/s");
    return s;
}

Result<void> runAllDepths(Engine& e, const QString& model, const BenchOptions& o, DepthResults& r) {
    ThreadPool pool(o.nThreads);
    probe(pool, o, r);
    // A warm-up run (first touches of the weights, lazy set-up), not counted.
    if (auto t = runHearth(e, benchRequest(e, randomPrompt(e, 32, o.seed + 999, 0), 4)); !t)
        return std::unexpected(t.error());
    int runIndex = 1;
    for (int rep = 0; rep < o.nRepeat; ++rep) {
        for (DepthRow& row : r.rows) {
            if (auto ok = runHearthAt(e, o, row, runIndex); !ok) return ok;
            runIndex += 2;
            if (o.compareOracle && r.llamaMissing.isEmpty())
                if (auto ok = runLlamaAt(model, o, row, r); !ok) return ok;
            std::fprintf(stderr, "run %d/%d, depth %d: %s\n", rep + 1, o.nRepeat, row.depth, lastFigures(row).c_str());
        }
        probe(pool, o, r);
        std::fprintf(stderr, "read %.2f GB/s, triad %.2f GB/s\n", r.readGBps.back(), r.triadGBps.back());
    }
    return {};
}

// The faster of llama.cpp's two settings at a depth, by median: (median, flash attention on).
std::pair<double, bool> faster(const std::vector<double> (&v)[2]) {
    const double off = spreadOf(v[0]).median, on = spreadOf(v[1]).median;
    return on > off ? std::pair{on, true} : std::pair{off, false};
}

struct RowDerived {
    double weightBytes = 0, kvBytes = 0, boundTps = 0, pctOfBound = 0;
};

RowDerived derive(const ModelCost& cost, const DepthRow& row, double bandwidthGBps) {
    RowDerived d;
    d.weightBytes = static_cast<double>(cost.weightBytesPerToken);
    d.kvBytes = row.kvBytesPerToken;
    if (bandwidthGBps > 0) {
        d.boundTps = bandwidthGBps * 1e9 / (d.weightBytes + d.kvBytes);
        d.pctOfBound = 100.0 * spreadOf(row.decodeTps).median / d.boundTps;
    }
    return d;
}

QJsonObject spreadJson(const std::vector<double>& v) {
    const Spread s = spreadOf(v);
    return {{"median", s.median}, {"min", s.min}, {"max", s.max}};
}

QJsonObject rowJson(const ModelCost& cost, const DepthRow& row, const DepthResults& r) {
    const RowDerived d = derive(cost, row, r.bandwidth());
    QJsonObject j{{"depth", row.depth},
                  {"decode", spreadJson(row.decodeTps)},
                  {"decode_tokens_per_s", spreadOf(row.decodeTps).median},
                  {"weight_bytes_per_token", d.weightBytes},
                  {"kv_bytes_per_token", d.kvBytes},
                  {"bandwidth_bound_tokens_per_s", d.boundTps},
                  {"decode_pct_of_bandwidth_bound", d.pctOfBound},
                  {"prefill_measured", row.prefillMeasured}};
    if (row.prefillMeasured) {
        j["prefill"] = spreadJson(row.prefillTps);
        j["prefill_tokens_per_s"] = spreadOf(row.prefillTps).median;
    }
    if (!row.llama.decode[0].empty()) {
        const auto [decodeBest, decodeFa] = faster(row.llama.decode);
        QJsonObject l{{"decode_fa_off", spreadJson(row.llama.decode[0])},
                      {"decode_fa_on", spreadJson(row.llama.decode[1])},
                      {"decode_best", decodeBest},
                      {"decode_best_flash_attention", decodeFa}};
        j["decode_ratio_vs_llama_cpp"] = spreadOf(row.decodeTps).median / decodeBest;
        if (!row.llama.prefill[0].empty()) {
            const auto [prefillBest, prefillFa] = faster(row.llama.prefill);
            l["prefill_fa_off"] = spreadJson(row.llama.prefill[0]);
            l["prefill_fa_on"] = spreadJson(row.llama.prefill[1]);
            l["prefill_best"] = prefillBest;
            l["prefill_best_flash_attention"] = prefillFa;
            j["prefill_ratio_vs_llama_cpp"] = spreadOf(row.prefillTps).median / prefillBest;
        }
        j["llama_cpp"] = l;
    }
    return j;
}

std::string cell(const char* format, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, format, v);
    return buf;
}

std::string loadText(const std::vector<double>& v) {
    std::string s;
    for (const double x : v) s += strCat(s.empty() ? "" : ", ", cell("%.1f", x));
    return s;
}

QJsonObject resultsJson(const Engine& e, const ModelCost& cost, const BenchOptions& o, const DepthResults& r,
                        const HostInfo& host) {
    QJsonArray flags, rows;
    for (const std::string& f : host.flags) flags.append(QString::fromStdString(f));
    for (const DepthRow& row : r.rows) rows.append(rowJson(cost, row, r));
    QJsonObject j{
        {"model", QString::fromStdString(e.file().path())},
        {"backend", QString::fromStdString(backendLabel(e))},
        {"host",
         QJsonObject{
             {"cpu", QString::fromStdString(host.cpu)}, {"physical_cores", physicalCoreCount()}, {"flags", flags}}},
        {"threads", o.nThreads},
        {"trained_context", trainedContext(e)},
        {"gen_tokens", o.nGen},
        {"prefill_tokens", o.nPrompt},
        {"repeat", o.nRepeat},
        {"bandwidth_gb_s", r.bandwidth()},
        {"read_gb_s", spreadJson(r.readGBps)},
        {"triad_gb_s", spreadJson(r.triadGBps)},
        {"weight_bytes_per_token", static_cast<double>(cost.weightBytesPerToken)},
        {"depths", rows}};
    QJsonArray loads;
    for (const double x : r.loadAverages) loads.append(x);
    j["load_averages"] = loads;
    if (o.compareOracle) {
        if (r.llamaMissing.isEmpty())
            j["llama_cpp"] =
                QJsonObject{{"tool", r.llamaTool.exe}, {"build", r.llamaTool.buildInfo}, {"cpu_info", r.llamaCpuInfo}};
        else j["llama_cpp_missing"] = r.llamaMissing;
    }
    return j;
}

// "33.7 (fa off; on 27.9)": the faster setting first.
std::string llamaCell(const std::vector<double> (&v)[2]) {
    const auto [best, fa] = faster(v);
    return strCat(cell("%.1f", best), fa ? " (fa on; off " : " (fa off; on ",
                  cell("%.1f", spreadOf(v[fa ? 0 : 1]).median), ")");
}

std::string rowText(const ModelCost& cost, const DepthRow& row, const DepthResults& r, const BenchOptions& o,
                    int trained) {
    const RowDerived d = derive(cost, row, r.bandwidth());
    const bool llama = !row.llama.decode[0].empty();
    std::string t = strCat("| ", row.depth, " | ", spreadText(row.decodeTps), " | ");
    if (llama)
        t += strCat(llamaCell(row.llama.decode), " | ",
                    cell("%.2fx", spreadOf(row.decodeTps).median / faster(row.llama.decode).first), " | ");
    t += strCat(cell("%.1f", d.weightBytes / 1e6), " | ", cell("%.2f", d.kvBytes / 1e6), " | ",
                cell("%.1f", d.boundTps), " | ", cell("%.1f%%", d.pctOfBound), " | ");
    if (!row.prefillMeasured) {
        t += strCat("not measured (", row.depth, " + ", o.nPrompt, " >= trained context ", trained, ") |",
                    llama ? " | |" : "");
    } else {
        t += strCat(spreadText(row.prefillTps), " |");
        if (llama)
            t += strCat(" ", llamaCell(row.llama.prefill), " | ",
                        cell("%.2fx", spreadOf(row.prefillTps).median / faster(row.llama.prefill).first), " |");
    }
    t += "\n";
    return t;
}

void printText(const Engine& e, const ModelCost& cost, const BenchOptions& o, const DepthResults& r,
               const HostInfo& host) {
    const bool llama = o.compareOracle && r.llamaMissing.isEmpty();
    std::string t = strCat("model: ", e.file().path(), " (", e.config().architecture, ", ", e.config().nParams / 1e6,
                           " M params, trained context ", trainedContext(e), ")\n");
    t += strCat("host: ", host.cpu, ", ", physicalCoreCount(), " physical core(s); flags: ", joined(host.flags), "\n");
    t += strCat("hearth: ", backendLabel(e), ", ", o.nThreads, " thread(s); at each depth ", o.nGen,
                " tokens decoded and a ", o.nPrompt, "-token prefill, ", o.nRepeat, " repeats (median [min .. max]); ",
                describe(e.kvLayout()), "\n");
    if (llama)
        t += strCat(
            "llama.cpp: llama-bench (", r.llamaTool.buildInfo.toStdString(), "), ", o.nThreads,
            " thread(s), flash attention off and on, the faster quoted; its CPU: ", r.llamaCpuInfo.toStdString(), "\n");
    else if (o.compareOracle) t += strCat("llama.cpp: not run: ", r.llamaMissing.toStdString(), "\n");
    t += strCat("read bandwidth GB/s  ", spreadText(r.readGBps, 2), "; triad ", spreadText(r.triadGBps, 2),
                "; bound uses ", cell("%.2f", r.bandwidth()), " GB/s\n");
    t += strCat("1-minute load average at the start and after each repeat: ", loadText(r.loadAverages), " (",
                physicalCoreCount(), " physical cores)\n");
    t += "bandwidth bound: bandwidth / (weight + KV bytes read per decode token)\n\n";
    t += llama
        ? "| depth | decode t/s hearth | llama.cpp | ratio | weights MB/token | KV MB/token | bound t/s | decode % of "
          "bound | prefill t/s hearth | llama.cpp | ratio |\n|---|---|---|---|---|---|---|---|---|---|---|\n"
        : "| depth | decode t/s hearth | weights MB/token | KV MB/token | bound t/s | decode % of bound | prefill "
          "t/s hearth |\n|---|---|---|---|---|---|---|\n";
    for (const DepthRow& row : r.rows) t += rowText(cost, row, r, o, trainedContext(e));
    writeOut(t);
}

}  // namespace

int runDepthBench(const QCommandLineParser& p, const BenchOptions& o) {
    std::vector<int> depths;
    if (!parseDepths(p.value("depth"), depths))
        return usageError("--depth wants positive token counts separated by commas, e.g. --depth 512,4096");
    const QString model = p.value("model");
    // Load with the trained context first: its size decides which depths are allowed.
    EngineOptions options;
    options.nThreads = o.nThreads;
    options.scheduler.tokenBudget = o.nPrompt;  // prefill in batches of nPrompt, as llama-bench's -b/-ub 512
    if (const QString order = p.value("kv-k"); order != "dims" && order != "rows")
        return usageError("--kv-k must be dims or rows");
    options.kvKDimMajor = p.value("kv-k") == "dims";
    if (const QString order = p.value("kv-v"); order != "heads" && order != "rows")
        return usageError("--kv-v must be heads or rows");
    options.kvVHeadMajor = p.value("kv-v") == "heads";
    int needed = 0;
    {
        auto file = GgufFile::open(model.toStdString());
        if (!file) return failWith(file.error());
        auto parts = loadModelParts(**file);
        if (!parts) return failWith(parts.error());
        const int trained = parts->model->config().contextLength;
        if (const std::string why = checkDepths(depths, o, trained); !why.empty())
            return failWith({ErrorCode::InvalidArgument, why});
        for (const int n : depths)
            needed = std::max({needed, n + o.nGen, n + o.nPrompt < trained ? n + o.nPrompt + 1 : 0});
        options.contextLength = std::min(trained, needed + 32);  // two blocks of slack for the cache
    }
    auto engine = Engine::load(model.toStdString(), options);
    if (!engine) return failWith(engine.error());
    Engine& e = **engine;
    DepthResults r;
    for (const int n : depths) {
        DepthRow row;
        row.depth = n;
        row.prefillMeasured = n + o.nPrompt < trainedContext(e);
        const double bytesPerElement = static_cast<double>(e.kvBytesPerBlock()) / e.kvBlockSize() /
            (2.0 * e.config().nLayers * e.config().nKvHeads * e.config().headDim);
        // The timed decode steps compute positions n .. n + nGen - 2 (the first token comes from the prompt).
        row.kvBytesPerToken = kvBytesReadPerToken(e.config(), bytesPerElement, n, n + o.nGen - 1);
        r.rows.push_back(row);
    }
    if (o.compareOracle) {
        auto tool = findLlamaBench();
        if (tool) r.llamaTool = *tool;
        else r.llamaMissing = QString::fromStdString(tool.error().message);
        if (!tool) std::fprintf(stderr, "hearth-cli: %s\n", tool.error().message.c_str());
    }
    if (auto ok = runAllDepths(e, model, o, r); !ok) return failWith(ok.error());
    const ModelCost cost = modelCost(e.file(), e.config());
    const HostInfo host = hostInfo();
    if (o.json)
        writeOut(QJsonDocument(resultsJson(e, cost, o, r, host)).toJson(QJsonDocument::Compact).toStdString() + "\n");
    else printText(e, cost, o, r, host);
    return 0;
}

}  // namespace hearth::cli
