// Hearth's GGUF reader against the reference reader (Python gguf.GGUFReader, run through
// tests/engine/model/gguf_dump.py) on real files: version, alignment, data offset, every metadata key's
// type and value (arrays element by element), every tensor's name, dims, type, offset, size and
// the SHA-1 of its bytes. Built twice: HEARTH_GGUF_MODEL_SET 1 reads the shared test data
// (labels model;tiny), 2 the fetched models (label model).
#include <QCryptographicHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTest>

#include "engine/model/gguf.h"
#include "tests/support/test_env.h"

using namespace hearth;

#ifndef HEARTH_GGUF_MODEL_SET
#define HEARTH_GGUF_MODEL_SET 1
#endif

namespace {

QString hex(const std::string& bytes) {
    return QString::fromLatin1(QByteArray(bytes.data(), qsizetype(bytes.size())).toHex());
}

// The dump's form of one scalar (see gguf_dump.py): integers as decimal text, strings as hex.
QJsonValue asDumped(const GgufValue& v) {
    switch (v.type) {
    case GgufType::U8:
    case GgufType::U16:
    case GgufType::U32:
    case GgufType::U64: return QString::number(std::get<uint64_t>(v.v));
    case GgufType::I8:
    case GgufType::I16:
    case GgufType::I32:
    case GgufType::I64: return QString::number(std::get<int64_t>(v.v));
    case GgufType::F32:
    case GgufType::F64: return std::get<double>(v.v);
    case GgufType::BOOL: return std::get<bool>(v.v);
    case GgufType::STRING: return hex(std::get<std::string>(v.v));
    case GgufType::ARRAY: break;
    }
    return QJsonValue();
}

QJsonObject runReferenceReader(const QString& path) {
    QProcess python;
    python.start(hearth::test::pythonExe(), {hearth::test::sourceDir() + "/tests/engine/model/gguf_dump.py", path});
    if (!python.waitForFinished(300'000) || python.exitCode() != 0) {
        qWarning("gguf_dump.py failed: %s", python.readAllStandardError().constData());
        return {};
    }
    return QJsonDocument::fromJson(python.readAllStandardOutput()).object();
}

void compareValue(const QString& key, const GgufValue& ours, const QJsonObject& ref) {
    QCOMPARE(int(ours.type), ref["type"].toInt());
    const GgufArray* array = ours.asArray();
    if (array == nullptr) {
        const auto text = [](const QJsonValue& v) {
            return QString::fromUtf8(QJsonDocument(QJsonArray{v}).toJson(QJsonDocument::Compact));
        };
        QVERIFY2(asDumped(ours) == ref["value"],
                 qPrintable(key + ": " + text(asDumped(ours)) + " vs " + text(ref["value"])));
        return;
    }
    QCOMPARE(int(array->elemType), ref["elem_type"].toInt());
    QCOMPARE(qint64(array->size()), ref["count"].toInteger());
    const QJsonArray items = ref["items"].toArray();
    if (array->elemType == GgufType::ARRAY) return;  // the reference flattens nested arrays
    QCOMPARE(qsizetype(array->size()), items.size());
    for (qsizetype i = 0; i < items.size(); ++i) {
        if (asDumped(array->item(uint64_t(i))) != items[i]) {
            QFAIL(qPrintable(QString("%1[%2] differs").arg(key).arg(i)));
        }
    }
}

void compareTensor(const GgufFile& file, const GgufTensorInfo& t, const QJsonObject& ref) {
    QCOMPARE(QString::fromStdString(t.name), ref["name"].toString());
    const QJsonArray dims = ref["dims"].toArray();
    QCOMPARE(qsizetype(t.dims.size()), dims.size());
    for (qsizetype d = 0; d < dims.size(); ++d) QCOMPARE(t.dims[size_t(d)], dims[d].toInteger());
    QCOMPARE(int(t.type), ref["type"].toInt());
    QCOMPARE(qint64(file.dataOffset() + t.offset), ref["data_offset"].toInteger());
    QCOMPARE(qint64(t.nBytes), ref["n_bytes"].toInteger());
    const auto data = file.tensorData(t);
    QCOMPARE(data.size(), t.nBytes);
    const QByteArray sha1 =
        QCryptographicHash::hash(QByteArrayView(data.data(), qsizetype(data.size())), QCryptographicHash::Sha1);
    QCOMPARE(QString::fromLatin1(sha1.toHex()), ref["sha1"].toString());
}

}  // namespace

class TestGgufModels : public QObject {
    Q_OBJECT

private slots:
    void matchesTheReferenceReader_data();
    void matchesTheReferenceReader();
};

void TestGgufModels::matchesTheReferenceReader_data() {
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("arch");  // general.architecture
    QTest::addColumn<qint64>("blockCount");  // {arch}.block_count
    QTest::addColumn<int>("nTensors");
    using hearth::test::modelFile;
    using hearth::test::testDataFile;
#if HEARTH_GGUF_MODEL_SET == 1
    QTest::newRow("stories260K") << testDataFile("stories260K.gguf") << QString("llama") << 5ll << 48;
    QTest::newRow("llama-2-tiny-random") << testDataFile("llama-2-tiny-random.gguf") << QString("llama") << 1ll << 12;
#else
    QTest::newRow("SmolLM2-135M-Instruct.Q4_1")
        << modelFile("SmolLM2-135M-Instruct.Q4_1.gguf") << QString("llama") << 30ll << 272;
    QTest::newRow("gemma-3-270m-q4_k_m") << modelFile("gemma-3-270m-q4_k_m.gguf") << QString("gemma3") << 18ll << 236;
#endif
}

void TestGgufModels::matchesTheReferenceReader() {
    QFETCH(QString, path);
    QFETCH(QString, arch);
    QFETCH(qint64, blockCount);
    QFETCH(int, nTensors);
    HEARTH_REQUIRE_FILE(path);
    HEARTH_REQUIRE_FILE(hearth::test::pythonExe());
    const auto opened = GgufFile::open(path.toStdString());
    QVERIFY2(opened, opened ? "" : opened.error().message.c_str());
    const GgufFile& file = **opened;
    QCOMPARE(QString::fromStdString(*file.find("general.architecture")->asString()), arch);
    QCOMPARE(*file.find(arch.toStdString() + ".block_count")->asInt(), blockCount);
    QCOMPARE(int(file.tensors().size()), nTensors);

    const QJsonObject ref = runReferenceReader(path);
    QVERIFY2(!ref.isEmpty(), "the reference reader gave no output");
    QCOMPARE(int(file.version()), ref["version"].toInt());
    QCOMPARE(qint64(file.alignment()), ref["alignment"].toInteger());
    QCOMPARE(qint64(file.dataOffset()), ref["data_offset"].toInteger());

    const QJsonObject metadata = ref["metadata"].toObject();
    QCOMPARE(qsizetype(file.metadata().size()), metadata.size());
    for (auto it = metadata.begin(); it != metadata.end(); ++it) {
        const GgufValue* ours = file.find(it.key().toStdString());
        QVERIFY2(ours, qPrintable("missing key " + it.key()));
        compareValue(it.key(), *ours, it.value().toObject());
        if (QTest::currentTestFailed()) QFAIL(qPrintable("key " + it.key()));
    }
    const QJsonArray tensors = ref["tensors"].toArray();
    QCOMPARE(qsizetype(file.tensors().size()), tensors.size());
    for (qsizetype i = 0; i < tensors.size(); ++i) {
        compareTensor(file, file.tensors()[size_t(i)], tensors[i].toObject());
        if (QTest::currentTestFailed()) QFAIL(qPrintable(QString("tensor #%1").arg(i)));
    }
}

QTEST_GUILESS_MAIN(TestGgufModels)
#include "test_gguf_models.moc"
