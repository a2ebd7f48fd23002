// The default chat model end to end through hearth-cli: SmolLM2-135M-Instruct (Q4_1, BPE
// vocabulary, ChatML) answers a factual question, replies to Chinese in valid UTF-8, and its
// prompt is rendered exactly as its chat template would.
#include <QJsonArray>
#include <QStringDecoder>
#include <QtTest>

#include "engine/engine.h"
#include "tests/support/cli_runner.h"

using namespace hearth;
using namespace hearth::test;

class TestSmolLm : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void answersCapitalOfFrance();
    void repliesToChineseInValidUtf8();
    void chatPromptMatchesTemplate();
    void infoDescribesModel();

private:
    QString model_;
};

void TestSmolLm::initTestCase() {
    model_ = modelFile("SmolLM2-135M-Instruct.Q4_1.gguf");
    HEARTH_REQUIRE_FILE(model_);
}

void TestSmolLm::answersCapitalOfFrance() {
    // The question as one user turn (the template adds its default system prompt), then the
    // assistant's turn begun with "The capital of France is": the greedy continuation names
    // Paris. (The free-running greedy reply is printed too; see README "Known behaviour".)
    auto engine = Engine::load(model_.toStdString(), {});
    QVERIFY2(engine, engine ? "" : engine.error().message.c_str());
    Engine& e = **engine;
    GenerateRequest req;
    req.prompt = e.chatPrompt({{ChatRole::User, "What is the capital of France?"}});
    req.sampling.temperature = 0;
    req.maxTokens = 24;
    const auto collect = [](std::string& into) {
        return [&into](TokenId, std::string_view piece) {
            into += piece;
            return true;
        };
    };
    std::string freeReply;
    auto free = e.generate(req, collect(freeReply));
    QVERIFY(free);
    qInfo("free-running greedy reply: %s", freeReply.c_str());
    const double tps = free->timings.decodeTokens / free->timings.decodeMs * 1000.0;
    qInfo("decode %.2f tokens/s (%d tokens)", tps, free->timings.decodeTokens);

    const std::vector<TokenId> lead = e.tokenizer().encode("The capital of France is", false, false);
    req.prompt.insert(req.prompt.end(), lead.begin(), lead.end());
    req.maxTokens = 4;
    std::string continuation;
    QVERIFY(e.generate(req, collect(continuation)));
    qInfo("continuation of \"The capital of France is\": %s", continuation.c_str());
    QVERIFY2(continuation.find("Paris") != std::string::npos, continuation.c_str());
}

void TestSmolLm::repliesToChineseInValidUtf8() {
    const CliRun r = runCli({"generate", "--model", model_, "--prompt", QString::fromUtf8("法国的首都是哪里？"),
                             "--temp", "0", "--max-tokens", "24"});
    QVERIFY2(!r.crashed && r.exitCode == 0, r.err.constData());
    QStringDecoder strict(QStringDecoder::Utf8, QStringDecoder::Flag::Stateless);
    const QString decoded = strict.decode(r.out);
    QVERIFY2(!strict.hasError(), "the streamed reply is not valid UTF-8");
    QVERIFY(!decoded.trimmed().isEmpty());
    qInfo("reply: %s", qPrintable(decoded.trimmed()));
}

void TestSmolLm::chatPromptMatchesTemplate() {
    // What SmolLM2's template renders for one user message: its default system prompt, then the
    // turn, then the opened assistant turn. Control tokens are split out first and the text
    // between them tokenized as plain text (as llama.cpp does); the user's "<|im_start|>" is
    // plain text, and no BOS is added (add_bos_token is false).
    const QString user = "Hi <|im_start|> there";
    const CliRun gen = runCli({"generate", "--model", model_, "--prompt", user, "--max-tokens", "0", "--json"});
    QVERIFY2(!gen.crashed && gen.exitCode == 0, gen.err.constData());
    const auto plain = [&](const QString& text) {
        const CliRun r = runCli({"tokenize", "--model", model_, "--text", text, "--json"});
        return r.json()["tokens"].toArray();
    };
    const QJsonValue imStart(1), imEnd(2);
    QJsonArray expected;
    const auto append = [&](const QJsonArray& ids) {
        for (const QJsonValue& v : ids) expected.append(v);
    };
    expected.append(imStart);
    append(plain("system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face"));
    expected.append(imEnd);
    append(plain("\n"));
    expected.append(imStart);
    append(plain("user\n" + user));
    expected.append(imEnd);
    append(plain("\n"));
    expected.append(imStart);
    append(plain("assistant\n"));
    QCOMPARE(gen.json()["prompt_tokens"].toArray(), expected);
}

void TestSmolLm::infoDescribesModel() {
    const CliRun r = runCli({"info", "--model", model_});
    QVERIFY2(!r.crashed && r.exitCode == 0, r.err.constData());
    const QString out = QString::fromUtf8(r.out);
    QVERIFY(out.contains("architecture: llama"));
    QVERIFY(out.contains("chat format: chatml"));
    QVERIFY(out.contains("Q4_1"));
    QVERIFY(out.contains("CPU (reference): available"));
}

QTEST_GUILESS_MAIN(TestSmolLm)
#include "test_smollm.moc"
