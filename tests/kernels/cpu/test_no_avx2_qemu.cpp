// On a CPU without AVX2 Hearth runs the reference kernels and says so, never an illegal
// instruction: hearth-cli under qemu-user with a CPU model that has AVX but not AVX2
// (SandyBridge), greedy tokens on stories260K equal to the native run's, and `info` saying
// what it detected and why it runs the reference.
#include <QStandardPaths>
#include <QtTest>

#include "tests/support/cli_runner.h"

using namespace hearth::test;

namespace {
const QString kCpuModel = QStringLiteral("SandyBridge");

QStringList qemuLauncher() {
    const QString qemu = QStandardPaths::findExecutable(QStringLiteral("qemu-x86_64"));
    return qemu.isEmpty() ? QStringList{} : QStringList{qemu, QStringLiteral("-cpu"), kCpuModel};
}
}  // namespace

class TestNoAvx2Qemu : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        if (qemuLauncher().isEmpty()) {
            if (underCi()) QFAIL("qemu-x86_64 is missing (Debian's qemu-user; install-deps.sh installs it)");
            QSKIP("qemu-x86_64 is missing (Debian's qemu-user)");
        }
    }

    void infoSaysReference() {
        const CliRun info = runCli({"info"}, 120000, qemuLauncher());
        qInfo().noquote() << "hearth-cli info under qemu-x86_64 -cpu" << kCpuModel
                          << ":\n" + QString::fromUtf8(info.out);
        QVERIFY2(!info.crashed && info.exitCode == 0, info.err.constData());
        const QString out = QString::fromUtf8(info.out);
        QVERIFY2(out.contains("levels this CPU runs: reference\n"), qPrintable(out));
        QVERIFY2(out.contains("kernels used: reference (the CPU (or OS) lacks AVX2, FMA or F16C)"), qPrintable(out));
        QVERIFY2(out.contains("CPU (AVX2): unavailable (CPU lacks AVX2, FMA or F16C)"), qPrintable(out));
    }

    void greedyTokensEqualNative() {
        const QString model = testDataFile("stories260K.gguf");
        HEARTH_REQUIRE_FILE(model);
        const QStringList args{"generate", "--model", model, "--prompt",     "Once upon a time, there was a",
                               "--raw",    "--temp",  "0",   "--max-tokens", "40",
                               "--json"};
        const CliRun native = runCli(args);
        QVERIFY2(!native.crashed && native.exitCode == 0, native.err.constData());
        const CliRun emulated = runCli(args, 300000, qemuLauncher());
        qInfo().noquote() << "under qemu:" << QString::fromUtf8(emulated.out).trimmed();
        QVERIFY2(!emulated.crashed && emulated.exitCode == 0,
                 qPrintable(QString("hearth-cli under qemu -cpu %1 ended with %2 %3: %4")
                                .arg(kCpuModel, emulated.crashed ? "signal" : "exit code")
                                .arg(emulated.exitCode)
                                .arg(QString::fromUtf8(emulated.err.right(2000)))));
        const QJsonArray want = native.json()["tokens"].toArray(), got = emulated.json()["tokens"].toArray();
        QVERIFY(want.size() >= 10);
        QCOMPARE(got, want);
        QCOMPARE(emulated.json()["text"].toString(), native.json()["text"].toString());
    }
};

QTEST_GUILESS_MAIN(TestNoAvx2Qemu)
#include "test_no_avx2_qemu.moc"
