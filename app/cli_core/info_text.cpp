// Formats backend and model facts for people.
#include "app/cli_core/info_text.h"

#include <map>
#include <utility>
#include <vector>

#include "app/cli_core/model_facts.h"
#include "app/cli_core/text.h"
#include "engine/engine.h"
#include "engine/model/gguf.h"
#include "engine/str_cat.h"
#include "kernels/backend.h"
#include "kernels/cpu/cpu_features.h"

namespace hearth::cli::core {

namespace {

std::string joined(const std::vector<std::string>& items, const char* separator) {
    std::string out;
    for (size_t i = 0; i < items.size(); ++i) out += (i ? separator : "") + items[i];
    return out;
}

}  // namespace

std::string backendsText() {
    std::string out = "Compute backends:\n";
    for (const BackendInfo& b : listBackends())
        out +=
            "  " + b.name + ": " + (b.available ? std::string("available") : "unavailable (" + b.reason + ")") + "\n";
    return out;
}

std::string cpuText() {
    const CpuFeatures& f = cpuFeatures();
    std::vector<std::string> found;
    const std::pair<bool, const char*> flags[] = {
        {f.avx2, "AVX2"},         {f.fma, "FMA"},           {f.f16c, "F16C"},
        {f.avxVnni, "AVX-VNNI"},  {f.avx512f, "AVX-512F"},  {f.avx512bw && f.avx512vl, "AVX512BW+VL"},
        {f.avx512Vnni, "AVX512_VNNI"}};
    for (const auto& [on, name] : flags)
        if (on) found.emplace_back(name);
    std::string out = "CPU:\n  detected: " +
        (found.empty() ? std::string("no AVX2, FMA, F16C, AVX-VNNI or AVX-512") : joined(found, " ")) +
        "; the OS saves " +
        (f.osSavesZmm       ? "YMM and ZMM registers"
             : f.osSavesYmm ? "YMM registers (not ZMM)"
                            : "no AVX registers") +
        "\n";
    if (f.amxListed)
        out += f.amxOsEnabled ? "  AMX: listed by the CPU, tile state enabled in XCR0: not used (no AMX kernels)\n"
                              : "  AMX: listed by the CPU but not enabled by the OS: not used\n";
    std::vector<std::string> levels;
    for (CpuLevel l : kCpuLevels)
        if (hostRuns(l)) levels.emplace_back(cpuLevelName(l));
    out += "  levels this CPU runs: " + joined(levels, " ") + "\n";
    if (f.vnniNeedsEvex())
        out += "  VNNI: AVX512_VNNI only (no AVX-VNNI): the EVEX builds of the VNNI kernels\n";
    const CpuLevelChoice c = cpuLevelChoice();
    out += std::string("  kernels used: ") + cpuLevelName(c.used) + " (" + c.why + ")\n";
    if (c.used == CpuLevel::Reference)
        out += "  note: the reference kernels are several times slower than the AVX2 ones\n";
    return out;
}

std::string modelFileText(const ModelFacts& m) {
    return strCat(
        "Model: ", m.name, "\n  file: ", m.path, "\n  architecture: ", m.architecture, " (family ", m.family,
        ")\n  parameters: ", formatParams(m.nParams), " (", m.nParams, ")\n  quantization: ", m.quantization,
        "\n  trained context: ", m.contextLength, " tokens\n  chat format: ", m.chatFormat,
        m.chatTuned ? "" : "\n  base model: not tuned for chat (it continues text rather than answering)", "\n  ",
        m.unsupported.empty() ? std::string("Hearth runs it") : "Hearth cannot run it: " + m.unsupported, "\n");
}

std::string modelInfoText(const Engine& e) {
    const ModelConfig& c = e.config();
    std::map<std::string, int> typeCounts;
    for (const GgufTensorInfo& t : e.file().tensors()) typeCounts[dtypeInfo(t.type).name]++;
    std::string types;
    for (const auto& [name, n] : typeCounts) types += strCat(types.empty() ? "" : ", ", name, " x", n);
    const Tokenizer& tok = e.tokenizer();
    return strCat(
        "  layers: ", c.nLayers, ", embedding: ", c.nEmbd, ", heads: ", c.nHeads, " (KV heads: ", c.nKvHeads,
        "), head size: ", c.headDim, ", feed-forward: ", c.nFf, "\n  tensor types: ", types,
        "\n  context length used: ", e.contextLength(), "\n  vocabulary: ", tok.nVocab(), " tokens (",
        tok.kind() == VocabKind::SentencePiece ? "SentencePiece" : "byte-level BPE", "), BOS ", tok.bos(), ", EOS ",
        tok.eos(), "\n",
        e.chatFormat().isFallback() ? strCat("  chat format fallback: ", e.chatFormat().fallbackReason(), "\n")
                                    : std::string(),
        "  backend: ", e.backendName(), e.backendNote().empty() ? std::string() : strCat(" (", e.backendNote(), ")"),
        "\n  forward pass: ", c.features, "\n");
}

}  // namespace hearth::cli::core
