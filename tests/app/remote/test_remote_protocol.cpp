// The remote engine's protocol pieces without a server: the API base from what a user types,
// the request body's fields (the sampling settings' mapping), server-sent events split at any
// byte, streamed chunks with reasoning_content and usage, the <think> span they become, error
// objects and the model list.
#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>

#include "app/remote/remote_protocol.h"

using namespace hearth;
using namespace hearth::remote;

class TestRemoteProtocol : public QObject {
    Q_OBJECT
private slots:
    void apiBaseFromTypedAddresses();
    void requestBodyMapsTheSettings();
    void requestBodyLeavesOutWhatIsOff();
    void sseSplitsAtAnyByte();
    void chunksCarryTextReasoningAndUsage();
    void reasoningBecomesAThinkSpan();
    void errorsAndModelLists();
};

void TestRemoteProtocol::apiBaseFromTypedAddresses() {
    for (const QString typed :
         {"http://gpu-box:8000", "http://gpu-box:8000/", " http://gpu-box:8000/v1 ", "http://gpu-box:8000/v1/"})
        QCOMPARE(apiBase(typed).value().toString(), QStringLiteral("http://gpu-box:8000/v1"));
    QCOMPARE(apiBase("https://example.org/openai").value().toString(), QStringLiteral("https://example.org/openai/v1"));
    QCOMPARE(endpointUrl(*apiBase("http://h:1"), "/models").toString(), QStringLiteral("http://h:1/v1/models"));
    QCOMPARE(hostLabel(*apiBase("http://h:1")), QStringLiteral("h:1"));
    QVERIFY(!apiBase("gpu-box:8000"));  // no scheme
    QVERIFY(!apiBase("ftp://h/"));
    QVERIFY(!apiBase(""));
}

void TestRemoteProtocol::requestBodyMapsTheSettings() {
    ReplyRequest r;
    r.settings.systemPrompt = "Be brief.";
    r.settings.maxTokens = 77;
    r.settings.seed = 42;
    r.settings.stop = {"END", "\n\n"};
    r.settings.sampling.temperature = 0.5f;
    r.settings.sampling.topP = 0.9f;
    r.settings.sampling.topK = 20;
    r.settings.sampling.minP = 0.1f;
    r.settings.sampling.repeatPenalty = 1.1f;
    r.settings.sampling.presencePenalty = 0.25f;
    r.settings.sampling.frequencyPenalty = 0.5f;
    r.turns = {{ChatRole::User, "Hi"},
               {ChatRole::Assistant, "<think>\nthe user greets\n</think>\n\nHello!"},
               {ChatRole::User, "Again"}};
    const QJsonObject b = chatRequestBody(r, "llama-70b");
    QCOMPARE(b["model"].toString(), QStringLiteral("llama-70b"));
    QCOMPARE(b["stream"].toBool(), true);
    QCOMPARE(b["stream_options"].toObject()["include_usage"].toBool(), true);
    QCOMPARE(b["max_tokens"].toInt(), 77);
    QCOMPARE(b["seed"].toInteger(), 42);
    QCOMPARE(b["stop"].toArray(), QJsonArray({"END", "\n\n"}));
    QCOMPARE(float(b["temperature"].toDouble()), 0.5f);
    QCOMPARE(float(b["top_p"].toDouble()), 0.9f);
    QCOMPARE(b["top_k"].toInt(), 20);
    QCOMPARE(float(b["min_p"].toDouble()), 0.1f);
    QCOMPARE(float(b["repeat_penalty"].toDouble()), 1.1f);
    QCOMPARE(float(b["repetition_penalty"].toDouble()), 1.1f);
    QCOMPARE(float(b["presence_penalty"].toDouble()), 0.25f);
    QCOMPARE(float(b["frequency_penalty"].toDouble()), 0.5f);
    const QJsonArray m = b["messages"].toArray();
    QCOMPARE(m.size(), 4);
    QCOMPARE(m[0].toObject()["role"].toString(), QStringLiteral("system"));
    QCOMPARE(m[0].toObject()["content"].toString(), QStringLiteral("Be brief."));
    QCOMPARE(m[1].toObject()["role"].toString(), QStringLiteral("user"));
    QCOMPARE(m[2].toObject()["role"].toString(), QStringLiteral("assistant"));
    QCOMPARE(m[2].toObject()["content"].toString(), QStringLiteral("Hello!"));  // the reasoning left out
    QCOMPARE(m[3].toObject()["content"].toString(), QStringLiteral("Again"));
}

void TestRemoteProtocol::requestBodyLeavesOutWhatIsOff() {
    ReplyRequest r;
    r.settings.seed = -1;
    r.settings.sampling.topK = 0;
    r.settings.sampling.minP = 0;
    r.settings.sampling.repeatPenalty = 1.0f;
    r.turns = {{ChatRole::User, "Hi"}};
    const QJsonObject b = chatRequestBody(r, "m");
    for (const char* key : {"seed", "top_k", "min_p", "repeat_penalty", "repetition_penalty", "stop", "typical_p"})
        QVERIFY2(!b.contains(key), key);
    QCOMPARE(b["messages"].toArray().size(), 1);  // no system prompt set: none sent
}

void TestRemoteProtocol::sseSplitsAtAnyByte() {
    const QByteArray stream =
        ": keep-alive\r\n\r\ndata: {\"a\":1}\r\n\r\nevent: x\ndata: line1\ndata: line2\n\ndata:[DONE]\n\n";
    const QList<QByteArray> expected{"{\"a\":1}", "line1\nline2", "[DONE]"};
    for (int cut = 0; cut <= stream.size(); ++cut) {
        SseReader reader;
        QList<QByteArray> events = reader.feed(stream.left(cut));
        events += reader.feed(stream.mid(cut));
        QCOMPARE(events, expected);
    }
    SseReader bytewise;
    QList<QByteArray> events;
    for (char c : stream) events += bytewise.feed(QByteArray(1, c));
    QCOMPARE(events, expected);
}

void TestRemoteProtocol::chunksCarryTextReasoningAndUsage() {
    ChunkDelta d = parseChunk(R"({"choices":[{"index":0,"delta":{"content":"Hel"},"finish_reason":null}]})");
    QCOMPARE(d.content, QStringLiteral("Hel"));
    QVERIFY(d.finishReason.isEmpty() && d.error.isEmpty() && !d.usage);
    d = parseChunk(R"({"choices":[{"delta":{"reasoning_content":"hmm"}}]})");
    QCOMPARE(d.reasoning, QStringLiteral("hmm"));
    d = parseChunk(R"({"choices":[{"delta":{},"finish_reason":"length"}]})");
    QCOMPARE(d.finishReason, QStringLiteral("length"));
    d = parseChunk(
        R"({"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":5,"prompt_tokens_details":{"cached_tokens":8}}})");
    QVERIFY(d.usage);
    QCOMPARE(d.usage->promptTokens, 12);
    QCOMPARE(d.usage->completionTokens, 5);
    QCOMPARE(d.usage->cachedTokens, 8);
    d = parseChunk(R"({"error":{"message":"out of memory","type":"server_error"}})");
    QCOMPARE(d.error, QStringLiteral("out of memory"));
    QVERIFY(!parseChunk("not json").error.isEmpty());
    QCOMPARE(finishReasonName("stop"), QStringLiteral("eos"));
    QCOMPARE(finishReasonName("length"), QStringLiteral("length"));
}

void TestRemoteProtocol::reasoningBecomesAThinkSpan() {
    ReasoningMarkup m;  // the pieces in order (an expression of several add() calls has none)
    QString text = m.add("Let me", {});
    text += m.add(" think.", {});
    text += m.add({}, "Answer");
    text += m.add({}, " here.");
    text += m.finish();
    QCOMPARE(text, QStringLiteral("<think>\nLet me think.\n</think>\n\nAnswer here."));
    ReasoningMarkup cut;  // cut off while reasoning: the span is closed at the end
    text = cut.add("partial", {});
    text += cut.finish();
    QCOMPARE(text, QStringLiteral("<think>\npartial\n</think>"));
    ReasoningMarkup plain;  // no reasoning: the text as it came
    text = plain.add({}, "Hi");
    text += plain.finish();
    QCOMPARE(text, QStringLiteral("Hi"));
}

void TestRemoteProtocol::errorsAndModelLists() {
    QCOMPARE(errorMessage(R"({"error":{"message":"Invalid API key","type":"invalid_request_error","code":401}})"),
             QStringLiteral("Invalid API key"));
    QCOMPARE(errorMessage(R"({"error":"model not loaded"})"), QStringLiteral("model not loaded"));
    QCOMPARE(errorMessage(R"({"detail":"Not Found"})"), QStringLiteral("Not Found"));
    QCOMPARE(errorMessage("502 Bad Gateway\n<html>"), QStringLiteral("502 Bad Gateway"));
    QCOMPARE(modelIds(R"({"object":"list","data":[{"id":"a","object":"model"},{"id":"b"}]})").value(),
             QStringList({"a", "b"}));
    QVERIFY(!modelIds("<html>"));
    QVERIFY(!modelIds(R"({"models":[]})"));
}

QTEST_GUILESS_MAIN(TestRemoteProtocol)
#include "test_remote_protocol.moc"
