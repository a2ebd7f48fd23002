// hearth-gpu-bench: prefill and decode speed of the CUDA backend on synthetic models (speed
// does not depend on weight values), with decode as a share of the device read bandwidth
// measured in the same run: weight bytes per token / time per token / bandwidth.
//   hearth-gpu-bench --dir DIR [--type Q4_0] [--prefill 512] [--decode 32] [--write-only]
//                    [--no-kernels-alone] [--split-half SHAPE]... SHAPE...
//   hearth-gpu-bench --kernels-only [--type Q4_0]   (the mat-vec kernels alone, then exit)
// --split-half: the shape again with a device budget of half its weights (layer placement,
// engine/model/layer_placement.h): the layers that fit on the GPU, the rest on the CPU.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engine/kv/kv_cache.h"
#include "engine/model/gguf.h"
#include "engine/model/layer_placement.h"
#include "engine/model/model.h"
#include "engine/model/synth.h"
#include "kernels/backend.h"
#include "kernels/cuda/cuda_backend.h"

using namespace hearth;

namespace {

struct Options {
    std::string dir = "/tmp/hearth-gpu-bench";
    DType type = DType::Q4_0;
    int prefill = 512, decode = 32;
    bool writeOnly = false;
    bool kernelsAlone = true;  // --no-kernels-alone: skip timing the mat-vec kernels alone
    bool kernelsOnly = false;  // --kernels-only: only those (no models)
    std::vector<std::string> shapes, splitHalf;
};

double secondsSince(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The model file for a shape, written unless it is already there.
std::string modelPath(const Options& o, const SynthShape& shape) {
    const std::string path = o.dir + "/" + shape.name + "-" + dtypeInfo(o.type).name + ".gguf";
    if (!std::filesystem::exists(path)) {
        const auto t0 = std::chrono::steady_clock::now();
        if (auto r = writeSynthModel(shape, {.type = o.type, .seed = 1}, path + ".part"); !r) {
            std::fprintf(stderr, "%s: %s\n", shape.name.c_str(), r.error().message.c_str());
            return "";
        }
        std::filesystem::rename(path + ".part", path);
        std::printf("wrote %s (%.0f MB) in %.1f s\n", path.c_str(), synthTensorBytes(shape, o.type) / 1e6,
                    secondsSince(t0));
    }
    return path;
}

// Bytes of weights one decoded token reads: every matrix but the embedding table, which is
// read whole only when it doubles as the output projection.
double weightBytesPerToken(const GgufFile& file) {
    double bytes = 0;
    bool tied = file.findTensor("output.weight") == nullptr;
    for (const GgufTensorInfo& t : file.tensors())
        if (t.name != "token_embd.weight" || tied) bytes += static_cast<double>(t.nBytes);
    return bytes;
}

// Per decoded token: what the backend moved and launched (BackendCounters differences).
void printCounts(const char* shape, const char* what, const BackendCounters& a, const BackendCounters& b, double n) {
    std::printf("%s %s per token: %.1f uploads, %.0f bytes up, %.1f downloads, %.0f bytes down, %.1f copies, "
                "%.0f kernel launches, %.1f waits\n",
                shape, what, static_cast<double>(b.uploads - a.uploads) / n,
                static_cast<double>(b.bytesUp - a.bytesUp) / n, static_cast<double>(b.downloads - a.downloads) / n,
                static_cast<double>(b.bytesDown - a.bytesDown) / n, static_cast<double>(b.copies - a.copies) / n,
                static_cast<double>(b.launches - a.launches) / n, static_cast<double>(b.waits - a.waits) / n);
}

// A shape's model file (written if missing), loaded, and a CUDA backend; nullopt after printing why.
struct Loaded {
    std::unique_ptr<GgufFile> file;
    std::unique_ptr<Model> model;
    std::unique_ptr<Backend> backend;
};
std::optional<Loaded> load(const Options& o, const SynthShape& shape) {
    const std::string path = modelPath(o, shape);
    if (path.empty()) return std::nullopt;
    auto file = GgufFile::open(path);
    if (!file) return std::fprintf(stderr, "%s\n", file.error().message.c_str()), std::nullopt;
    auto model = Model::load(**file);
    if (!model) return std::fprintf(stderr, "%s\n", model.error().message.c_str()), std::nullopt;
    std::string why;
    auto backend = makeCudaBackend(&why);
    if (!backend) return std::fprintf(stderr, "no CUDA backend: %s\n", why.c_str()), std::nullopt;
    return Loaded{std::move(*file), std::move(*model), std::move(backend)};
}

// n prompt tokens, the same for every run.
std::vector<int32_t> benchPrompt(int n) {
    std::vector<int32_t> prompt(static_cast<size_t>(n));
    for (size_t i = 0; i < prompt.size(); ++i) prompt[i] = static_cast<int32_t>(3 + (i * 131) % 250);
    return prompt;
}

bool benchShape(const Options& o, const SynthShape& shape, double bandwidthGBs) {
    auto loaded = load(o, shape);
    if (!loaded) return false;
    const GgufFile* file = loaded->file.get();
    Model& m = *loaded->model;
    Backend* backend = loaded->backend.get();
    auto t0 = std::chrono::steady_clock::now();
    m.packWeights(*backend);  // every matrix into device memory, as the engine does at load
    std::printf("%s: weights uploaded in %.2f s\n", shape.name.c_str(), secondsSince(t0));
    const std::vector<int32_t> prompt = benchPrompt(o.prefill);
    const auto nVocab = static_cast<size_t>(m.config().nVocab);
    std::vector<float> logits(nVocab);
    constexpr int kBatch = 8;
    const int capacity = (kBatch + 1) * (o.prefill + o.decode + 16);
    KvCache cache(m.kvLayout(), capacity);
    cache.placeOn(backend);
    {  // warm-up: the first prompt and step size every scratch buffer and load the kernels' modules
        KvSequence seq;
        t0 = std::chrono::steady_clock::now();
        if (auto r = m.forward(*backend, cache, seq, prompt, logits); !r)
            return std::fprintf(stderr, "%s\n", r.error().message.c_str()), false;
        std::printf("%s: first prefill of %d tokens (cold: scratch growth, kernel modules loaded) %.1f ms\n",
                    shape.name.c_str(), o.prefill, secondsSince(t0) * 1e3);
        const int32_t token = 7;
        if (!m.forward(*backend, cache, seq, std::span(&token, 1), logits)) return false;
        cache.release(seq);
    }
    KvSequence seq;
    t0 = std::chrono::steady_clock::now();
    if (auto r = m.forward(*backend, cache, seq, prompt, logits); !r)
        return std::fprintf(stderr, "%s\n", r.error().message.c_str()), false;
    const double prefillS = secondsSince(t0);
    // Batch-1 decode call by call (HEARTH_CUDA_GRAPHS=0), then as graphs: two untimed steps
    // first (a key's first step runs, its second is captured), then the timed ones.
    int32_t next = 3;
    // What a step brings down: the logits row; the row's id chosen on the device (ForwardItem::ids),
    // as a greedy request gets; or its 40 first logits (ForwardItem::topK), as a request with the
    // default sampling (top-k 40) gets.
    enum class Out { Logits, GreedyId, Top40 } out = Out::Logits;
    int32_t id = 0;
    std::vector<Backend::TopEntry> top(40);
    const auto decode = [&](int n) {
        for (int i = 0; i < n; ++i, ++next) {
            const bool ids = out == Out::GreedyId, first = out == Out::Top40;
            const ForwardItem item{&seq,
                                   std::span(&next, 1),
                                   ids ? std::span<float>() : std::span(logits),
                                   0,
                                   {},
                                   ids ? std::span(&id, 1) : std::span<int32_t>(),
                                   first ? std::span(top) : std::span<Backend::TopEntry>(),
                                   first ? 40 : 0};
            if (!m.forward(*backend, cache, std::span(&item, 1))) return false;
        }
        return true;
    };
    const auto timedDecode = [&](const char* what, double& perToken) {
        if (!decode(2)) return false;
        const BackendCounters c0 = backend->counters();
        const auto start = std::chrono::steady_clock::now();
        if (!decode(o.decode)) return false;
        perToken = secondsSince(start) / o.decode;
        printCounts(shape.name.c_str(), what, c0, backend->counters(), o.decode);
        return true;
    };
    double perTokenNoGraph = 0, perToken = 0;
    setenv("HEARTH_CUDA_GRAPHS", "0", 1);
    if (!timedDecode("batch-1 decode, graphs off", perTokenNoGraph)) return false;
    unsetenv("HEARTH_CUDA_GRAPHS");
    if (!timedDecode("batch-1 decode, graphs on", perToken)) return false;
    std::printf("%s: batch-1 decode %.1f tok/s with graphs, %.1f without (%.2fx)\n", shape.name.c_str(),
                1.0 / perToken, 1.0 / perTokenNoGraph, perTokenNoGraph / perToken);
    double perTokenIds = 0, perTokenTop = 0;
    out = Out::GreedyId;
    if (!timedDecode("batch-1 decode, graphs on, greedy ids", perTokenIds)) return false;
    out = Out::Top40;
    if (!timedDecode("batch-1 decode, graphs on, top 40 logits", perTokenTop)) return false;
    out = Out::Logits;
    std::printf(
        "RESULT %-15s %s: batch-1 greedy decode with the id chosen on the GPU %.1f tok/s (%.2f ms/tok); with the "
        "40 first logits chosen there (top-k sampling) %.1f tok/s (%.2f ms/tok); the logits row brought down: "
        "%.1f tok/s\n",
        shape.name.c_str(), dtypeInfo(o.type).name, 1.0 / perTokenIds, perTokenIds * 1e3, 1.0 / perTokenTop,
        perTokenTop * 1e3, 1.0 / perToken);
    const double bytes = weightBytesPerToken(*file);
    const double gbs = bytes / perToken / 1e9;
    std::printf(
        "RESULT %-15s %s: prefill %d tok %.1f tok/s | decode %.1f tok/s (%.2f ms/tok), %.0f MB weights/tok = "
        "%.0f GB/s = %.1f%% of read bandwidth %.0f GB/s\n",
        shape.name.c_str(), dtypeInfo(o.type).name, o.prefill, o.prefill / prefillS, 1.0 / perToken, perToken * 1e3,
        bytes / 1e6, gbs, 100.0 * gbs / bandwidthGBs, bandwidthGBs);
    std::fflush(stdout);
    // Batch 8: eight sequences (short prompts) decoding together, one row each per step.
    KvSequence seqs[kBatch];
    std::vector<std::vector<float>> rows(kBatch, std::vector<float>(nVocab));
    for (int s = 0; s < kBatch; ++s) {
        std::vector<int32_t> p(64);
        for (size_t i = 0; i < p.size(); ++i) p[i] = static_cast<int32_t>(5 + (i * 17 + s * 29) % 250);
        if (!m.forward(*backend, cache, seqs[s], p, rows[static_cast<size_t>(s)])) return false;
    }
    std::vector<int32_t> tokens(kBatch);
    BackendCounters c0 = backend->counters();
    for (int i = -2; i < o.decode; ++i) {  // two untimed steps first, as for batch 1
        if (i == 0) c0 = backend->counters(), t0 = std::chrono::steady_clock::now();
        std::vector<ForwardItem> items;
        for (int s = 0; s < kBatch; ++s) {
            tokens[static_cast<size_t>(s)] = 3 + (i + 2 + s) % 250;
            items.push_back({&seqs[s], std::span(&tokens[static_cast<size_t>(s)], 1), rows[static_cast<size_t>(s)]});
        }
        if (auto r = m.forward(*backend, cache, items); !r)  // reserves, runs one pass, advances each
            return std::fprintf(stderr, "%s\n", r.error().message.c_str()), false;
    }
    const double perStep = secondsSince(t0) / o.decode;
    printCounts(shape.name.c_str(), "batch-8 decode", c0, backend->counters(), o.decode * kBatch);
    std::printf("RESULT %-15s %s: batch-8 decode %.1f tok/s aggregate (%.2f ms/step) = %.2fx batch 1\n",
                shape.name.c_str(), dtypeInfo(o.type).name, kBatch / perStep, perStep * 1e3,
                (kBatch / perStep) * perToken);
    std::fflush(stdout);
    return true;
}

// The shape placed on a budget of half its weights: the split, prefill (128 tokens) and batch-1
// decode speed.
bool benchSplit(const Options& o, const SynthShape& shape) {
    auto loaded = load(o, shape);
    if (!loaded) return false;
    const GgufFile* file = loaded->file.get();
    Model& m = *loaded->model;
    Backend* backend = loaded->backend.get();
    auto cpu = makeBestCpuBackend();
    const int prefill = 128, context = prefill + o.decode + 16;
    const KvLayout layout = m.kvLayout();
    const size_t budget = static_cast<size_t>(weightBytesPerToken(*file) / 2);
    const LayerPlacement plan = planLayerPlacement(*file, m.config(), layout, context, budget);
    std::printf("%s split at half its weights (%zu MiB): %s, %zu MiB on the device, the rest on %s\n",
                shape.name.c_str(), budget >> 20, plan.describe().c_str(), plan.deviceBytes >> 20, cpu->name().c_str());
    if (plan.onDevice == 0 || plan.all()) return true;
    m.splitLayers(cpu.get(), plan.onDevice);
    auto t0 = std::chrono::steady_clock::now();
    m.packWeights(*backend);
    m.packWeights(*cpu);
    std::printf("%s: weights placed in %.2f s\n", shape.name.c_str(), secondsSince(t0));
    KvCache cache(layout, context);
    cache.placeOn(backend, plan.onDevice);
    KvSequence seq;
    const std::vector<int32_t> prompt = benchPrompt(prefill);
    std::vector<float> logits(static_cast<size_t>(m.config().nVocab));
    t0 = std::chrono::steady_clock::now();
    if (auto r = m.forward(*backend, cache, seq, prompt, logits); !r)
        return std::fprintf(stderr, "%s\n", r.error().message.c_str()), false;
    const double prefillS = secondsSince(t0);  // the first prompt: cold
    int32_t next = 3;
    for (int i = 0; i < 2; ++i, ++next)
        if (!m.forward(*backend, cache, seq, std::span(&next, 1), logits)) return false;
    const BackendCounters c0 = backend->counters();
    t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < o.decode; ++i, ++next)
        if (!m.forward(*backend, cache, seq, std::span(&next, 1), logits)) return false;
    const double perToken = secondsSince(t0) / o.decode;
    printCounts(shape.name.c_str(), "split batch-1 decode", c0, backend->counters(), o.decode);
    std::printf("RESULT %-15s %s: split %s: prefill %d tok (cold) %.1f tok/s | decode %.1f tok/s (%.2f ms/tok)\n",
                shape.name.c_str(), dtypeInfo(o.type).name, plan.describe().c_str(), prefill, prefill / prefillS,
                1.0 / perToken, perToken * 1e3);
    std::fflush(stdout);
    return true;
}

bool parse(int argc, char** argv, Options& o) {
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        const bool hasValue = i + 1 < argc;
        if (a == "--dir" && hasValue) o.dir = argv[++i];
        else if (a == "--prefill" && hasValue) o.prefill = std::atoi(argv[++i]);
        else if (a == "--decode" && hasValue) o.decode = std::atoi(argv[++i]);
        else if (a == "--write-only") o.writeOnly = true;
        else if (a == "--no-kernels-alone") o.kernelsAlone = false;
        else if (a == "--kernels-only") o.kernelsOnly = true;
        else if (a == "--split-half" && hasValue) o.splitHalf.push_back(argv[++i]);
        else if (a == "--type" && hasValue) {
            const std::string t = argv[++i];
            bool found = false;
            for (uint32_t id = 0; id < 64 && !found; ++id)
                if (dtypeInfo(id).name != nullptr && t == dtypeInfo(id).name && isWeightType(static_cast<DType>(id))) {
                    o.type = static_cast<DType>(id);
                    found = true;
                }
            if (!found) return std::fprintf(stderr, "unknown weight type %s\n", t.c_str()), false;
        } else if (!a.empty() && a[0] != '-') o.shapes.push_back(a);
        else return std::fprintf(stderr, "unknown option %s\n", a.c_str()), false;
    }
    if (o.prefill < 16 || o.decode < 1 || (o.shapes.empty() && !o.kernelsOnly))
        return std::fprintf(stderr,
                            "usage: hearth-gpu-bench --dir DIR [--type T] [--prefill N>=16] [--decode N] "
                            "[--write-only] [--no-kernels-alone] [--split-half SHAPE]... SHAPE...\n"
                            "       hearth-gpu-bench --kernels-only [--type T]\n"),
               false;
    return true;
}

// The decode mat-vec kernels alone on the 8B shape's matrices (weights already on the device,
// no host round trips), and the decode speed they would allow for that model: how far the
// kernels are from the bandwidth, apart from the interface's cost.
void matvecAlone(DType type, double bandwidthGBs) {
    struct Matrix {
        long long rows, cols;
        int perModel;  // how many a token multiplies: 32 layers, and the output once
    };
    const Matrix matrices[] = {
        {4096, 4096, 64}, {1024, 4096, 64}, {14336, 4096, 64}, {4096, 14336, 32}, {128256, 4096, 1}};
    double seconds = 0, bytes = 0;
    for (const Matrix& m : matrices) {
        std::string why;
        const double gbs = measureCudaMatvec(static_cast<int>(type), m.rows, m.cols, &why);
        if (gbs <= 0) return (void)std::printf("mat-vec kernels alone: %s\n", why.c_str());
        const double b = static_cast<double>(rowBytes(type, m.cols)) * static_cast<double>(m.rows);
        std::printf("mat-vec kernels alone, %s %lldx%lld: %.0f GB/s = %.1f%% of read bandwidth\n", dtypeInfo(type).name,
                    m.rows, m.cols, gbs, 100.0 * gbs / bandwidthGBs);
        seconds += m.perModel * b / (gbs * 1e9);
        bytes += m.perModel * b;
    }
    std::printf("llama-8b decode bound by these kernels alone: %.0f tok/s (%.2f ms/tok, %.1f%% of read bandwidth)\n",
                1.0 / seconds, seconds * 1e3, 100.0 * bytes / seconds / 1e9 / bandwidthGBs);
}

}  // namespace

int main(int argc, char** argv) {
    Options o;
    if (!parse(argc, argv, o)) return 2;
    std::filesystem::create_directories(o.dir);
    double bandwidth = 0;
    if (!o.writeOnly) {
        std::string why;
        bandwidth = measureCudaReadBandwidth(size_t{4} << 30, &why);
        if (bandwidth <= 0) return std::fprintf(stderr, "no CUDA device: %s\n", why.c_str()), 1;
        std::printf("device read bandwidth (4 GiB streaming read): %.0f GB/s\n", bandwidth);
        if (o.kernelsAlone || o.kernelsOnly) matvecAlone(o.type, bandwidth);
        if (o.kernelsOnly) return 0;
    }
    int failures = 0;
    for (const std::string& name : o.shapes) {
        auto shape = findSynthShape(name);
        if (!shape) {
            std::fprintf(stderr, "%s\n", shape.error().message.c_str());
            ++failures;
            continue;
        }
        const bool ok = o.writeOnly ? !modelPath(o, *shape).empty() : benchShape(o, *shape, bandwidth);
        if (!ok) ++failures;
    }
    for (const std::string& name : o.writeOnly ? std::vector<std::string>{} : o.splitHalf) {
        auto shape = findSynthShape(name);
        if (!shape || !benchSplit(o, *shape)) ++failures;
    }
    return failures == 0 ? 0 : 1;
}
