// Formats backend and model facts for people.
#include "app/cli/info_text.h"

#include <map>

#include "app/common/model_info.h"
#include "engine/engine.h"
#include "engine/model/gguf.h"
#include "kernels/backend.h"
#include "kernels/cpu/cpu_features.h"

#include <QStringList>
#include <utility>

namespace hearth {

QString backendsText() {
    QString out = QStringLiteral("Compute backends:\n");
    for (const BackendInfo& b : listBackends())
        out += QStringLiteral("  %1: %2\n")
                   .arg(QString::fromStdString(b.name),
                        b.available ? QStringLiteral("available")
                                    : "unavailable (" + QString::fromStdString(b.reason) + ")");
    return out;
}

QString cpuText() {
    const CpuFeatures& f = cpuFeatures();
    QStringList found;
    const std::pair<bool, const char*> flags[] = {
        {f.avx2, "AVX2"}, {f.fma, "FMA"}, {f.f16c, "F16C"}, {f.avxVnni, "AVX-VNNI"}, {f.avx512f, "AVX-512F"}};
    for (const auto& [on, name] : flags)
        if (on) found << QString::fromLatin1(name);
    QString out =
        QStringLiteral("CPU:\n  detected: %1; the OS saves %2\n")
            .arg(found.isEmpty() ? QStringLiteral("no AVX2, FMA, F16C, AVX-VNNI or AVX-512F") : found.join(' '),
                 f.osSavesZmm       ? QStringLiteral("YMM and ZMM registers")
                     : f.osSavesYmm ? QStringLiteral("YMM registers (not ZMM)")
                                    : QStringLiteral("no AVX registers"));
    if (f.amxListed)
        out += f.amxOsEnabled
            ? QStringLiteral("  AMX: listed by the CPU, tile state enabled in XCR0: not used (no AMX kernels)\n")
            : QStringLiteral("  AMX: listed by the CPU but not enabled by the OS: not used\n");
    QStringList levels;
    for (CpuLevel l : kCpuLevels)
        if (hostRuns(l)) levels << QString::fromLatin1(cpuLevelName(l));
    out += QStringLiteral("  levels this CPU runs: %1\n").arg(levels.join(' '));
    const CpuLevelChoice c = cpuLevelChoice();
    out += QStringLiteral("  kernels used: %1 (%2)\n")
               .arg(QString::fromLatin1(cpuLevelName(c.used)), QString::fromStdString(c.why));
    if (c.used == CpuLevel::Reference)
        out += QStringLiteral("  note: the reference kernels are several times slower than the AVX2 ones\n");
    return out;
}

QString modelFileText(const ModelFileInfo& m) {
    return QStringLiteral(
               "Model: %1\n  file: %2\n  architecture: %3 (family %4)\n  parameters: %5 (%6)\n"
               "  quantization: %7\n  trained context: %8 tokens\n  chat format: %9\n  %10\n")
        .arg(m.name, m.path, m.architecture, m.family, formatParams(m.nParams))
        .arg(m.nParams)
        .arg(m.quantization)
        .arg(m.contextLength)
        .arg(m.chatFormat,
             m.unsupported.isEmpty() ? QStringLiteral("Hearth runs it") : "Hearth cannot run it: " + m.unsupported);
}

QString modelInfoText(const Engine& e) {
    const ModelConfig& c = e.config();
    std::map<std::string, int> typeCounts;
    for (const GgufTensorInfo& t : e.file().tensors()) typeCounts[dtypeInfo(t.type).name]++;
    QString types;
    for (const auto& [name, n] : typeCounts)
        types += QStringLiteral("%1%2 x%3").arg(types.isEmpty() ? "" : ", ", QString::fromStdString(name)).arg(n);
    const Tokenizer& tok = e.tokenizer();
    return QStringLiteral(
               "  layers: %1, embedding: %2, heads: %3 (KV heads: %4), head size: %5, feed-forward: %6\n"
               "  tensor types: %7\n  context length used: %8\n  vocabulary: %9 tokens (%10), BOS %11, EOS %12\n"
               "%13  backend: %14\n  forward pass: %15\n")
        .arg(c.nLayers)
        .arg(c.nEmbd)
        .arg(c.nHeads)
        .arg(c.nKvHeads)
        .arg(c.headDim)
        .arg(c.nFf)
        .arg(types)
        .arg(e.contextLength())
        .arg(tok.nVocab())
        .arg(tok.kind() == VocabKind::SentencePiece ? "SentencePiece" : "byte-level BPE")
        .arg(tok.bos())
        .arg(tok.eos())
        .arg(e.chatFormat().isFallback()
                 ? QString("  chat format fallback: %1\n").arg(QString::fromStdString(e.chatFormat().fallbackReason()))
                 : QString(),
             QString::fromStdString(e.backendName()) +
                 (e.backendNote().empty() ? QString() : QString(" (%1)").arg(QString::fromStdString(e.backendNote()))))
        .arg(QString::fromStdString(c.features));  // %15: what the decoder does beyond plain Llama
}

}  // namespace hearth
