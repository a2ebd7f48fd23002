// Conformance: Hearth's chat formats against the real templates rendered by Jinja2 (the oracle's
// environment, as transformers renders them), byte for byte, for every template of
// chat_templates.json and SmolLM2's GGUF template, over several conversations, with and without
// the generation prompt, and for templates that read Qwen 3's enable_thinking switch, with it true
// and false. Conversations a template rejects (raise_exception) are listed, not compared.
#include <QFile>
#include <QJsonArray>
#include <QtTest>

#include <QTemporaryDir>

#include "engine/engine.h"
#include "engine/model/gguf.h"
#include "engine/model/synth.h"
#include "engine/tokenizer/chat_format.h"
#include "tests/support/python_json.h"
#include "tests/support/test_env.h"

using namespace hearth;
using namespace hearth::test;

namespace {

struct TemplateCase {
    QString name, family, bos, eos, text;
};

// The corpus's messages; a role that is not one of ChatRole's names is an error, not a guess.
Result<std::vector<ChatMessage>> toMessages(const QJsonArray& conversation) {
    std::vector<ChatMessage> out;
    for (const QJsonValue& m : conversation) {
        auto role = parseChatRole(m["role"].toString().toStdString());
        if (!role) return std::unexpected(role.error());
        out.push_back({*role, m["content"].toString().toStdString()});
    }
    return out;
}

// The enable_thinking values a template is rendered with: both where the template reads the variable.
std::vector<bool> thinkingModes(const TemplateCase& t) {
    return t.text.contains("enable_thinking") ? std::vector<bool>{true, false} : std::vector<bool>{true};
}

std::string joined(const std::vector<TextSegment>& segments) {
    std::string out;
    for (const TextSegment& s : segments) out += s.text;
    return out;
}

// The real templates: chat_templates.json's, plus those read from the real models' GGUF files.
std::vector<TemplateCase> loadTemplates(const QJsonObject& data) {
    std::vector<TemplateCase> out;
    for (const QJsonValue& v : data["templates"].toArray())
        out.push_back({v["name"].toString(), v["family"].toString(), v["bos_token"].toString(),
                       v["eos_token"].toString(), v["template"].toString()});
    for (const QJsonValue& v : data["gguf_templates"].toArray()) {
        auto file = GgufFile::open(modelFile(v["model"].toString()).toStdString());
        if (!file) {
            if (underCi()) qFatal("cannot open %s", qPrintable(v["model"].toString()));
            qWarning("skipping %s: model file missing", qPrintable(v["name"].toString()));
            continue;
        }
        const GgufValue* t = (*file)->find("tokenizer.chat_template");
        if (!t || !t->asString()) qFatal("%s has no chat template", qPrintable(v["model"].toString()));
        out.push_back({v["name"].toString(), v["family"].toString(), v["bos_token"].toString(),
                       v["eos_token"].toString(), QString::fromStdString(*t->asString())});
    }
    return out;
}

}  // namespace

class TestConformanceChat : public QObject {
    Q_OBJECT
private slots:
    void rendersLikeJinja();
    void familiesEndToEnd_data();
    void familiesEndToEnd();
};

void TestConformanceChat::rendersLikeJinja() {
    HEARTH_REQUIRE_FILE(oraclePython());
    QFile f(sourceDir() + "/tests/conformance/chat_templates.json");
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QJsonObject data = QJsonDocument::fromJson(f.readAll()).object();
    const std::vector<TemplateCase> templates = loadTemplates(data);
    const QJsonArray conversations = data["conversations"].toArray();
    QVERIFY(templates.size() >= 10 && conversations.size() >= 4);

    QJsonArray cases;
    for (const TemplateCase& t : templates)
        for (const QJsonValue& conversation : conversations)
            for (bool generation : {true, false})
                for (bool thinking : thinkingModes(t))
                    cases.append(QJsonObject{{"template", t.text},
                                             {"bos_token", t.bos},
                                             {"eos_token", t.eos},
                                             {"messages", conversation},
                                             {"add_generation_prompt", generation},
                                             {"enable_thinking", thinking}});
    const QJsonObject answer =
        askPython(oraclePython(), sourceDir() + "/tests/conformance/oracle.py", {{"op", "chat"}, {"cases", cases}});
    QVERIFY2(!answer.contains("error"), qPrintable(answer["error"].toString()));
    const QJsonArray renders = answer["renders"].toArray();
    QCOMPARE(renders.size(), cases.size());

    qInfo("| template | family | metric | hearth | oracle (Jinja2) | difference |");
    QStringList failures;
    qsizetype k = 0;
    for (const TemplateCase& t : templates) {
        const ChatFormat format =
            ChatFormat::detect(t.text.toStdString(), "", {t.bos.toStdString(), t.eos.toStdString()});
        if (QString(format.name()) != t.family) failures << t.name + ": detected as " + format.name();
        int nSame = 0, nCompared = 0, nRejected = 0;
        for (const QJsonValue& conversation : conversations)
            for (bool generation : {true, false})
                for (bool thinking : thinkingModes(t)) {
                    const QJsonObject r = renders[k++].toObject();
                    if (r.contains("error")) {
                        ++nRejected;
                        continue;
                    }
                    ++nCompared;
                    const RenderOptions options{.addGenerationPrompt = generation, .enableThinking = thinking};
                    const auto messages = toMessages(conversation.toArray());
                    if (!messages) {
                        failures << t.name + ": " + QString::fromStdString(messages.error().message);
                        continue;
                    }
                    const std::string ours = joined(format.render(*messages, options));
                    if (ours == r["text"].toString().toStdString()) {
                        ++nSame;
                        continue;
                    }
                    failures << QString("%1 (generation prompt %2, enable_thinking %3):\n  hearth: %4\n  jinja:  %5")
                                    .arg(t.name)
                                    .arg(generation)
                                    .arg(thinking)
                                    .arg(QString::fromStdString(ours).toUtf8().toPercentEncoding(" <>|/[]!?.:"))
                                    .arg(r["text"].toString().toUtf8().toPercentEncoding(" <>|/[]!?.:"));
                }
        qInfo("| %s | %s | renders identical | %d of %d | %d rendered, %d rejected by the template | %d |",
              qPrintable(t.name), format.name(), nSame, nCompared, nCompared, nRejected, nCompared - nSame);
    }
    QVERIFY2(failures.isEmpty(), qPrintable(failures.join("\n")));
}

// Each family end to end on a synthetic model of its layout carrying the family's real
// vocabulary (llama.cpp's ggml-vocab-*.gguf) and its real template: Hearth recognises the
// format, its chat prompt is token for token what llama.cpp gets from rendering the file's
// template and tokenizing it (special tokens parsed), and Hearth ends generation on exactly the
// control tokens llama.cpp does. No Gemma 2 or DeepSeek-R1 vocabulary is in the archive;
// real Gemma 3 files are covered by test_gemma3.
void TestConformanceChat::familiesEndToEnd_data() {
    QTest::addColumn<QString>("shape");
    QTest::addColumn<QString>("vocab");
    QTest::addColumn<QString>("templateName");
    QTest::addColumn<QString>("format");
    QTest::addColumn<QString>("endOfTurn");
    QTest::newRow("qwen2.5") << "tiny-qwen2"
                             << "qwen2"
                             << "qwen2.5-instruct"
                             << "chatml"
                             << "<|im_end|>";
    QTest::newRow("qwen3") << "tiny-qwen3"
                           << "qwen2"
                           << "qwen3"
                           << "chatml"
                           << "<|im_end|>";
    QTest::newRow("llama3.2") << "tiny"
                              << "llama-bpe"
                              << "llama3.2-instruct"
                              << "llama3"
                              << "<|eot_id|>";
    QTest::newRow("phi3.5") << "tiny-phi3"
                            << "phi-3"
                            << "phi3.5-mini"
                            << "phi3"
                            << "<|end|>";
}

void TestConformanceChat::familiesEndToEnd() {
    QFETCH(QString, shape);
    QFETCH(QString, vocab);
    QFETCH(QString, templateName);
    QFETCH(QString, format);
    QFETCH(QString, endOfTurn);
    HEARTH_REQUIRE_FILE(oraclePython());
    const QString vocabPath = llamaVocabDir() + "/ggml-vocab-" + vocab + ".gguf";
    HEARTH_REQUIRE_FILE(vocabPath);
    QFile f(sourceDir() + "/tests/conformance/chat_templates.json");
    QVERIFY(f.open(QIODevice::ReadOnly));
    QString templateText;
    for (const QJsonValue& v : QJsonDocument::fromJson(f.readAll()).object()["templates"].toArray())
        if (v["name"].toString() == templateName) templateText = v["template"].toString();
    QVERIFY2(!templateText.isEmpty(), qPrintable("no template " + templateName));

    QTemporaryDir dir;
    const QString path = dir.filePath(shape + ".gguf");
    auto s = findSynthShape(shape.toStdString());
    QVERIFY(s.has_value());
    auto written = writeSynthModel(*s,
                                   {.type = DType::Q8_0,
                                    .seed = 1,
                                    .vocabFrom = vocabPath.toStdString(),
                                    .chatTemplate = templateText.toStdString()},
                                   path.toStdString());
    QVERIFY2(written, written ? "" : written.error().message.c_str());
    auto engine = Engine::load(path.toStdString(), EngineOptions{});
    QVERIFY2(engine, engine ? "" : engine.error().message.c_str());
    const Engine& e = **engine;
    QCOMPARE(QString(e.chatFormat().name()), format);
    QVERIFY2(!e.chatFormat().isFallback(), e.chatFormat().fallbackReason().c_str());

    const std::vector<ChatMessage> messages{{ChatRole::System, "You are terse."},
                                            {ChatRole::User, "Name a colour."},
                                            {ChatRole::Assistant, "Teal."},
                                            {ChatRole::User, "And a number? Answer in 中文."}};
    QJsonArray jsonMessages;
    for (const ChatMessage& m : messages)
        jsonMessages.append(QJsonObject{{"role", QString::fromLatin1(chatRoleName(m.role))},
                                        {"content", QString::fromStdString(m.content)}});
    const Tokenizer& tok = e.tokenizer();
    QJsonArray candidates;  // every control piece of the vocabulary
    for (TokenId id = 0; id < tok.nVocab(); ++id)
        if (tok.isControl(id)) candidates.append(id);
    const QJsonObject answer = askPython(oraclePython(), sourceDir() + "/tests/conformance/oracle.py",
                                         {{"op", "chat_tokens"},
                                          {"model", path},
                                          {"messages", jsonMessages},
                                          {"add_generation_prompt", true},
                                          {"bos_token", QString::fromStdString(tok.pieceText(tok.bos()))},
                                          {"eos_token", QString::fromStdString(tok.pieceText(tok.eos()))},
                                          {"eog_candidates", candidates}});
    QVERIFY2(!answer.contains("error"), qPrintable(answer["error"].toString()));
    QJsonArray ours;
    for (TokenId id : e.chatPrompt(messages)) ours.append(id);
    qInfo("| %s | %s | chat prompt tokens identical | %s (%lld tokens) |", qPrintable(templateName), qPrintable(format),
          ours == answer["tokens"].toArray() ? "yes" : "no", static_cast<long long>(ours.size()));
    QCOMPARE(ours, answer["tokens"].toArray());

    QJsonArray ourEog;
    for (const QJsonValue& id : candidates)
        if (tok.isEndOfGeneration(id.toInt())) ourEog.append(id);
    QStringList names;
    for (const QJsonValue& id : ourEog) names << QString::fromStdString(tok.pieceText(id.toInt()));
    qInfo("| %s | end of generation | %s | llama.cpp: %lld tokens |", qPrintable(templateName),
          qPrintable(names.join(" ")), static_cast<long long>(answer["eog"].toArray().size()));
    QCOMPARE(ourEog, answer["eog"].toArray());
    QVERIFY2(names.contains(endOfTurn), qPrintable(endOfTurn + " does not end generation"));
}

QTEST_GUILESS_MAIN(TestConformanceChat)
#include "test_conformance_chat.moc"
