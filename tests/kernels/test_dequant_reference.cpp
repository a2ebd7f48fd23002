// Hearth's reference dequantization against gguf-py's (gguf.quants.dequantize), bit for bit, on
// every tensor of the test models, and on gguf-py-quantized rows of the types no model holds;
// plus Hearth's F16/BF16/Q8_0 quantizers against gguf-py's. The Python side is
// tests/kernels/dequant_reference.py; nothing here uses Hearth's own GGUF reader.
#include <QCryptographicHash>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QMap>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <cstring>
#include <functional>
#include <vector>

#include "kernels/cpu/reference/quants.h"
#include "tests/support/test_env.h"

using namespace hearth;

namespace {

// One line of `dequant_reference.py tensors`: where a tensor's raw data lies in the file, and
// a hash of gguf-py's dequantization of it (little-endian float32). BLAKE2b-256 rather than
// SHA-256: Qt's SHA-256 is ~4x slower, and this test hashes 1.6 GB.
struct ReferenceTensor {
    QString name;
    uint32_t typeId = 0;
    int64_t rowElems = 0;  // dims[0], the contiguous dimension
    int64_t nRows = 1;  // the product of the other dims
    qint64 offset = 0;
    qint64 nBytes = 0;
    QByteArray blake2b;  // hex
};

ReferenceTensor parseTensorLine(const QByteArray& line) {
    const QJsonObject o = QJsonDocument::fromJson(line).object();
    ReferenceTensor t;
    t.name = o["name"].toString();
    t.typeId = static_cast<uint32_t>(o["type"].toInteger(-1));
    const QJsonArray dims = o["dims"].toArray();
    for (qsizetype i = 0; i < dims.size(); ++i) {
        if (i == 0) t.rowElems = dims[i].toInteger();
        else t.nRows *= dims[i].toInteger();
    }
    t.offset = o["offset"].toInteger(-1);
    t.nBytes = o["nbytes"].toInteger(-1);
    t.blake2b = o["blake2b"].toString().toLatin1();
    return t;
}

// Runs the helper script, handing each stdout line to onLine as soon as it arrives, so Hearth
// works on one tensor while Python dequantizes the next. Returns an error text, or empty.
QString runReference(const QStringList& args, const std::function<QString(const QByteArray&)>& onLine) {
    QProcess process;
    const QString script = test::sourceDir() + "/tests/kernels/dequant_reference.py";
    process.start(test::pythonExe(), QStringList{script} + args);
    if (!process.waitForStarted(30000)) return "cannot start " + test::pythonExe();
    QString error;
    for (;;) {
        while (error.isEmpty() && process.canReadLine()) error = onLine(process.readLine().trimmed());
        if (!error.isEmpty() || process.state() == QProcess::NotRunning) break;
        if (!process.waitForReadyRead(180000) && process.state() != QProcess::NotRunning) {
            error = "the reference script produced nothing for 180 s";
            break;
        }
    }
    if (!error.isEmpty()) {
        process.kill();
        process.waitForFinished();
        return error;
    }
    process.waitForFinished();
    if (process.exitStatus() != QProcess::NormalExit || process.exitCode() != 0)
        return "reference script failed: " + QString::fromUtf8(process.readAllStandardError());
    return {};
}

// Hearth's dequantization of a whole tensor, in chunks of whole rows; fed to a hash or kept.
void dequantizeTensor(const uchar* raw, DType type, int64_t rowElems, int64_t nRows,
                      const std::function<void(const float*, int64_t)>& sink) {
    const size_t rowSize = rowBytes(type, rowElems);
    const int64_t rowsPerChunk = std::max<int64_t>(1, (int64_t(1) << 20) / rowElems);
    std::vector<float> chunk(static_cast<size_t>(rowsPerChunk * rowElems));
    for (int64_t row = 0; row < nRows; row += rowsPerChunk) {
        const int64_t n = std::min(rowsPerChunk, nRows - row);
        for (int64_t r = 0; r < n; ++r)
            ref::dequantizeRow(type, raw + static_cast<size_t>(row + r) * rowSize, chunk.data() + r * rowElems,
                               rowElems);
        sink(chunk.data(), n * rowElems);
    }
}

QByteArray hearthBlake2b(const uchar* raw, DType type, int64_t rowElems, int64_t nRows) {
    QCryptographicHash hash(QCryptographicHash::Blake2b_256);
    dequantizeTensor(raw, type, rowElems, nRows, [&](const float* v, int64_t n) {
        hash.addData(QByteArrayView(reinterpret_cast<const char*>(v), n * qsizetype(sizeof(float))));
    });
    return hash.result().toHex();
}

// The first element where two float arrays differ in their bits, described; empty if none.
QString firstDifference(const float* ours, const float* reference, int64_t n, int blockElems) {
    for (int64_t i = 0; i < n; ++i) {
        if (std::memcmp(ours + i, reference + i, sizeof(float)) == 0) continue;
        uint32_t a, b;
        std::memcpy(&a, ours + i, 4);
        std::memcpy(&b, reference + i, 4);
        return QStringLiteral("element %1 (block %2): hearth %3 (0x%4), gguf-py %5 (0x%6)")
            .arg(i)
            .arg(i / blockElems)
            .arg(double(ours[i]), 0, 'g', 9)
            .arg(a, 8, 16, QChar('0'))
            .arg(double(reference[i]), 0, 'g', 9)
            .arg(b, 8, 16, QChar('0'));
    }
    return {};
}

// On a hash mismatch: fetch gguf-py's values of that one tensor and say where they differ.
QString diagnose(const QString& gguf, const ReferenceTensor& t, const uchar* raw) {
    QTemporaryDir dir;
    const QString out = dir.filePath("reference.f32");
    const auto ignoreLines = [](const QByteArray&) { return QString(); };
    const QString error = runReference({"dump", gguf, t.name, out}, ignoreLines);
    QFile file(out);
    if (!error.isEmpty() || !file.open(QIODevice::ReadOnly)) return "cannot dump the reference: " + error;
    const QByteArray reference = file.readAll();
    std::vector<float> ours;
    const DType type = static_cast<DType>(t.typeId);
    dequantizeTensor(raw, type, t.rowElems, t.nRows,
                     [&](const float* v, int64_t n) { ours.insert(ours.end(), v, v + n); });
    if (reference.size() != qsizetype(ours.size() * sizeof(float))) return "the reference has a different size";
    return firstDifference(ours.data(), reinterpret_cast<const float*>(reference.constData()), int64_t(ours.size()),
                           dtypeInfo(type).blockElems);
}

QByteArray readAll(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

}  // namespace

class TestDequantReference : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();
    void modelTensors_data();
    void modelTensors();
    void syntheticRows();
    void cleanupTestCase();

private:
    QString checkTensor(const QString& gguf, const uchar* map, qint64 fileSize, const ReferenceTensor& t, bool explain);

    qint64 nTensors_ = 0;
    qint64 nElements_ = 0;
    qint64 nSyntheticElements_ = 0;
};

void TestDequantReference::initTestCase() {
    HEARTH_REQUIRE_FILE(test::pythonExe());
    HEARTH_REQUIRE_FILE(test::sourceDir() + "/tests/kernels/dequant_reference.py");
}

void TestDequantReference::modelTensors_data() {
    QTest::addColumn<QString>("path");
    QTest::newRow("stories260K") << test::testDataFile("stories260K.gguf");
    QTest::newRow("llama-2-tiny-random") << test::testDataFile("llama-2-tiny-random.gguf");
    QTest::newRow("SmolLM2-135M Q4_1") << test::modelFile("SmolLM2-135M-Instruct.Q4_1.gguf");
    QTest::newRow("gemma-3-270m Q4_K_M") << test::modelFile("gemma-3-270m-q4_k_m.gguf");
}

// Checks one tensor: its place in the file, its size by Hearth's type table, and the hash of
// Hearth's dequantization. Returns an error text, or empty. explain: on a mismatch, find the
// first differing element (a second pass through gguf-py, seconds on a large file).
QString TestDequantReference::checkTensor(const QString& gguf, const uchar* map, qint64 fileSize,
                                          const ReferenceTensor& t, bool explain) {
    const DTypeInfo info = dtypeInfo(t.typeId);
    if (!info.name) return QStringLiteral("%1: type %2 unknown to Hearth").arg(t.name).arg(t.typeId);
    const auto type = static_cast<DType>(t.typeId);
    if (t.rowElems <= 0 || t.rowElems % info.blockElems != 0) return t.name + ": bad row length";
    const qint64 expectedBytes = qint64(rowBytes(type, t.rowElems)) * t.nRows;
    if (expectedBytes != t.nBytes)
        return QStringLiteral("%1: %2 bytes by Hearth's type table, %3 by gguf-py")
            .arg(t.name)
            .arg(expectedBytes)
            .arg(t.nBytes);
    if (t.offset < 0 || t.offset + t.nBytes > fileSize) return t.name + ": data outside the file";
    const uchar* raw = map + t.offset;
    if (hearthBlake2b(raw, type, t.rowElems, t.nRows) != t.blake2b)
        return QStringLiteral("%1 (%2): differs from gguf-py%3")
            .arg(t.name, info.name, explain ? ": " + diagnose(gguf, t, raw) : QString());
    ++nTensors_;
    nElements_ += t.rowElems * t.nRows;
    return {};
}

void TestDequantReference::modelTensors() {
    QFETCH(QString, path);
    HEARTH_REQUIRE_FILE(path);
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const uchar* map = file.map(0, file.size());
    QVERIFY(map);
    QElapsedTimer timer;
    timer.start();
    QMap<QString, int> typeCounts;
    qint64 nTensors = 0, nElements = 0;
    QStringList failures;
    const QString error = runReference({"tensors", path}, [&](const QByteArray& line) {
        const ReferenceTensor t = parseTensorLine(line);
        const QString failure = checkTensor(path, map, file.size(), t, failures.isEmpty());
        if (!failure.isEmpty()) failures << failure;
        typeCounts[dtypeInfo(t.typeId).name ? dtypeInfo(t.typeId).name : "?"]++;
        ++nTensors;
        nElements += t.rowElems * t.nRows;
        return QString();
    });
    QVERIFY2(error.isEmpty(), qPrintable(error));
    if (failures.size() > 8) failures = failures.mid(0, 8) << QString("... %1 in all").arg(failures.size());
    QVERIFY2(failures.isEmpty(), qPrintable(failures.join('\n')));
    QVERIFY2(nTensors > 0, "the reference listed no tensors");
    QStringList types;
    for (auto it = typeCounts.cbegin(); it != typeCounts.cend(); ++it)
        types << QStringLiteral("%1 %2").arg(it.key()).arg(it.value());
    qInfo("%s: %lld tensors (%s), %lld elements bit-identical to gguf-py in %.1f s",
          qPrintable(QFileInfo(path).fileName()), qlonglong(nTensors), qPrintable(types.join(", ")),
          qlonglong(nElements), timer.elapsed() / 1000.0);
}

namespace {

// One synthetic case (a line of `dequant_reference.py synthetic`): Hearth's dequantization of
// gguf-py's bytes, and for the types Hearth quantizes, Hearth's bytes. Returns an error, or empty.
QString checkSyntheticCase(const QTemporaryDir& dir, const QJsonObject& o) {
    const QString name = o["name"].toString();
    const auto type = static_cast<DType>(o["type"].toInteger());
    const int64_t n = o["rows"].toInteger() * o["cols"].toInteger();
    const QByteArray input = readAll(dir.filePath(name + ".input.f32"));
    const QByteArray raw = readAll(dir.filePath(name + ".raw"));
    const QByteArray reference = readAll(dir.filePath(name + ".f32"));
    if (input.size() != n * 4 || reference.size() != n * 4 || raw.size() != qsizetype(rowBytes(type, n)))
        return name + ": files of unexpected size";
    std::vector<float> ours(static_cast<size_t>(n));
    ref::dequantizeRow(type, raw.constData(), ours.data(), n);
    const auto* expected = reinterpret_cast<const float*>(reference.constData());
    const QString diff = firstDifference(ours.data(), expected, n, dtypeInfo(type).blockElems);
    if (!diff.isEmpty()) return name + " dequantization: " + diff;
    if (type != DType::F16 && type != DType::BF16 && type != DType::Q8_0) return {};
    QByteArray quantized(raw.size(), '\0');
    ref::quantizeRow(type, reinterpret_cast<const float*>(input.constData()), quantized.data(), n);
    for (qsizetype i = 0; i < raw.size(); ++i)
        if (quantized[i] != raw[i])
            return QStringLiteral("%1 quantization: byte %2 is 0x%3, gguf-py wrote 0x%4")
                .arg(name)
                .arg(i)
                .arg(uchar(quantized[i]), 2, 16, QChar('0'))
                .arg(uchar(raw[i]), 2, 16, QChar('0'));
    return {};
}

}  // namespace

// Seeded rows quantized by gguf-py to every type it can write (Q5_1 and BF16 are in no test
// model): Hearth dequantizes them bit-identically, and Hearth's own quantizers for F16, BF16
// and Q8_0 write the same bytes as gguf-py's.
void TestDequantReference::syntheticRows() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QStringList checked;
    const QString error = runReference({"synthetic", dir.path()}, [&](const QByteArray& line) {
        const QJsonObject o = QJsonDocument::fromJson(line).object();
        const QString failure = checkSyntheticCase(dir, o);
        if (failure.isEmpty()) {
            checked << o["name"].toString();
            nSyntheticElements_ += o["rows"].toInteger() * o["cols"].toInteger();
        }
        return failure;
    });
    QVERIFY2(error.isEmpty(), qPrintable(error));
    QCOMPARE(checked.size(), 7);
    qInfo("synthetic rows bit-identical to gguf-py: %s (and the F16, BF16, Q8_0 quantizers)",
          qPrintable(checked.join(", ")));
}

void TestDequantReference::cleanupTestCase() {
    qInfo("in all: %lld model tensors (%lld elements) and %lld synthetic elements bit-identical", qlonglong(nTensors_),
          qlonglong(nElements_), qlonglong(nSyntheticElements_));
}

QTEST_APPLESS_MAIN(TestDequantReference)
#include "test_dequant_reference.moc"
