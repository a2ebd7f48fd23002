// The Thinking setting on its way to the prompt: stored with the chat settings, carried by the
// turn pipeline (the window's engine worker, hearth-cli --db) to the chat format's render, where
// enable_thinking = false closes an empty think block after Qwen 3's generation prompt.
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include "app/chat/chat_settings.h"
#include "app/chat/turn_pipeline.h"
#include "app/engine_host/engine_host.h"
#include "engine/engine.h"
#include "tests/app/chat/thinking_model.h"

using namespace hearth;

class TestThinkingTurn : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        path_ = dir_.filePath("thinking.gguf");
        QVERIFY(test::thinkingModel().writeFile(path_.toStdString()).has_value());
    }

    void settingIsStoredWithTheChatSettings() {
        ChatSettings off;
        off.thinking = false;
        const QJsonObject o = toJson(off);
        QCOMPARE(o.value("thinking").toBool(true), false);
        QCOMPARE(fromJson(o, ChatSettings{}).thinking, false);
        QCOMPARE(fromJson(QJsonObject{}, off).thinking, false);  // absent: the base's
        QVERIFY(!(off == ChatSettings{}));  // a per-conversation override
    }

    void settingReachesTheRender() {
        auto engine = Engine::load(path_.toStdString(), {});
        QVERIFY2(engine, engine ? "" : engine.error().message.c_str());
        Engine& e = **engine;
        QCOMPARE(e.chatFormat().thinkingMode(), ThinkingMode::Switchable);
        const auto promptText = [&](bool thinking) {
            TurnInput input{.messages = {{ChatRole::User, "2+2?"}}, .restoreKv = false, .enableThinking = thinking};
            input.request.maxTokens = 4;
            auto turn = startTurn(e, nullptr, std::move(input));
            if (!turn) return std::string("startTurn failed: ") + turn.error().message;
            e.cancel(turn->id);
            while (!e.idle()) (void)e.step();
            return e.tokenizer().decode(turn->prompt);
        };
        const std::string on = promptText(true), off = promptText(false);
        QVERIFY2(on.ends_with("<|im_start|>user\n2+2?<|im_end|>\n<|im_start|>assistant\n"), on.c_str());
        QVERIFY2(off.ends_with("<|im_start|>assistant\n<think>\n\n</think>\n\n"), off.c_str());
    }

    // From the window's request (ChatSettings, as the settings panel stores them) through the
    // engine thread: the empty think block makes the prompt longer; the reply streams whole.
    void windowRequestCarriesTheSetting() {
        QObject context;
        EngineHost host;
        bool loaded = false;
        QList<int> promptTokens;
        QString text, failure;
        int finished = 0;
        connect(host.worker(), &EngineWorker::modelLoaded, &context, [&](const LoadedModel& m) {
            loaded = m.thinking == ThinkingMode::Switchable && m.reasoning.has_value();
        });
        connect(host.worker(), &EngineWorker::replyStarted, &context,
                [&](const ReplyStarted& s) { promptTokens << s.promptTokens; });
        connect(host.worker(), &EngineWorker::textReady, &context, [&](quint64, const QString& t) { text += t; });
        connect(host.worker(), &EngineWorker::replyFinished, &context, [&](const ReplyStats&) { ++finished; });
        connect(host.worker(), &EngineWorker::replyFailed, &context, [&](quint64, const QString& m) { failure = m; });
        host.loadModel(path_);
        QTRY_VERIFY_WITH_TIMEOUT(loaded, 30000);
        for (bool thinking : {true, false}) {
            ReplyRequest r;
            r.turns = {ChatTurn{ChatRole::User, "2+2?"}};
            r.settings.thinking = thinking;
            r.settings.sampling.temperature = 0;
            r.settings.maxTokens = 32;
            host.generate(r);
            QTRY_VERIFY_WITH_TIMEOUT(finished == (thinking ? 1 : 2) || !failure.isEmpty(), 30000);
            QVERIFY2(failure.isEmpty(), qPrintable(failure));
        }
        QCOMPARE(promptTokens.size(), 2);
        QVERIFY2(promptTokens[1] > promptTokens[0],
                 qPrintable(QString("%1 vs %2").arg(promptTokens[0]).arg(promptTokens[1])));
        QVERIFY(text.startsWith(QString::fromUtf8(test::kThinkingReply)));
    }

private:
    QTemporaryDir dir_;
    QString path_;
};

QTEST_GUILESS_MAIN(TestThinkingTurn)
#include "test_thinking_turn.moc"
