// Where a decode step's time goes, operator by operator (not a test): loads MODEL, prefills a
// PROMPT-token prompt (default 512) on the best CPU backend with THREADS threads, then decodes
// STEPS tokens (default 64) through a backend that times each call it forwards, and prints
// each operator's share of the decode time, the matrix products split by weight shape, and
// the time spent outside the backend (the model's own code between calls).
//   decode_profile MODEL [THREADS] [PROMPT] [STEPS]
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
        const bool matmul = w != nullptr && std::string_view(op) == "matmul";
        auto& b =
            buckets[matmul ? strCat(op, " ", dtypeInfo(w->type).name, " ", w->nRows, "x", w->nCols) : std::string(op)];
        b.first += seconds;
        ++b.second;
    }
};

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: decode_profile MODEL [THREADS] [PROMPT] [STEPS]\n");
        return 2;
    }
    const int threads = argc > 2 ? std::atoi(argv[2]) : 0;
    const int nPrompt = argc > 3 ? std::atoi(argv[3]) : 512, nSteps = argc > 4 ? std::atoi(argv[4]) : 64;
    auto file = GgufFile::open(argv[1]);
    if (!file) return std::fprintf(stderr, "%s\n", file.error().message.c_str()), 1;
    auto model = Model::load(**file);
    if (!model) return std::fprintf(stderr, "%s\n", model.error().message.c_str()), 1;
    Model& m = **model;
    auto cpu = makeBestCpuBackend(threads);
    TimingBackend backend(*cpu);
    KvCache cache(m.kvLayout(), nPrompt + nSteps + 16);
    KvSequence seq;
    std::vector<float> logits(static_cast<size_t>(m.config().nVocab));
    std::vector<int32_t> prompt;
    for (int i = 0; i < nPrompt; ++i) prompt.push_back(3 + (i * 7919) % (m.config().nVocab - 3));
    if (!m.forward(backend, cache, seq, prompt, logits)) return std::fprintf(stderr, "prefill failed\n"), 1;
    backend.on = true;
    const auto t0 = Clock::now();
    int32_t token = 5;
    for (int s = 0; s < nSteps; ++s) {
        if (!m.forward(backend, cache, seq, std::span(&token, 1), logits))
            return std::fprintf(stderr, "decode failed\n"), 1;
        token = static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
    }
    const double total = std::chrono::duration<double>(Clock::now() - t0).count();
    std::vector<std::pair<double, std::string>> rows;
    double inBackend = 0;
    for (const auto& [k, v] : backend.buckets) {
        rows.push_back({v.first, k});
        inBackend += v.first;
    }
    std::sort(rows.rbegin(), rows.rend());
    std::printf("%s on %s: %d decode steps after a %d-token prompt, %.2f ms per token (%.1f t/s)\n", argv[1],
                cpu->name().c_str(), nSteps, nPrompt, 1e3 * total / nSteps, nSteps / total);
    for (const auto& [sec, k] : rows)
        std::printf("  %-28s %7.3f ms/token  %5.1f%%  (%lld calls/token)\n", k.c_str(), 1e3 * sec / nSteps,
                    100 * sec / total, static_cast<long long>(backend.buckets[k].second / nSteps));
    std::printf("  %-28s %7.3f ms/token  %5.1f%%\n", "outside the backend", 1e3 * (total - inBackend) / nSteps,
                100 * (total - inBackend) / total);
    return 0;
}
