// Issue 24's proof without a GPU: the forward pass on a backend with memory of its own
// (tests/support/device_memory_backend.h). On every tiny family (Llama, Gemma 3, Qwen 2 with
// biases, Qwen 3, Phi-3 with fused tensors, Gemma 2 with soft-caps), a prefill, a decode step,
// a batch of two sequences and a 3-row verification each upload their inputs once (token ids,
// positions and KV slots: 12 bytes a row) and download exactly the wanted rows' logits once;
// no operator gets a pointer outside the backend's memory (activations, norm and bias vectors,
// matrices, logits); the logits are bitwise those of the same model on the reference backend.
// The KV pool is still host memory: its blocks are counted (kvOutside), not refused.
#include <QTemporaryDir>
#include <QtTest>

#include <cstring>

#include "engine/model/gguf.h"
#include "engine/model/model.h"
#include "engine/model/synth.h"
#include "tests/support/device_memory_backend.h"

using namespace hearth;
using Tokens = std::vector<int32_t>;

namespace {

bool sameBits(std::span<const float> a, std::span<const float> b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

Tokens tokensOf(int n, int salt, int nVocab) {
    Tokens t;
    for (int k = 0; k < n; ++k) t.push_back(3 + (k * 37 + salt * 101) % (nVocab - 3));
    return t;
}

}  // namespace

class TestDeviceStep : public QObject {
    Q_OBJECT
private slots:
    void stepsMoveOnlyInputsAndLogits_data();
    void stepsMoveOnlyInputsAndLogits();

private:
    QTemporaryDir dir_;
};

void TestDeviceStep::stepsMoveOnlyInputsAndLogits_data() {
    QTest::addColumn<QString>("shape");
    QTest::addColumn<int>("type");
    for (const char* shape : {"tiny", "tiny-gemma3", "tiny-qwen2", "tiny-qwen3", "tiny-phi3", "tiny-gemma2"})
        QTest::newRow(shape) << shape << static_cast<int>(DType::Q8_0);
    QTest::newRow("tiny F32") << "tiny" << static_cast<int>(DType::F32);
}

void TestDeviceStep::stepsMoveOnlyInputsAndLogits() {
    QFETCH(QString, shape);
    QFETCH(int, type);
    auto s = findSynthShape(shape.toStdString());
    QVERIFY(s.has_value());
    const std::string path = dir_.filePath(shape + QString::number(type) + ".gguf").toStdString();
    QVERIFY(writeSynthModel(*s, {.type = static_cast<DType>(type), .seed = 3}, path).has_value());
    auto file = GgufFile::open(path);
    QVERIFY(file.has_value());
    auto plain = Model::load(**file), onDevice = Model::load(**file);
    QVERIFY(plain.has_value() && onDevice.has_value());
    auto reference = makeCpuReferenceBackend(), inner = makeCpuReferenceBackend();
    test::DeviceMemoryBackend device(*inner);
    (*onDevice)->packWeights(device);
    QVERIFY(device.loadBytes() > 0);

    const int nVocab = (*plain)->config().nVocab;
    const auto rows = [&](int n) { return std::vector<float>(static_cast<size_t>(n) * nVocab); };
    KvCache plainCache((*plain)->kvLayout(16), 512), deviceCache((*onDevice)->kvLayout(16), 512);
    KvSequence plainSeqs[2], deviceSeqs[2];

    // One step on both: items of (sequence, tokens, logits rows wanted); checks the transfers.
    struct Part {
        int seq;
        Tokens tokens;
        int nLogits;
    };
    const auto step = [&](const char* what, const std::vector<Part>& parts) {
        std::vector<std::vector<float>> expected, got;
        std::vector<ForwardItem> plainItems, deviceItems;
        for (const Part& p : parts) expected.push_back(rows(p.nLogits)), got.push_back(rows(p.nLogits));
        int nRows = 0, nLogits = 0;
        for (size_t i = 0; i < parts.size(); ++i) {
            const Part& p = parts[i];
            plainItems.push_back({&plainSeqs[p.seq], p.tokens, expected[i]});
            deviceItems.push_back({&deviceSeqs[p.seq], p.tokens, got[i]});
            nRows += static_cast<int>(p.tokens.size());
            nLogits += p.nLogits;
        }
        if (!(*plain)->forward(*reference, plainCache, plainItems)) return QString("%1: the plain pass failed").arg(what);
        device.resetCounts();
        if (auto r = (*onDevice)->forward(device, deviceCache, deviceItems); !r)
            return QString("%1: %2").arg(what, QString::fromStdString(r.error().message));
        const test::DeviceTransfers& t = device.transfers();
        if (!device.violations().empty())
            return QString("%1: %2").arg(what, QString::fromStdString(device.violations().front()));
        if (t.uploads != 1 || t.bytesUp != size_t(nRows) * 3 * sizeof(int32_t))
            return QString("%1: %2 uploads of %3 bytes in all").arg(what).arg(t.uploads).arg(t.bytesUp);
        if (t.downloads != (nLogits > 0 ? 1 : 0) || t.bytesDown != size_t(nLogits) * size_t(nVocab) * sizeof(float))
            return QString("%1: %2 downloads of %3 bytes in all").arg(what).arg(t.downloads).arg(t.bytesDown);
        if (t.copies != 0) return QString("%1: %2 copies").arg(what).arg(t.copies);
        for (size_t i = 0; i < parts.size(); ++i)
            if (!sameBits(got[i], expected[i])) return QString("%1: item %2's logits differ").arg(what).arg(i);
        qInfo("%s: %d rows, %d operator calls, %zu bytes up, %zu down", what, nRows, t.ops, t.bytesUp, t.bytesDown);
        return QString();
    };

    QString r = step("prefill", {{0, tokensOf(20, 0, nVocab), 1}});
    QVERIFY2(r.isEmpty(), qPrintable(r));
    r = step("decode", {{0, tokensOf(1, 1, nVocab), 1}});
    QVERIFY2(r.isEmpty(), qPrintable(r));
    r = step("two sequences", {{0, tokensOf(1, 2, nVocab), 1}, {1, tokensOf(6, 3, nVocab), 1}});
    QVERIFY2(r.isEmpty(), qPrintable(r));
    r = step("verify", {{0, tokensOf(3, 4, nVocab), 3}});
    QVERIFY2(r.isEmpty(), qPrintable(r));
    r = step("no logits", {{1, tokensOf(4, 5, nVocab), 0}});  // a prefill chunk: nothing comes down
    QVERIFY2(r.isEmpty(), qPrintable(r));
    // The next step goes on from there, as on the host.
    r = step("decode after", {{1, tokensOf(1, 6, nVocab), 1}});
    QVERIFY2(r.isEmpty(), qPrintable(r));
    qInfo("KV block accesses outside the backend's memory (the KV pool is host memory still): %d",
          device.kvOutside());
}

QTEST_GUILESS_MAIN(TestDeviceStep)
#include "test_device_step.moc"
