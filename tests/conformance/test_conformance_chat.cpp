// Conformance: Hearth's chat formats against the real templates rendered by Jinja2 (the oracle's
// environment, as transformers renders them), byte for byte, for every template of
// chat_templates.json and SmolLM2's GGUF template, over several conversations, with and without
// the generation prompt, and for templates that read Qwen 3's enable_thinking switch, with it true
// and false. Conversations a template rejects (raise_exception) are listed, not compared.
#include <QFile>
#include <QJsonArray>
#include <QtTest>

#include "engine/model/gguf.h"
#include "engine/tokenizer/chat_format.h"
#include "tests/support/python_json.h"
#include "tests/support/test_env.h"

using namespace hearth;
using namespace hearth::test;

namespace {

struct TemplateCase {
    QString name, family, bos, eos, text;
};

std::vector<ChatMessage> toMessages(const QJsonArray& conversation) {
    std::vector<ChatMessage> out;
    for (const QJsonValue& m : conversation)
        out.push_back({m["role"].toString().toStdString(), m["content"].toString().toStdString()});
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
                    cases.append(QJsonObject{{"template", t.text}, {"bos_token", t.bos}, {"eos_token", t.eos},
                                             {"messages", conversation}, {"add_generation_prompt", generation},
                                             {"enable_thinking", thinking}});
    const QJsonObject answer = askPython(oraclePython(), sourceDir() + "/tests/conformance/oracle.py",
                                         {{"op", "chat"}, {"cases", cases}});
    QVERIFY2(!answer.contains("error"), qPrintable(answer["error"].toString()));
    const QJsonArray renders = answer["renders"].toArray();
    QCOMPARE(renders.size(), cases.size());

    qInfo("| template | family | metric | hearth | oracle (Jinja2) | difference |");
    QStringList failures;
    qsizetype k = 0;
    for (const TemplateCase& t : templates) {
        const ChatFormat format = ChatFormat::detect(t.text.toStdString(), "", {t.bos.toStdString(), t.eos.toStdString()});
        if (QString(format.name()) != t.family) failures << t.name + ": detected as " + format.name();
        int nSame = 0, nCompared = 0, nRejected = 0;
        for (const QJsonValue& conversation : conversations)
            for (bool generation : {true, false})
                for (bool thinking : thinkingModes(t)) {
                    const QJsonObject r = renders[k++].toObject();
                    if (r.contains("error")) { ++nRejected; continue; }
                    ++nCompared;
                    const RenderOptions options{.addGenerationPrompt = generation, .enableThinking = thinking};
                    const std::string ours = joined(format.render(toMessages(conversation.toArray()), options));
                    if (ours == r["text"].toString().toStdString()) { ++nSame; continue; }
                    failures << QString("%1 (generation prompt %2, enable_thinking %3):\n  hearth: %4\n  jinja:  %5")
                                    .arg(t.name).arg(generation).arg(thinking)
                                    .arg(QString::fromStdString(ours).toUtf8().toPercentEncoding(" <>|/[]!?.:"))
                                    .arg(r["text"].toString().toUtf8().toPercentEncoding(" <>|/[]!?.:"));
                }
        qInfo("| %s | %s | renders identical | %d of %d | %d rendered, %d rejected by the template | %d |",
              qPrintable(t.name), format.name(), nSame, nCompared, nCompared, nRejected, nCompared - nSame);
    }
    QVERIFY2(failures.isEmpty(), qPrintable(failures.join("\n")));
}

QTEST_GUILESS_MAIN(TestConformanceChat)
#include "test_conformance_chat.moc"
