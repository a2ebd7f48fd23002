// Where a decode step's time goes, operator by operator (not a test): loads MODEL, prefills a
// PROMPT-token prompt (default 512) on the best CPU backend with THREADS threads, then decodes
// STEPS tokens (default 64) through a backend that times each call it forwards (the weights
// repacked by the backend first, as the engine loads them), and prints
// each operator's share of the decode time, the matrix products split by weight shape, and
// the time spent outside the backend (the model's own code between calls). PROMPT may list
// several depths (512,4096,8064): each is profiled in turn on a fresh sequence, and a last
// table gives attention's share of the step at each depth. SEQS (default 1) sequences decode
// together, one row each per step, as continuous batching runs them (each with its own prompt of
// PROMPT tokens): the times are then per step, and a step makes SEQS tokens.
//   decode_profile MODEL [THREADS] [PROMPT[,PROMPT...]] [STEPS] [SEQS]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/kv/kv_cache.h"
#include "engine/str_cat.h"
#include "engine/model/gguf.h"
#include "engine/model/model.h"
#include "kernels/backend.h"
#include "tests/support/forwarding_backend.h"

using namespace hearth;

namespace {

using Clock = std::chrono::steady_clock;

// Forwards every call and, while on, adds its wall time to a named bucket (matrix products
// by weight type and shape).
class TimingBackend final : public test::ForwardingBackend {
public:
    using ForwardingBackend::ForwardingBackend;
    bool on = false;
    std::map<std::string, std::pair<double, int64_t>> buckets;  // name -> (seconds, calls)

protected:
    void run(const char* op, const WeightView* w, const std::function<void()>& call) override {
        if (!on) return call();
        const auto t0 = Clock::now();
        call();
        const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
        const bool matmul = w != nullptr && std::string_view(op).starts_with("matmul");
        auto& b =
            buckets[matmul ? strCat(op, " ", dtypeInfo(w->type).name, " ", w->nRows, "x", w->nCols) : std::string(op)];
        b.first += seconds;
        ++b.second;
    }
};

struct DepthProfile {
    int depth = 0;
    double msPerToken = 0, attentionMs = 0;
};

// Prefills depth tokens (in pieces of 512, as the engine's scheduler would), then times nSteps
// decode steps and prints where their time went.
bool profileDepth(Model& m, Backend& cpu, int depth, int nSteps, int nSeqs, const char* path, DepthProfile& out) {
    TimingBackend backend(cpu);
    KvLayout layout = m.kvLayout();
    layout.kDimMajor = cpu.prefersDimMajorK() && layout.blockSize % 8 == 0;  // as Engine::load lays it out
    if (cpu.prefersHeadMajorV()) layout.vHeadDim = m.config().headDim;
    KvCache cache(layout, nSeqs * (depth + nSteps + 16));
    std::vector<KvSequence> seqs(static_cast<size_t>(nSeqs));
    const size_t nVocab = static_cast<size_t>(m.config().nVocab);
    std::vector<float> logits(nVocab * static_cast<size_t>(nSeqs));
    for (int q = 0; q < nSeqs; ++q) {
        std::vector<int32_t> prompt;
        for (int i = 0; i < depth; ++i) prompt.push_back(3 + (i * 7919 + q * 104729) % (m.config().nVocab - 3));
        for (int from = 0; from < depth; from += 512) {
            const auto piece = std::span(prompt).subspan(static_cast<size_t>(from),
                                                         static_cast<size_t>(std::min(512, depth - from)));
            if (!m.forward(backend, cache, seqs[static_cast<size_t>(q)], piece,
                           std::span(logits).subspan(0, nVocab)))
                return std::fprintf(stderr, "prefill failed\n"), false;
        }
    }
    backend.on = true;
    const auto t0 = Clock::now();
    std::vector<int32_t> tokens(static_cast<size_t>(nSeqs), 5);
    std::vector<ForwardItem> items(static_cast<size_t>(nSeqs));
    for (int s = 0; s < nSteps; ++s) {
        for (size_t q = 0; q < items.size(); ++q)
            items[q] = {&seqs[q], std::span(&tokens[q], 1), std::span(logits).subspan(q * nVocab, nVocab)};
        if (!m.forward(backend, cache, items)) return std::fprintf(stderr, "decode failed\n"), false;
        for (size_t q = 0; q < items.size(); ++q) {
            const auto row = std::span(logits).subspan(q * nVocab, nVocab);
            tokens[q] = static_cast<int32_t>(std::max_element(row.begin(), row.end()) - row.begin());
        }
    }
    const double total = std::chrono::duration<double>(Clock::now() - t0).count();
    std::vector<std::pair<double, std::string>> rows;
    double inBackend = 0;
    for (const auto& [k, v] : backend.buckets) {
        rows.push_back({v.first, k});
        inBackend += v.first;
    }
    std::sort(rows.rbegin(), rows.rend());
    std::printf("%s on %s: %d decode steps of %d sequence(s) after a %d-token prompt, %.2f ms per step (%.1f t/s)\n",
                path, cpu.name().c_str(), nSteps, nSeqs, depth, 1e3 * total / nSteps, nSeqs * nSteps / total);
    for (const auto& [sec, k] : rows)
        std::printf("  %-28s %7.3f ms/step  %5.1f%%  (%lld calls/step)\n", k.c_str(), 1e3 * sec / nSteps,
                    100 * sec / total, static_cast<long long>(backend.buckets[k].second / nSteps));
    std::printf("  %-28s %7.3f ms/step  %5.1f%%\n", "outside the backend", 1e3 * (total - inBackend) / nSteps,
                100 * (total - inBackend) / total);
    out = {depth, 1e3 * total / nSteps, 1e3 * backend.buckets["attention"].first / nSteps};
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: decode_profile MODEL [THREADS] [PROMPT[,PROMPT...]] [STEPS] [SEQS]\n");
        return 2;
    }
    const int threads = argc > 2 ? std::atoi(argv[2]) : 0;
    const int nSteps = argc > 4 ? std::atoi(argv[4]) : 64;
    std::vector<int> depths;
    for (std::string_view rest = argc > 3 ? argv[3] : "512"; !rest.empty();) {
        const size_t comma = rest.find(',');
        const int d = std::atoi(std::string(rest.substr(0, comma)).c_str());
        if (d < 1) return std::fprintf(stderr, "PROMPT: positive token counts separated by commas\n"), 2;
        depths.push_back(d);
        rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    }
    const int nSeqs = argc > 5 ? std::atoi(argv[5]) : 1;
    if (nSteps < 1) return std::fprintf(stderr, "STEPS must be positive\n"), 2;
    if (nSeqs < 1 || nSeqs > 64) return std::fprintf(stderr, "SEQS: 1 to 64\n"), 2;
    auto file = GgufFile::open(argv[1]);
    if (!file) return std::fprintf(stderr, "%s\n", file.error().message.c_str()), 1;
    auto model = Model::load(**file);
    if (!model) return std::fprintf(stderr, "%s\n", model.error().message.c_str()), 1;
    Model& m = **model;
    for (const int d : depths)
        if (d + nSteps > m.config().contextLength)
            return std::fprintf(stderr, "depth %d + %d steps passes the trained context (%d)\n", d, nSteps,
                                m.config().contextLength),
                   2;
    auto cpu = makeBestCpuBackend(threads);
    // The weights repacked by the backend, as Engine::load does (HEARTH_REPACK=0 keeps the file's
    // layout): without this the matrices ran the file layout's slower tiles, not the engine's.
    const size_t packed = m.packWeights(*cpu, {});
    std::printf("weights repacked by the backend: %.1f MB\n", static_cast<double>(packed) / 1e6);
    std::vector<DepthProfile> profiles;
    for (const int d : depths) {
        DepthProfile p;
        if (!profileDepth(m, *cpu, d, nSteps, nSeqs, argv[1], p)) return 1;
        profiles.push_back(p);
    }
    std::printf("attention's share of a decode step by depth:\n  %8s %12s %16s %8s\n", "depth", "ms/step",
                "attention ms", "share");
    for (const DepthProfile& p : profiles)
        std::printf("  %8d %12.3f %16.3f %7.1f%%\n", p.depth, p.msPerToken, p.attentionMs,
                    p.msPerToken > 0 ? 100 * p.attentionMs / p.msPerToken : 0.0);
    return 0;
}
