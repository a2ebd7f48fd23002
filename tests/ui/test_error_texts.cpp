// Issue 27's plain-word error texts: the summaries come from the error's code and fields
// (ErrorCode, ErrorCause, KvRefusal), not from the engine's English; a truncated model file
// reads "This file is incomplete — download it again" with its tensor offsets one click away
// ("Details…"), in English and in Simplified Chinese.
#include <QFile>
#include <QLabel>
#include <QMessageBox>
#include <QTemporaryDir>
#include <QTranslator>

#include "app/chat/backend_choices.h"
#include "app/common/error_text.h"
#include "tests/ui/gui_app.h"

using namespace hearth;
using namespace hearth::test;

class TestErrorTexts : public QObject {
    Q_OBJECT
private slots:
    void summariesFromCodes();
    void kvRefusalsInPlainWords();
    void truncatedModelSaysIncomplete();
    void summariesAreInChinese();
    void cudaReasonsInPlainWords();
    void backendSettingsReachTheEngine();
};

// The settings' backend value becomes the engine's choice: "Best available" (empty) and names no
// longer listed let the engine take a usable GPU; a CPU name keeps it on the CPU.
void TestErrorTexts::backendSettingsReachTheEngine() {
    using Kind = EngineOptions::BackendKind;
    QCOMPARE(backendKindFor(QString()), Kind::Best);
    QCOMPARE(backendKindFor("Vulkan"), Kind::Best);
    QCOMPARE(backendKindFor("CUDA"), Kind::Cuda);
    QCOMPARE(backendKindFor("CPU (reference)"), Kind::Reference);
    for (const BackendChoice& b : backendChoices()) {
        const Kind want = b.name == "CUDA" ? Kind::Cuda : b.isReference() ? Kind::Reference : Kind::Cpu;
        QCOMPARE(backendKindFor(b.name), want);
    }
    QCOMPARE(backendKindFor("CPU (AVX2, 3 threads)"), Kind::Cpu);  // saved with another thread count
}

// The CUDA line says what is missing, from the registry's problem value (not its words).
void TestErrorTexts::cudaReasonsInPlainWords() {
    const QString runtime = "CUDA driver version is insufficient for CUDA runtime version (error 35)";
    QCOMPARE(backendProblemText("CUDA", BackendProblem::NoDriver, runtime), QString("no NVIDIA driver is installed"));
    QCOMPARE(backendProblemText("CUDA", BackendProblem::NoDevice, runtime),
             QString("no NVIDIA graphics card was found"));
    QCOMPARE(backendProblemText("CUDA", BackendProblem::DriverTooOld, runtime),
             QString("the NVIDIA driver is too old for this build of Hearth: update it"));
    QCOMPARE(backendProblemText("CUDA", BackendProblem::Other, "odd"), QString("CUDA cannot start (odd)"));
    QVERIFY(backendProblemText("CUDA", BackendProblem::None, runtime).isEmpty());
    for (const BackendChoice& b : backendChoices()) {
        QCOMPARE(b.reason.isEmpty(), b.available);
        if (b.name == "CUDA" && b.problem != BackendProblem::Other && !b.available)
            QVERIFY2(!b.reason.contains("error 35") && !b.reason.contains("runtime"), qPrintable(b.reason));
    }
    QTranslator zh;
    QVERIFY(zh.load(":/i18n/hearth_zh_CN.qm"));
    QCoreApplication::installTranslator(&zh);
    for (BackendProblem p : {BackendProblem::NotBuilt, BackendProblem::NoDriver, BackendProblem::NoDevice,
                             BackendProblem::DriverTooOld, BackendProblem::Other}) {
        const QString t = backendProblemText("CUDA", p, "x");
        QVERIFY2(t.contains(QRegularExpression("[\\x{4e00}-\\x{9fff}]")), qPrintable("untranslated: " + t));
    }
    QCoreApplication::removeTranslator(&zh);
}

void TestErrorTexts::summariesFromCodes() {
    // The same code, told apart by its cause: the message is not looked at.
    const Error cut{ErrorCode::InvalidFormat, "GGUF: tensor #3 'x' offset 0 puts its 8 bytes past the end",
                    ErrorCause::FileCutOff};
    QCOMPARE(userSummary(cut), QString("This file is incomplete — download it again."));
    const Error bad{ErrorCode::InvalidFormat, "is cut off"};  // an English word the summary must not follow
    QVERIFY(!userSummary(bad).contains("incomplete"));
    QVERIFY(!userSummary({ErrorCode::Io, "open: No such file"}).contains("cannot read or write"));
    for (ErrorCode code : {ErrorCode::Io, ErrorCode::InvalidFormat, ErrorCode::Unsupported, ErrorCode::InvalidArgument,
                           ErrorCode::OutOfMemory, ErrorCode::Cancelled, ErrorCode::Device}) {
        const QString s = userSummary({code, "GGUF: header at offset 16 is odd"});
        QVERIFY(!s.isEmpty());
        QVERIFY2(!s.contains("offset") && !s.contains("GGUF:"), qPrintable(s));  // the engine's words stay in Details
    }
}

void TestErrorTexts::kvRefusalsInPlainWords() {
    QVERIFY(kvRefusalSummary(KvRefusal::None, 10).isEmpty());
    QCOMPARE(kvRefusalSummary(KvRefusal::ModelFile, 1234),
             QString("Saved state was made with another model file; the conversation was read again (%1 tokens)")
                 .arg(QLocale().toString(1234)));
    QStringList seen;
    for (KvRefusal r :
         {KvRefusal::ModelFile, KvRefusal::Layout, KvRefusal::Backend, KvRefusal::Numerics, KvRefusal::Block}) {
        const QString s = kvRefusalSummary(r, 7);
        QVERIFY2(s.contains("(7 tokens)") && !seen.contains(s), qPrintable(s));
        seen << s;
    }
    // The engine's classification of a root mismatch, first difference first.
    KvRootInfo saved{.key = {}, .fingerprint = "aa", .layout = "kv-layout/v1", .backend = "CPU", .numericsVersion = 1};
    KvRootInfo now = saved;
    QCOMPARE(rootMismatchKind(saved, now), KvRefusal::Block);
    now.backend = "CUDA";
    QCOMPARE(rootMismatchKind(saved, now), KvRefusal::Backend);
    now.layout = "kv-layout/v2";
    QCOMPARE(rootMismatchKind(saved, now), KvRefusal::Layout);
    now.fingerprint = "bb";
    QCOMPARE(rootMismatchKind(saved, now), KvRefusal::ModelFile);
}

// A model file cut short (an interrupted download): the notice leads with the plain words, the
// tensor offsets are behind its Details… chip.
void TestErrorTexts::truncatedModelSaysIncomplete() {
    QTemporaryDir dir;
    const QString whole = dir.path() + "/whole.gguf", cut = dir.path() + "/cut.gguf";
    QVERIFY(tinyLlama().writeFile(whole.toStdString()).has_value());
    QFile in(whole);
    QVERIFY(in.open(QIODevice::ReadOnly));
    const QByteArray bytes = in.readAll();
    QFile out(cut);
    QVERIFY(out.open(QIODevice::WriteOnly));
    out.write(bytes.left(bytes.size() * 2 / 3));
    out.close();

    GuiApp app(dir.path());
    QVERIFY(QTest::qWaitForWindowExposed(app.window.get()));
    app.window->loadModel(cut);
    QTRY_COMPARE_WITH_TIMEOUT(app.messages()->rowCount(), 1, 20000);
    const QString notice = app.rowText(0);
    QVERIFY2(notice.contains("This file is incomplete — download it again."), qPrintable(notice));
    QVERIFY2(!notice.contains("offset") && !notice.contains("GGUF:"), qPrintable(notice));
    QVERIFY(app.window->messageView()->isVisible());
    QVERIFY(clickChip(*app.window, 0, MessageDelegate::Action::Details));
    QMessageBox* box = nullptr;
    QTRY_VERIFY((box = app.window->findChild<QMessageBox*>("detailsDialog")) != nullptr);
    QVERIFY2(box->informativeText().contains("past the end of the file"), qPrintable(box->informativeText()));
    QCOMPARE(box->text(), QString("Technical details (in English):"));
    box->close();
}

void TestErrorTexts::summariesAreInChinese() {
    QTranslator zh;
    QVERIFY(zh.load(":/i18n/hearth_zh_CN.qm"));
    QCoreApplication::installTranslator(&zh);
    QStringList texts;
    for (ErrorCode code : {ErrorCode::Io, ErrorCode::InvalidFormat, ErrorCode::Unsupported, ErrorCode::InvalidArgument,
                           ErrorCode::OutOfMemory, ErrorCode::Cancelled, ErrorCode::Device})
        texts << userSummary({code, "x"});
    texts << userSummary({ErrorCode::InvalidFormat, "x", ErrorCause::FileCutOff});
    for (KvRefusal r :
         {KvRefusal::ModelFile, KvRefusal::Layout, KvRefusal::Backend, KvRefusal::Numerics, KvRefusal::Block})
        texts << kvRefusalSummary(r, 5);
    QCoreApplication::removeTranslator(&zh);
    for (const QString& t : texts)
        QVERIFY2(t.contains(QRegularExpression("[\\x{4e00}-\\x{9fff}]")), qPrintable("untranslated: " + t));
}

QTEST_MAIN(TestErrorTexts)
#include "test_error_texts.moc"
