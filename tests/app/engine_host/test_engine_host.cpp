// EngineHost across its thread boundary, with a tiny random Llama: load, a reply, a stop in
// the middle of a reply, and destroying the host while it generates. Small on purpose: it is
// the engine-host half of the ThreadSanitizer stage (packaging/scripts/test-stages.d/20-tsan.sh).
#include <QElapsedTimer>
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>
#include <limits>
#include <memory>

#include "app/engine_host/engine_host.h"
#include "tests/support/tiny_llama.h"

using namespace hearth;

namespace {

// What the worker's signals said, recorded on the test's thread (queued connections: the
// signals are emitted on the engine thread).
struct Record {
    bool loaded = false;
    QString loadError;
    int textBatches = 0;
    QString text;
    QString finishReason;  // empty until replyFinished
    QString replyError;
};

void listen(EngineHost& host, QObject* context, Record& r) {
    EngineWorker* w = host.worker();
    QObject::connect(w, &EngineWorker::modelLoaded, context, [&r](const LoadedModel&) { r.loaded = true; });
    QObject::connect(w, &EngineWorker::loadFailed, context, [&r](const QString& m) { r.loadError = m; });
    QObject::connect(w, &EngineWorker::textReady, context, [&r](quint64, const QString& t) {
        ++r.textBatches;
        r.text += t;
    });
    QObject::connect(w, &EngineWorker::replyFinished, context,
                     [&r](const ReplyStats& s) { r.finishReason = s.finishReason; });
    QObject::connect(w, &EngineWorker::replyFailed, context, [&r](quint64, const QString& m) { r.replyError = m; });
}

// A long reply: end-of-generation tokens banned, so only maxTokens (or a stop) ends it.
ReplyRequest longReply(int maxTokens) {
    ReplyRequest r;
    r.turns = {ChatTurn{ChatRole::User, "the cat"}};
    r.settings.maxTokens = maxTokens;
    r.settings.seed = 7;
    r.settings.sampling.logitBias = {{2, -std::numeric_limits<float>::infinity()}};  // </s>
    return r;
}

}  // namespace

class TestEngineHost : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        test::TinyLlamaShape shape;
        shape.nEmbd = 128;
        shape.nFf = 192;
        shape.context = 2048;  // room for a reply long enough to stop in the middle
        path_ = dir_.filePath("tiny.gguf");
        QVERIFY(test::tinyLlama(shape).writeFile(path_.toStdString()).has_value());
    }

    void loadsAndReplies() {
        Record r;
        QObject context;  // destroyed before r: drops signals still queued for it
        EngineHost host;
        listen(host, &context, r);
        host.loadModel(path_);
        QTRY_VERIFY_WITH_TIMEOUT(r.loaded || !r.loadError.isEmpty(), 60000);
        QVERIFY2(r.loaded, qPrintable(r.loadError));
        host.generate(longReply(8));
        QTRY_VERIFY_WITH_TIMEOUT(!r.finishReason.isEmpty() || !r.replyError.isEmpty(), 60000);
        QCOMPARE(r.finishReason, QString("length"));
        QVERIFY(!r.text.isEmpty());
    }

    void stopsInTheMiddleOfAReply() {
        Record r;
        QObject context;  // destroyed before r: drops signals still queued for it
        EngineHost host;
        listen(host, &context, r);
        host.loadModel(path_);
        QTRY_VERIFY_WITH_TIMEOUT(r.loaded, 60000);
        const quint64 ticket = host.generate(longReply(1900));
        QTRY_VERIFY_WITH_TIMEOUT(r.textBatches > 0 || !r.finishReason.isEmpty(), 60000);
        host.stop(ticket);
        QTRY_VERIFY_WITH_TIMEOUT(!r.finishReason.isEmpty() || !r.replyError.isEmpty(), 60000);
        QVERIFY2(r.replyError.isEmpty(), qPrintable(r.replyError));
        QCOMPARE(r.finishReason, QString("cancelled"));
    }

    // Quitting while the engine thread generates: the destructor stops the thread between
    // steps and deletes the worker (and the engine) there; nothing may touch them afterwards.
    void destroyedDuringGeneration() {
        Record r;
        QObject context;
        auto host = std::make_unique<EngineHost>();
        listen(*host, &context, r);
        host->loadModel(path_);
        QTRY_VERIFY_WITH_TIMEOUT(r.loaded, 60000);
        host->generate(longReply(1900));
        QTRY_VERIFY_WITH_TIMEOUT(r.textBatches > 0 || !r.finishReason.isEmpty(), 60000);
        QVERIFY2(r.finishReason.isEmpty(), "the reply ended before the host could be destroyed mid-reply");
        QElapsedTimer timer;
        timer.start();
        host.reset();
        QVERIFY2(timer.elapsed() < 10000, qPrintable(QString("destruction took %1 ms").arg(timer.elapsed())));
        QCoreApplication::processEvents();  // queued signals from the gone worker must be harmless
    }

private:
    QTemporaryDir dir_;
    QString path_;
};

QTEST_GUILESS_MAIN(TestEngineHost)
#include "test_engine_host.moc"
