// The inputs fuzzing found (fuzz/regressions/gguf), replayed in the normal and sanitizer trees
// through the steps of fuzz_gguf: read, load the model, one forward pass when it loads. Each
// must end in a result or a clear one-line error; the known ones in the error they were fixed to.
#include <QDir>
#include <QFile>
#include <QTest>

#include <map>

#include "engine/kv/kv_cache.h"
#include "engine/model/gguf.h"
#include "engine/model/model.h"
#include "kernels/backend.h"
#include "tests/support/test_env.h"

using namespace hearth;

namespace {

// File name -> a fragment of the error it must give now.
const std::map<QString, std::string> kExpected = {
    // general.alignment 1 put F16 and F32 weights at odd addresses; the reference kernels then
    // loaded misaligned halves and floats (UBSan: "load of misaligned address").
    {"misaligned_weights_alignment1.gguf", "is not 4-byte aligned (general.alignment 1)"},
};

// What fuzz_gguf does with an input; the error of the first step that refused it.
std::optional<Error> replay(const std::vector<uint8_t>& bytes) {
    auto file = GgufFile::fromBytes(bytes);
    if (!file) return file.error();
    auto model = Model::load(**file);
    if (!model) return model.error();
    auto cache = KvCache::create((*model)->kvLayout(16), 16);
    if (!cache) return cache.error();
    const std::unique_ptr<Backend> backend = makeCpuReferenceBackend();
    KvSequence seq;
    const int32_t nVocab = (*model)->config().nVocab;
    std::vector<float> logits(static_cast<size_t>(nVocab));
    const int32_t tokens[] = {0, nVocab - 1};
    if (auto r = (*model)->forward(*backend, **cache, seq, tokens, logits); !r) return r.error();
    return std::nullopt;
}

}  // namespace

class TestGgufRegressions : public QObject {
    Q_OBJECT
private slots:
    void replaysEveryFinding() {
        const QDir dir(test::sourceDir() + "/fuzz/regressions/gguf");
        const QStringList names = dir.entryList(QDir::Files, QDir::Name);
        QVERIFY2(!names.isEmpty(), qPrintable("no inputs in " + dir.path()));
        for (const auto& [name, fragment] : kExpected) QVERIFY2(names.contains(name), qPrintable(name));
        for (const QString& name : names) {
            QFile f(dir.filePath(name));
            QVERIFY(f.open(QIODevice::ReadOnly));
            const QByteArray raw = f.readAll();
            const std::vector<uint8_t> bytes(raw.begin(), raw.end());
            const std::optional<Error> e = replay(bytes);
            if (e) QVERIFY2(e->message.find('\n') == std::string::npos, e->message.c_str());
            const auto expected = kExpected.find(name);
            if (expected == kExpected.end()) continue;
            QVERIFY2(e.has_value(), qPrintable(name + " loaded and ran; a refusal was expected"));
            QVERIFY2(e->message.find(expected->second) != std::string::npos, e->message.c_str());
        }
    }

    // The same file through the file mapping (page-aligned) is refused the same way: the data
    // section starts at an odd offset.
    void refusesMisalignedWeightsFromAFile() {
        const QString path = test::sourceDir() + "/fuzz/regressions/gguf/misaligned_weights_alignment1.gguf";
        auto file = GgufFile::open(path.toStdString());
        QVERIFY2(file.has_value(), file ? "" : file.error().message.c_str());
        auto model = Model::load(**file);
        QVERIFY(!model.has_value());
        QCOMPARE(model.error().code, ErrorCode::Unsupported);
        QVERIFY2(model.error().message.find("-byte aligned") != std::string::npos, model.error().message.c_str());
    }
};

QTEST_APPLESS_MAIN(TestGgufRegressions)
#include "test_gguf_regressions.moc"
