// A whole forward pass on CUDA vs the CPU reference: synthetic Llama- and Gemma 3-shaped
// models (engine/model/synth.h) in several weight types, a 20-token prefill (cuBLAS) then
// token-by-token decode (dp4a mat-vec); logits within 3e-2 of the reference's largest logit
// and the same top token. Skips (77) without a CUDA device.
#include <filesystem>
#include <span>

#include "engine/kv/kv_cache.h"
#include "engine/model/gguf.h"
#include "engine/model/model.h"
#include "engine/model/synth.h"
#include "tests/gpu/gpu_check.h"

using namespace hearth;
using namespace hearth::gpu_test;

namespace {

int argmax(const std::vector<float>& v) {
    return static_cast<int>(std::max_element(v.begin(), v.end()) - v.begin());
}

// Logits after each step: the prefill, then each decoded token (fed the reference's choice).
std::vector<std::vector<float>> run(Model& model, Backend& backend, const std::vector<int32_t>& prompt, int nDecode,
                                    const std::vector<int32_t>& decodeTokens) {
    KvCache cache(model.kvLayout(), 256);
    KvSequence seq;
    std::vector<std::vector<float>> out;
    std::vector<float> logits(static_cast<size_t>(model.config().nVocab));
    if (!model.forward(backend, cache, seq, prompt, logits)) return {};
    out.push_back(logits);
    for (int i = 0; i < nDecode; ++i) {
        const int32_t token = decodeTokens[static_cast<size_t>(i)];
        if (!model.forward(backend, cache, seq, std::span(&token, 1), logits)) return {};
        out.push_back(logits);
    }
    return out;
}

// A fresh CUDA backend per model: its weight cache is keyed by host pointers into this file.
void checkModel(const std::string& shapeName, DType type, Backend& cpu, Checks& c) {
    const std::string label = shapeName + " " + dtypeInfo(type).name;
    auto shape = findSynthShape(shapeName);
    const auto path = std::filesystem::temp_directory_path() / ("hearth-gpu-forward-" + shapeName + ".gguf");
    if (!shape || !writeSynthModel(*shape, {type, 3}, path.string())) return c.expect(false, label + ": writing the model");
    auto file = GgufFile::open(path.string());
    auto model = file ? Model::load(**file) : Result<std::unique_ptr<Model>>(std::unexpected(file.error()));
    if (!model) return c.expect(false, label + ": loading the model: " + model.error().message);
    std::vector<int32_t> prompt;
    for (int i = 0; i < 20; ++i) prompt.push_back(3 + (i * 37) % 250);
    const std::vector<int32_t> decode{5, 77, 140, 9};
    const auto want = run(**model, cpu, prompt, 4, decode);
    auto gpu = makeCudaBackend(nullptr);
    if (!gpu) return c.expect(false, label + ": creating a CUDA backend");
    const auto got = run(**model, *gpu, prompt, 4, decode);
    c.expect(!want.empty() && got.size() == want.size(), label + ": both forwards ran");
    for (size_t step = 0; step < std::min(want.size(), got.size()); ++step) {
        const std::string what = label + (step == 0 ? ": prefill" : ": decode step " + std::to_string(step));
        c.expect(relativeError(got[step], want[step]) < 3e-2, describeError(what, relativeError(got[step], want[step]), 3e-2));
        c.expect(argmax(got[step]) == argmax(want[step]), what + ": same top token");
    }
    std::filesystem::remove(path);
}

}  // namespace

int main() {
    if (!cudaOrSkip()) return noDeviceExit();
    auto cpu = makeCpuReferenceBackend();
    Checks c;
    try {
        for (DType t : {DType::F32, DType::Q4_0, DType::Q4_K, DType::Q6_K}) checkModel("tiny", t, *cpu, c);
        for (DType t : {DType::F16, DType::Q8_0, DType::Q5_K}) checkModel("tiny-gemma3", t, *cpu, c);
    } catch (const std::exception& e) {
        c.expect(false, std::string("exception: ") + e.what());
    }
    return c.exitCode();
}
