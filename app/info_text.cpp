// Formats backend and model facts for people.
#include "app/info_text.h"

#include <map>

#include "engine/engine.h"
#include "engine/model/gguf.h"
#include "kernels/backend.h"

namespace hearth {

QString backendsText() {
    QString out = QStringLiteral("Compute backends:\n");
    for (const BackendInfo& b : listBackends())
        out += QStringLiteral("  %1: %2\n").arg(QString::fromStdString(b.name),
                                                b.available ? QStringLiteral("available")
                                                            : "unavailable (" + QString::fromStdString(b.reason) + ")");
    return out;
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
               "Model: %1\n  file: %2\n  architecture: %3\n  parameters: %4 (%5 M)\n  layers: %6, embedding: %7, "
               "heads: %8 (KV heads: %9), head size: %10, feed-forward: %11\n  tensor types: %12\n"
               "  context length: %13 (model: %14)\n  vocabulary: %15 tokens (%16), BOS %17, EOS %18\n"
               "  chat format: %19\n  backend: %20\n")
        .arg(QString::fromStdString(c.name.empty() ? std::string("(unnamed)") : c.name),
             QString::fromStdString(e.file().path()), QString::fromStdString(c.architecture))
        .arg(c.nParams)
        .arg(static_cast<double>(c.nParams) / 1e6, 0, 'f', 1)
        .arg(c.nLayers)
        .arg(c.nEmbd)
        .arg(c.nHeads)
        .arg(c.nKvHeads)
        .arg(c.headDim)
        .arg(c.nFf)
        .arg(types)
        .arg(e.contextLength())
        .arg(c.contextLength)
        .arg(tok.nVocab())
        .arg(tok.kind() == VocabKind::SentencePiece ? "SentencePiece" : "byte-level BPE")
        .arg(tok.bos())
        .arg(tok.eos())
        .arg(QString::fromLatin1(e.chatFormat().name()) +
                 (e.chatFormat().isFallback()
                      ? QString(" (fallback: %1)").arg(QString::fromStdString(e.chatFormat().fallbackReason()))
                      : QString()),
             QString::fromStdString(e.backendName()) +
                 (e.backendNote().empty() ? QString() : QString(" (%1)").arg(QString::fromStdString(e.backendNote()))));
}

}  // namespace hearth
