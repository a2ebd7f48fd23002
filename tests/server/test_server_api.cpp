// The server's pure parts, without a model or a socket: request bodies into engine requests
// (fields, defaults, the errors and the field they name), the reply objects OpenAI clients
// parse, and the admission gate's slots and queue.
#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>
#include <atomic>
#include <thread>

#include "app/server/api_reply.h"
#include "app/server/api_request.h"
#include "app/server/reply_stream.h"

using namespace hearth;
using namespace hearth::server;

namespace {

ApiLimits limits() {
    ApiLimits l;
    l.contextLength = 2048;
    l.defaults.temperature = 0.6f;  // a model's own default, kept when the request is silent
    return l;
}

std::expected<ApiRequest, ApiError> chat(const QByteArray& body) {
    return parseApiRequest(ApiKind::Chat, body, limits());
}

}  // namespace

class TestServerApi : public QObject {
    Q_OBJECT
private slots:
    void chatFieldsBecomeTheEngineRequest() {
        const auto r = chat(R"({"model":"whatever","messages":[{"role":"developer","content":"Be brief."},
            {"role":"user","content":[{"type":"text","text":"Hi "},{"type":"text","text":"there"}]}],
            "max_tokens":9,"max_completion_tokens":7,"temperature":0,"top_p":0.5,"top_k":3,"min_p":0.1,
            "presence_penalty":0.5,"frequency_penalty":-0.5,"repeat_penalty":1.2,"seed":42,"stop":"END",
            "logit_bias":{"17":-100,"3":2.5},"logprobs":true,"top_logprobs":2,"stream":true,
            "stream_options":{"include_usage":true},"unknown_field":{"x":1}})");
        QVERIFY(r);
        QCOMPARE(r->messages.size(), size_t(2));
        QCOMPARE(r->messages[0].role, ChatRole::System);
        QCOMPARE(r->messages[1].content, std::string("Hi there"));
        const GenerateRequest& g = r->request;
        QCOMPARE(g.maxTokens, 7);
        QCOMPARE(g.sampling.temperature, 0.0f);
        QCOMPARE(g.sampling.topP, 0.5f);
        QCOMPARE(g.sampling.topK, 3);
        QCOMPARE(g.sampling.minP, 0.1f);
        QCOMPARE(g.sampling.presencePenalty, 0.5f);
        QCOMPARE(g.sampling.frequencyPenalty, -0.5f);
        QCOMPARE(g.sampling.repeatPenalty, 1.2f);
        QCOMPARE(g.sampling.seed, uint64_t(42));
        QCOMPARE(g.stop, std::vector<std::string>{"END"});
        QCOMPARE(g.sampling.logitBias.size(), size_t(2));
        QVERIFY(g.logprobs && r->logprobs && g.nTopLogits == 2);
        QVERIFY(r->stream && r->includeUsage);
        QCOMPARE(r->model, std::string("whatever"));
    }

    void absentFieldsTakeTheDefaults() {
        const auto r = chat(R"({"messages":[{"role":"user","content":"Hi"}]})");
        QVERIFY(r);
        QCOMPARE(r->request.maxTokens, 2048);  // the reply may fill the context
        QCOMPARE(r->request.sampling.temperature, 0.6f);
        QVERIFY(!r->stream && !r->logprobs && r->request.stop.empty());
    }

    void completionPromptAndLegacyLogprobs() {
        const auto r = parseApiRequest(ApiKind::Completion, R"({"prompt":["Once upon"],"logprobs":3})", limits());
        QVERIFY(r);
        QCOMPARE(r->prompt, std::string("Once upon"));
        QVERIFY(r->logprobs);
        QCOMPARE(r->request.nTopLogits, 3);
        const auto tokens = parseApiRequest(ApiKind::Completion, R"({"prompt":[1,2,3]})", limits());
        QVERIFY(!tokens);
        QCOMPARE(tokens.error().param, std::string("prompt"));
    }

    void badRequestsNameTheirField_data() {
        QTest::addColumn<QByteArray>("body");
        QTest::addColumn<QString>("param");
        QTest::newRow("malformed") << QByteArray("{\"messages\": [") << "";
        QTest::newRow("not an object") << QByteArray("[1]") << "";
        QTest::newRow("no messages") << QByteArray("{}") << "messages";
        QTest::newRow("empty messages") << QByteArray(R"({"messages":[]})") << "messages";
        QTest::newRow("bad role") << QByteArray(R"({"messages":[{"role":"tool","content":"x"}]})") << "messages";
        QTest::newRow("temperature type")
            << QByteArray(R"({"messages":[{"role":"user","content":"x"}],"temperature":"hot"})") << "temperature";
        QTest::newRow("temperature range")
            << QByteArray(R"({"messages":[{"role":"user","content":"x"}],"temperature":3})") << "temperature";
        QTest::newRow("max_tokens fraction")
            << QByteArray(R"({"messages":[{"role":"user","content":"x"}],"max_tokens":1.5})") << "max_tokens";
        QTest::newRow("max_tokens beyond context")
            << QByteArray(R"({"messages":[{"role":"user","content":"x"}],"max_tokens":4096})") << "max_tokens";
        QTest::newRow("n") << QByteArray(R"({"messages":[{"role":"user","content":"x"}],"n":3})") << "n";
        QTest::newRow("stop type") << QByteArray(R"({"messages":[{"role":"user","content":"x"}],"stop":5})") << "stop";
        QTest::newRow("logit_bias key") << QByteArray(
                                               R"({"messages":[{"role":"user","content":"x"}],"logit_bias":{"a":1}})")
                                        << "logit_bias";
        QTest::newRow("logit_bias value")
            << QByteArray(R"({"messages":[{"role":"user","content":"x"}],"logit_bias":{"1":101}})") << "logit_bias";
        QTest::newRow("top_logprobs alone")
            << QByteArray(R"({"messages":[{"role":"user","content":"x"}],"top_logprobs":2})") << "top_logprobs";
        QTest::newRow("stream type") << QByteArray(R"({"messages":[{"role":"user","content":"x"}],"stream":"yes"})")
                                     << "stream";
        QTest::newRow("model type") << QByteArray(R"({"model":5,"messages":[{"role":"user","content":"x"}]})")
                                    << "model";
    }
    void badRequestsNameTheirField() {
        QFETCH(QByteArray, body);
        QFETCH(QString, param);
        const auto r = chat(body);
        QVERIFY(!r);
        QCOMPARE(r.error().status, 400);
        QCOMPARE(QString::fromStdString(r.error().param), param);
        const QJsonObject e = errorBody(r.error()).value("error").toObject();
        QCOMPARE(e.value("type").toString(), QString("invalid_request_error"));
        QVERIFY(!e.value("message").toString().isEmpty());
        QCOMPARE(e.value("param").isNull(), param.isEmpty());
    }

    void streamedChatChunks() {
        ApiRequest req = *chat(R"({"messages":[{"role":"user","content":"x"}],"stream":true,"logprobs":true,
                                   "stream_options":{"include_usage":true}})");
        ReplyFormat f(req, "chatcmpl-1", 1700000000, "m");
        const QJsonObject first = f.firstChunk();
        QCOMPARE(first.value("object").toString(), QString("chat.completion.chunk"));
        QCOMPARE(first["choices"][0]["delta"]["role"].toString(), QString("assistant"));
        StreamItem token{"Hi", TokenLogprob{"Hi", -0.25f, {{"Hi", -0.25f}, {"Yo", -2.0f}}}, false, {}, {}};
        const QJsonObject c = f.chunk(token);
        QCOMPARE(c["choices"][0]["delta"]["content"].toString(), QString("Hi"));
        QVERIFY(c["choices"][0]["finish_reason"].isNull());
        QCOMPARE(c["choices"][0]["logprobs"]["content"][0]["logprob"].toDouble(), -0.25);
        QCOMPARE(c["choices"][0]["logprobs"]["content"][0]["top_logprobs"][1]["token"].toString(), QString("Yo"));
        QCOMPARE(c["choices"][0]["logprobs"]["content"][0]["bytes"].toArray().size(), 2);
        QVERIFY(c.contains("usage") && c.value("usage").isNull());
        const QJsonObject end = f.chunk(StreamItem{.finish = true, .finishReason = "length"});
        QCOMPARE(end["choices"][0]["finish_reason"].toString(), QString("length"));
        const QJsonObject usage = f.usageChunk(Usage{10, 3, 8});
        QVERIFY(usage.value("choices").toArray().isEmpty());
        QCOMPARE(usage["usage"]["total_tokens"].toInt(), 13);
        QCOMPARE(usage["usage"]["prompt_tokens_details"]["cached_tokens"].toInt(), 8);
    }

    void wholeCompletionWithOffsets() {
        ApiRequest req = *parseApiRequest(ApiKind::Completion, R"({"prompt":"a","logprobs":1})", limits());
        ReplyFormat f(req, "cmpl-1", 1, "m");
        const std::vector<StreamItem> items{{"ab", TokenLogprob{"ab", -1, {{"ab", -1}}}, false, {}, {}},
                                            {"c", TokenLogprob{"c", -2, {{"c", -2}}}, false, {}, {}},
                                            {"", {}, true, "stop", {}}};
        const QJsonObject o = f.whole(items, Usage{1, 2, 0});
        QCOMPARE(o.value("object").toString(), QString("text_completion"));
        QCOMPARE(o["choices"][0]["text"].toString(), QString("abc"));
        QCOMPARE(o["choices"][0]["finish_reason"].toString(), QString("stop"));
        QCOMPARE(o["choices"][0]["logprobs"]["text_offset"].toArray(), (QJsonArray{0, 2}));
        QCOMPARE(o["choices"][0]["logprobs"]["token_logprobs"].toArray(), (QJsonArray{-1, -2}));
        QCOMPARE(o["usage"]["completion_tokens"].toInt(), 2);
    }

    // Two slots and one place in the queue: a fourth request is turned away; the waiting one
    // enters when a slot frees; close() releases a waiter with Closed.
    void gateSlotsAndQueue() {
        AdmissionGate gate(2, 1);
        QCOMPARE(gate.enter(), AdmissionGate::Admit::Now);
        QCOMPARE(gate.enter(), AdmissionGate::Admit::Now);
        std::atomic<int> third{-1};
        std::thread waiter([&] { third = static_cast<int>(gate.enter()); });
        QTRY_COMPARE(gate.waiting(), 1);
        QCOMPARE(gate.enter(), AdmissionGate::Admit::Full);
        QCOMPARE(third.load(), -1);
        gate.leave();
        waiter.join();
        QCOMPARE(third.load(), static_cast<int>(AdmissionGate::Admit::Now));
        QCOMPARE(gate.running(), 2);
        std::thread closed([&] { third = static_cast<int>(gate.enter()); });
        QTRY_COMPARE(gate.waiting(), 1);
        gate.close();
        closed.join();
        QCOMPARE(third.load(), static_cast<int>(AdmissionGate::Admit::Closed));
    }
};

QTEST_GUILESS_MAIN(TestServerApi)
#include "test_server_api.moc"
