// Runs first among the conformance tests (a CTest fixture they require): one forward pass of
// the oracle (llama.cpp through llama-cpp-python, in its own process) on each model the suite
// uses. When the oracle crashes, this test fails with the signal, the flags the oracle was built
// with and the likely cause, instead of every conformance test failing with a blank message.
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QtTest>

#include "tests/support/python_json.h"
#include "tests/support/test_env.h"

using namespace hearth::test;

namespace {

// hearth-oracle-build.txt, which setup-oracle.sh writes beside the oracle's environment.
QString oracleBuild() {
    const QString venv = QFileInfo(oraclePython()).dir().absoluteFilePath("..");
    QFile f(QDir(venv).absoluteFilePath("hearth-oracle-build.txt"));
    if (!f.open(QIODevice::ReadOnly)) return "unknown (no hearth-oracle-build.txt in " + QDir::cleanPath(venv) + ")";
    return QString::fromUtf8(f.readAll()).trimmed();
}

QString likelyCause(int sig) {
    if (sig == SIGILL || sig == SIGSEGV || sig == SIGBUS)
        return QStringLiteral(
            "likely cause: llama.cpp was built for instructions this host cannot run: a -march=native "
            "(GGML_NATIVE) build on a CPU that lists AMX, whose AMX code faults in VMs that do not give "
            "processes AMX state (seen with XCR0's tile bits set all the same), or a wheel built on another "
            "machine; packaging/scripts/setup-oracle.sh builds it with GGML_NATIVE=OFF for what this "
            "host's CPUID and XCR0 allow, AMX never, and caches one wheel per instruction-set list");
    return QStringLiteral("likely cause: see the oracle's stderr above");
}

}  // namespace

class TestOracleHealth : public QObject {
    Q_OBJECT
private slots:
    void forwardPass_data() {
        QTest::addColumn<QString>("model");
        QTest::newRow("stories260K") << testDataFile("stories260K.gguf");
        QTest::newRow("llama-2-tiny-random") << testDataFile("llama-2-tiny-random.gguf");
        QTest::newRow("SmolLM2-135M Q4_1") << modelFile("SmolLM2-135M-Instruct.Q4_1.gguf");
        QTest::newRow("Gemma 3 270M Q4_K_M") << modelFile("gemma-3-270m-q4_k_m.gguf");
    }

    void forwardPass() {
        QFETCH(QString, model);
        HEARTH_REQUIRE_FILE(oraclePython());
        HEARTH_REQUIRE_FILE(model);
        const QJsonObject answer = askPython(oraclePython(), sourceDir() + "/tests/conformance/oracle.py",
                                             {{"op", "forward"}, {"model", model}}, 600000);
        if (answer.contains("error")) {
            QString message = "the oracle failed on " + QFileInfo(model).fileName() + ": " +
                answer["error"].toString() + "\noracle build: " + oracleBuild().replace('\n', "; ");
            if (answer.contains("signal")) message += "\n" + likelyCause(answer["signal"].toInt());
            QFAIL(qPrintable(message));
        }
        QVERIFY(answer["n_vocab"].toInt() > 0);
        QVERIFY2(answer["finite"].toBool(), "the oracle's logits are not finite");
        qInfo("oracle forward pass on %s: argmax %d of %d (oracle build: %s)", qPrintable(QFileInfo(model).fileName()),
              answer["argmax"].toInt(), answer["n_vocab"].toInt(), qPrintable(oracleBuild().replace('\n', "; ")));
    }
};

QTEST_GUILESS_MAIN(TestOracleHealth)
#include "test_oracle_health.moc"
