// Chat format tests: detection from template text, and rendering that matches what each
// family's Jinja template renders (SmolLM2's and Qwen 2.5's ChatML with their default system
// prompts, Qwen 3's thinking ChatML, Gemma 2/3, Llama 2/3, Mistral, Phi-3, Zephyr), with template
// text and message content in the right kind of segment. test_conformance_chat compares the
// renderings with Jinja2's.
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

#include "engine/tokenizer/chat_format.h"

using namespace hearth;

namespace {

// SmolLM2-135M-Instruct's tokenizer.chat_template, as stored in its GGUF.
const std::string kSmolTemplate =
    "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}"
    "{{ '<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n' }}"
    "{% endif %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}";

std::string joined(const std::vector<TextSegment>& segments) {
    std::string out;
    for (const TextSegment& s : segments) out += s.text;
    return out;
}

// The text of the segments that must never be parsed for control tokens.
std::string plainText(const std::vector<TextSegment>& segments) {
    std::string out;
    for (const TextSegment& s : segments)
        if (!s.allowSpecial) out += s.text + "|";
    return out;
}

}  // namespace

class TestChatFormat : public QObject {
    Q_OBJECT

private slots:
    void detectsFamilies();
    void extractsDefaultSystemPrompt();
    void chatmlWithoutSystemUsesDefault();
    void chatmlWithSystem();
    void chatmlMultiTurn();
    void gemmaRendering();
    void gemmaSystemPrefixesFirstTurn();
    void llama2Rendering();
    void plainRendering();
    void detectsEveryRealTemplate();
    void variantsFromTemplateText();
    void llama3Rendering();
    void mistralRendering();
    void phi3Rendering();
    void zephyrRendering();
    void vocabularyTextsReplaceFamilyDefaults();
    void qwen3Thinking();
    void deepSeekR1Rendering();
    void unrecognisedTemplateFallsBackToTheFamily();
};

void TestChatFormat::detectsFamilies() {
    QCOMPARE(ChatFormat::detect(kSmolTemplate, "llama").kind(), ChatFormatKind::ChatML);
    QCOMPARE(ChatFormat::detect("{{ '<start_of_turn>' + role }}", "gemma3").kind(), ChatFormatKind::Gemma);
    QCOMPARE(ChatFormat::detect("", "gemma3").kind(), ChatFormatKind::Gemma);
    QCOMPARE(ChatFormat::detect("", "gemma2").kind(), ChatFormatKind::Gemma);
    QCOMPARE(ChatFormat::detect("", "llama").kind(), ChatFormatKind::Plain);
    QCOMPARE(ChatFormat::detect("{{ bos_token + '[INST] <<SYS>>\\n' + content + ' [/INST]' }}", "llama").kind(),
             ChatFormatKind::Llama2);
    QCOMPARE(ChatFormat::detect("{{ bos_token + '[INST] ' + content + ' [/INST]' }}", "llama").kind(),
             ChatFormatKind::Mistral);
    QCOMPARE(ChatFormat::detect("{{ '<|start_header_id|>' + message['role'] + '<|end_header_id|>' }}", "llama").kind(),
             ChatFormatKind::Llama3);
    QCOMPARE(ChatFormat::detect("{{'<|user|>\\n' + message['content'] + '<|end|>\\n'}}{{ '<|assistant|>\\n' }}", "phi3")
                 .kind(),
             ChatFormatKind::Phi3);
    QCOMPARE(
        ChatFormat::detect("{{ '<|user|>\\n' + message['content'] + eos_token }}{{ '<|assistant|>' }}", "llama").kind(),
        ChatFormatKind::Zephyr);
    // Mistral's v7 format ([SYSTEM_PROMPT]) is not the [INST] family: unrecognised.
    QVERIFY(
        ChatFormat::detect("{{ '[SYSTEM_PROMPT]' + s + '[/SYSTEM_PROMPT]' }}{{ '[INST]' + c + '[/INST]' }}", "llama")
            .isFallback());
    QCOMPARE(ChatFormat::detect("{{ messages }}", "llama").kind(), ChatFormatKind::Plain);
    QVERIFY(ChatFormat::detect("{{ messages }}", "llama").isFallback());
    QVERIFY(ChatFormat::detect("", "llama").isFallback());
    QVERIFY(!ChatFormat::detect("", "llama").fallbackReason().empty());
    QVERIFY(!ChatFormat::detect(kSmolTemplate, "llama").isFallback());
    QVERIFY(!ChatFormat::detect("", "gemma3").isFallback());
    QCOMPARE(QString(ChatFormat::detect(kSmolTemplate, "llama").name()), QString("chatml"));
    QCOMPARE(QString(ChatFormat(ChatFormatKind::Gemma).name()), QString("gemma"));
    QCOMPARE(ChatFormat(ChatFormatKind::ChatML).endOfTurnPieces(), std::vector<std::string>{"<|im_end|>"});
    QCOMPARE(ChatFormat(ChatFormatKind::Gemma).endOfTurnPieces(), std::vector<std::string>{"<end_of_turn>"});
    QVERIFY(ChatFormat(ChatFormatKind::Gemma).startsWithBos());
    QVERIFY(!ChatFormat(ChatFormatKind::ChatML).startsWithBos());
}

void TestChatFormat::extractsDefaultSystemPrompt() {
    QCOMPARE(ChatFormat::detect(kSmolTemplate, "llama").defaultSystemPrompt(),
             std::string("You are a helpful AI assistant named SmolLM, trained by Hugging Face"));
    // The same template with the newline written as a Jinja escape.
    const std::string escaped = "{{ '<|im_start|>system\\nYou\\'re helpful.<|im_end|>\\n' }}";
    QCOMPARE(ChatFormat::detect(escaped, "llama").defaultSystemPrompt(), std::string("You're helpful."));
    // A template that only renders the conversation's own system message has no default.
    const std::string noDefault = "{{ '<|im_start|>system\\n' + messages[0]['content'] + '<|im_end|>\\n' }}";
    QCOMPARE(ChatFormat::detect(noDefault, "llama").defaultSystemPrompt(), std::string());
    // Qwen 2 / 2.5: the first system literals are followed by template code (the tools branch, the
    // conversation's own system message); the default is the literal that is one string.
    const std::string qwen =
        "{%- if tools %}{{- '<|im_start|>system\\n' }}{{- messages[0]['content'] }}"
        "{%- elif messages[0]['role'] == 'system' %}{{- '<|im_start|>system\\n' + messages[0]['content'] + "
        "'<|im_end|>\\n' }}"
        "{%- else %}{{- '<|im_start|>system\\nYou are Qwen, created by Alibaba Cloud. You are a helpful "
        "assistant.<|im_end|>\\n' }}"
        "{%- endif %}";
    const ChatFormat qwen25 = ChatFormat::detect(qwen, "qwen2");
    QCOMPARE(qwen25.kind(), ChatFormatKind::ChatML);
    QCOMPARE(qwen25.defaultSystemPrompt(),
             std::string("You are Qwen, created by Alibaba Cloud. You are a helpful assistant."));
    QCOMPARE(joined(qwen25.render({{ChatRole::User, "Hi"}}, true)),
             std::string("<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant."
                         "<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"));
}

void TestChatFormat::chatmlWithoutSystemUsesDefault() {
    const ChatFormat format = ChatFormat::detect(kSmolTemplate, "llama");
    const auto segments = format.render({{ChatRole::User, "What is <|im_start|>?"}}, true);
    QCOMPARE(joined(segments),
             std::string("<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face"
                         "<|im_end|>\n<|im_start|>user\nWhat is <|im_start|>?<|im_end|>\n<|im_start|>assistant\n"));
    QCOMPARE(plainText(segments), std::string("What is <|im_start|>?|"));
}

void TestChatFormat::chatmlWithSystem() {
    const ChatFormat format = ChatFormat::detect(kSmolTemplate, "llama");
    const auto segments = format.render({{ChatRole::System, "Be brief."}, {ChatRole::User, "Hi"}}, true);
    QCOMPARE(joined(segments),
             std::string("<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
                         "<|im_start|>assistant\n"));
    QCOMPARE(plainText(segments), std::string("Be brief.|Hi|"));
    // Without a generation prompt the assistant's turn is not opened.
    QCOMPARE(joined(format.render({{ChatRole::System, "S"}}, false)), std::string("<|im_start|>system\nS<|im_end|>\n"));
    QVERIFY(format.render({}, false).empty());
}

void TestChatFormat::chatmlMultiTurn() {
    const ChatFormat format(ChatFormatKind::ChatML);  // no default system prompt
    const auto segments =
        format.render({{ChatRole::User, "1+1?"}, {ChatRole::Assistant, "2"}, {ChatRole::User, "  and 2+2? "}}, true);
    QCOMPARE(joined(segments),
             std::string("<|im_start|>user\n1+1?<|im_end|>\n<|im_start|>assistant\n2<|im_end|>\n"
                         "<|im_start|>user\n  and 2+2? <|im_end|>\n<|im_start|>assistant\n"));
}

void TestChatFormat::gemmaRendering() {
    const ChatFormat format = ChatFormat::detect("", "gemma3");
    const auto segments =
        format.render({{ChatRole::User, "Hello"}, {ChatRole::Assistant, "Hi!"}, {ChatRole::User, " Bye \n"}}, true);
    QCOMPARE(joined(segments),
             std::string("<bos><start_of_turn>user\nHello<end_of_turn>\n<start_of_turn>model\nHi!"
                         "<end_of_turn>\n<start_of_turn>user\nBye<end_of_turn>\n"
                         "<start_of_turn>model\n"));
    QVERIFY(segments.front().allowSpecial);
    QVERIFY(segments.front().text.starts_with("<bos>"));
    QCOMPARE(plainText(segments), std::string("Hello|Hi!|Bye|"));
}

void TestChatFormat::gemmaSystemPrefixesFirstTurn() {
    const ChatFormat format(ChatFormatKind::Gemma);
    const auto segments = format.render({{ChatRole::System, "You are terse."}, {ChatRole::User, "Why?"}}, true);
    QCOMPARE(joined(segments),
             std::string("<bos><start_of_turn>user\nYou are terse.\n\nWhy?<end_of_turn>\n"
                         "<start_of_turn>model\n"));
    QCOMPARE(plainText(segments), std::string("You are terse.\n\nWhy?|"));
}

void TestChatFormat::llama2Rendering() {
    const ChatFormat format(ChatFormatKind::Llama2);
    const auto segments = format.render(
        {{ChatRole::System, "Sys"}, {ChatRole::User, "Hi "}, {ChatRole::Assistant, "Hello"}, {ChatRole::User, "More"}},
        true);
    QCOMPARE(joined(segments),
             std::string("<s>[INST] <<SYS>>\nSys\n<</SYS>>\n\nHi [/INST] Hello </s>"
                         "<s>[INST] More [/INST]"));
    QVERIFY(format.startsWithBos());
}

void TestChatFormat::plainRendering() {
    const ChatFormat format(ChatFormatKind::Plain);
    const auto segments = format.render({{ChatRole::User, "Once upon"}, {ChatRole::User, "a time"}}, true);
    QCOMPARE(joined(segments), std::string("Once upon\na time"));
    for (const TextSegment& s : segments) QVERIFY(!s.allowSpecial);
    QVERIFY(format.endOfTurnPieces().empty());
}

// Every real upstream template of tests/conformance/chat_templates.json is detected as its family.
void TestChatFormat::detectsEveryRealTemplate() {
    QFile f(qEnvironmentVariable("HEARTH_SOURCE_DIR") + "/tests/conformance/chat_templates.json");
    QVERIFY2(f.open(QIODevice::ReadOnly), "tests/conformance/chat_templates.json");
    const QJsonArray templates = QJsonDocument::fromJson(f.readAll()).object()["templates"].toArray();
    QVERIFY(templates.size() >= 10);
    QStringList families;
    for (const QJsonValue& v : templates) {
        const QJsonObject t = v.toObject();
        const ChatFormat format = ChatFormat::detect(t["template"].toString().toStdString(), "llama");
        QVERIFY2(QString(format.name()) == t["family"].toString(), qPrintable(t["name"].toString()));
        QVERIFY(!format.isFallback());
        families << t["family"].toString();
    }
    for (const char* family : {"chatml", "deepseek-r1", "gemma", "llama2", "llama3", "mistral", "phi3", "zephyr"})
        QVERIFY2(families.contains(family), family);
}

void TestChatFormat::variantsFromTemplateText() {
    const ChatVariant v01 =
        ChatFormat::detect("{{ bos_token }}{{ '[INST] ' + c + ' [/INST]' }}{{ c + eos_token + ' ' }}", "llama")
            .variant();
    QVERIFY(v01.bos && v01.spaceBeforeInstClose && v01.spaceAfterEos && !v01.spaceBeforeAnswer &&
            !v01.systemInLastUser);
    const ChatVariant v03 =
        ChatFormat::detect(
            "{{- bos_token }}{%- if loop.last and system_message is defined %}{{- '[INST] ' + c + '[/INST]' }}"
            "{{- ' ' + message['content'] + eos_token}}",
            "llama")
            .variant();
    QVERIFY(v03.bos && !v03.spaceBeforeInstClose && !v03.spaceAfterEos && v03.spaceBeforeAnswer &&
            v03.systemInLastUser);
    const ChatVariant phiFirst = ChatFormat::detect(
                                     "{{ bos_token }}{% for message in messages %}{{'<|user|>' + '\\n' + "
                                     "message['content'] + '<|end|>' + '\\n' + "
                                     "'<|assistant|>' + '\\n'}}{% endfor %}",
                                     "phi3")
                                     .variant();
    QVERIFY(phiFirst.bos && phiFirst.userOpensAssistant && !phiFirst.systemRole);
    const ChatVariant zephyrOneLine =
        ChatFormat::detect(
            "{{ '<|user|>\\n' + message['content'] + eos_token }}{% endif %}\n{% if loop.last %}{{ '<|assistant|>' }}",
            "llama")
            .variant();
    QVERIFY(!zephyrOneLine.newlineAfterTurn);
    QVERIFY(ChatFormat::detect("{{- \"Cutting Knowledge Date: December 2023\\n\" }}<|start_header_id|>", "llama")
                .variant()
                .knowledgeDate);
}

void TestChatFormat::llama3Rendering() {
    const ChatFormat format(ChatFormatKind::Llama3);
    const auto segments = format.render({{ChatRole::System, " Sys "}, {ChatRole::User, "Hi\n"}}, true);
    QCOMPARE(joined(segments),
             std::string("<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nSys<|eot_id|>"
                         "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
                         "<|start_header_id|>assistant<|end_header_id|>\n\n"));
    QCOMPARE(plainText(segments), std::string("Sys|Hi|"));
    QVERIFY(format.startsWithBos());
    QCOMPARE(format.endOfTurnPieces(), std::vector<std::string>{"<|eot_id|>"});
    const ChatFormat withDate(ChatFormatKind::Llama3, {}, ChatVariant{.knowledgeDate = true});
    QCOMPARE(joined(withDate.render({{ChatRole::User, "Hi"}}, false)),
             std::string("<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nCutting Knowledge Date: "
                         "December 2023\nToday Date: 26 Jul 2024\n\n<|eot_id|><|start_header_id|>user<|end_header_id|>"
                         "\n\nHi<|eot_id|>"));
}

void TestChatFormat::mistralRendering() {
    const std::vector<ChatMessage> chat = {
        {ChatRole::System, "S"}, {ChatRole::User, "A "}, {ChatRole::Assistant, "B"}, {ChatRole::User, "C"}};
    const ChatFormat v01(ChatFormatKind::Mistral, {}, ChatVariant{.bos = true, .spaceAfterEos = true});
    QCOMPARE(joined(v01.render(chat, true)), std::string("<s>[INST] S\n\nA  [/INST]B</s> [INST] C [/INST]"));
    const ChatFormat v03(
        ChatFormatKind::Mistral, {},
        ChatVariant{.bos = true, .systemInLastUser = true, .spaceBeforeInstClose = false, .spaceBeforeAnswer = true});
    QCOMPARE(joined(v03.render(chat, true)), std::string("<s>[INST] A [/INST] B</s>[INST] S\n\nC[/INST]"));
    QCOMPARE(plainText(v03.render(chat, true)), std::string("A |B|S\n\nC|"));
}

void TestChatFormat::phi3Rendering() {
    const ChatFormat phi(ChatFormatKind::Phi3, {}, ChatVariant{.eosWithoutGenPrompt = true});
    QCOMPARE(joined(phi.render({{ChatRole::System, "S"}, {ChatRole::User, "Q"}}, true)),
             std::string("<|system|>\nS<|end|>\n<|user|>\nQ<|end|>\n<|assistant|>\n"));
    QCOMPARE(joined(phi.render({{ChatRole::User, "Q"}, {ChatRole::Assistant, "A"}}, false)),
             std::string("<|user|>\nQ<|end|>\n<|assistant|>\nA<|end|>\n<|endoftext|>"));
    const ChatFormat first(ChatFormatKind::Phi3, {},
                           ChatVariant{.bos = true, .systemRole = false, .userOpensAssistant = true});
    QCOMPARE(joined(first.render({{ChatRole::System, "S"}, {ChatRole::User, "Q"}, {ChatRole::Assistant, "A"}}, true)),
             std::string("<s><|user|>\nQ<|end|>\n<|assistant|>\nA<|end|>\n"));
}

void TestChatFormat::zephyrRendering() {
    const ChatFormat zephyr(ChatFormatKind::Zephyr);
    const auto segments = zephyr.render({{ChatRole::System, "S"}, {ChatRole::User, "Q"}}, true);
    QCOMPARE(joined(segments), std::string("<|system|>\nS</s>\n<|user|>\nQ</s>\n<|assistant|>\n"));
    QCOMPARE(plainText(segments), std::string("S|Q|"));
    QVERIFY(!zephyr.startsWithBos());
    QCOMPARE(zephyr.endOfTurnPieces(), std::vector<std::string>{"</s>"});
}

void TestChatFormat::vocabularyTextsReplaceFamilyDefaults() {
    const ChatFormat zephyr =
        ChatFormat::detect("{{ '<|user|>\\n' + message['content'] + eos_token }}\n{{ '<|assistant|>' }}", "llama",
                           {"<s>", "<|endoftext|>"});
    QCOMPARE(joined(zephyr.render({{ChatRole::User, "Q"}}, false)), std::string("<|user|>\nQ<|endoftext|>\n"));
    QCOMPARE(zephyr.endOfTurnPieces(), std::vector<std::string>{"<|endoftext|>"});
}

// Qwen 3: reasoning dropped before the last user query, kept after it, enable_thinking false
// closing an empty span after the generation prompt; the thinking-only release opening one.
void TestChatFormat::qwen3Thinking() {
    const std::string qwen3 =
        "{%- set ns = namespace(multi_step_tool=true, last_query_index=messages|length - 1) %}"
        "{%- if '</think>' in content %}{%- endif %}{{- '<|im_start|>assistant\\n' }}"
        "{%- if enable_thinking is defined and enable_thinking is false %}{{- '<think>\\n\\n</think>\\n\\n' }}{%- "
        "endif %}";
    const ChatFormat format = ChatFormat::detect(qwen3, "qwen3");
    QVERIFY(format.variant().thinking && !format.variant().opensThinking);
    QCOMPARE(format.thinkingMode(), ThinkingMode::Switchable);
    QVERIFY(format.reasoningSpan() && !format.reasoningSpan()->promptOpens);
    QCOMPARE(format.reasoningSpan()->open, std::string_view("<think>"));
    QCOMPARE(format.reasoningSpan()->close, std::string_view("</think>"));
    const std::vector<ChatMessage> chat = {
        {ChatRole::User, "2+2?"}, {ChatRole::Assistant, "<think>\nAdd.\n</think>\n\n4."}, {ChatRole::User, "3+3?"}};
    QCOMPARE(joined(format.render(chat, true)),
             std::string("<|im_start|>user\n2+2?<|im_end|>\n<|im_start|>assistant\n4.<|im_end|>\n"
                         "<|im_start|>user\n3+3?<|im_end|>\n<|im_start|>assistant\n"));
    QCOMPARE(joined(format.render(chat, RenderOptions{.enableThinking = false})),
             std::string("<|im_start|>user\n2+2?<|im_end|>\n<|im_start|>assistant\n4.<|im_end|>\n"
                         "<|im_start|>user\n3+3?<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"));
    // After the last user query the answer keeps its reasoning, as content (never control tokens).
    const auto kept = format.render({{ChatRole::User, "2+2?"}, {ChatRole::Assistant, "<think>Add.</think>4."}}, false);
    QCOMPARE(joined(kept),
             std::string("<|im_start|>user\n2+2?<|im_end|>\n<|im_start|>assistant\n<think>\nAdd.\n</think>\n\n"
                         "4.<|im_end|>\n"));
    QCOMPARE(plainText(kept), std::string("2+2?|Add.|4.|"));

    const ChatFormat thinkingOnly = ChatFormat::detect(qwen3 + "{{- '<|im_start|>assistant\\n<think>\\n' }}", "qwen3");
    QVERIFY(thinkingOnly.variant().opensThinking && thinkingOnly.reasoningSpan()->promptOpens);
    QCOMPARE(thinkingOnly.thinkingMode(), ThinkingMode::Always);  // enable_thinking changes nothing
    QVERIFY(joined(thinkingOnly.render({{ChatRole::User, "Hi"}}, RenderOptions{.enableThinking = false}))
                .ends_with("<|im_start|>assistant\n<think>\n"));
    // ChatML without a span: no reasoning, enable_thinking ignored.
    QVERIFY(!ChatFormat::detect(kSmolTemplate, "llama").reasoningSpan());
    QCOMPARE(ChatFormat::detect(kSmolTemplate, "llama").thinkingMode(), ThinkingMode::None);
    QCOMPARE(joined(ChatFormat(ChatFormatKind::ChatML)
                        .render({{ChatRole::User, "Hi"}}, RenderOptions{.enableThinking = false})),
             std::string("<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"));
}

// DeepSeek-R1 distills: BOS, the system text, user and assistant markers, every answer's reasoning
// dropped; the newer template's generation prompt opens the span, the first release's does not.
void TestChatFormat::deepSeekR1Rendering() {
    const std::string newer =
        "{{bos_token}}{{'<｜User｜>' + message['content']}}{{'<｜Assistant｜>' + content}}"
        "{% if add_generation_prompt and not ns.is_tool %}{{'<｜Assistant｜><think>\\n'}}{% endif %}";
    const ChatFormat format = ChatFormat::detect(newer, "qwen2");
    QCOMPARE(format.kind(), ChatFormatKind::DeepSeekR1);
    QCOMPARE(QString(format.name()), QString("deepseek-r1"));
    QVERIFY(format.startsWithBos());
    QCOMPARE(format.endOfTurnPieces(), std::vector<std::string>{"<｜end▁of▁sentence｜>"});
    QVERIFY(format.reasoningSpan() && format.reasoningSpan()->promptOpens);
    QCOMPARE(format.thinkingMode(), ThinkingMode::Always);
    const std::vector<ChatMessage> chat = {{ChatRole::System, "Be brief."},
                                           {ChatRole::User, "2+2?"},
                                           {ChatRole::Assistant, "<think>Add.</think>\n\n4."},
                                           {ChatRole::User, "<think>?"}};
    const auto segments = format.render(chat, true);
    QCOMPARE(joined(segments),
             std::string("<｜begin▁of▁sentence｜>Be brief.<｜User｜>2+2?<｜Assistant｜>\n\n4.<｜end▁of▁sentence｜>"
                         "<｜User｜><think>?<｜Assistant｜><think>\n"));
    QCOMPARE(plainText(segments), std::string("Be brief.|2+2?|\n\n4.|<think>?|"));
    // A reply whose span the prompt opened holds only the closing marker; it still loses its reasoning.
    QCOMPARE(
        joined(format.render({{ChatRole::User, "Hi"}, {ChatRole::Assistant, "Greeting.\n</think>\n\nHello!"}}, false)),
        std::string("<｜begin▁of▁sentence｜><｜User｜>Hi<｜Assistant｜>\n\nHello!<｜end▁of▁sentence｜>"));

    const ChatFormat first = ChatFormat::detect("{{bos_token}}{{'<｜User｜>' + c}}{{'<｜Assistant｜>'}}", "llama",
                                                {"<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>"});
    QVERIFY(first.reasoningSpan() && !first.reasoningSpan()->promptOpens);
    QCOMPARE(joined(first.render({{ChatRole::User, "Hi"}}, true)),
             std::string("<｜begin▁of▁sentence｜><｜User｜>Hi<｜Assistant｜>"));
}

// A template that is no known family: the architecture's family format, flagged with a reason; a
// file without a template stays Plain (a base model) except for Gemma.
void TestChatFormat::unrecognisedTemplateFallsBackToTheFamily() {
    const std::string unknown = "{% for m in messages %}{{ m.role }}: {{ m.content }}{% endfor %}";
    const auto fallback = [&](std::string_view arch, const ChatSpecialTexts& special = {}) {
        return ChatFormat::detect(unknown, arch, special);
    };
    const auto is = [](const ChatFormat& format, const char* name) {
        return format.isFallback() && QString(format.name()) == name;
    };
    const ChatFormat qwen2 = fallback("qwen2");
    QVERIFY(is(qwen2, "chatml") && !qwen2.reasoningSpan());
    QVERIFY(qwen2.fallbackReason().find("chatml format of its architecture (qwen2)") != std::string::npos);
    QVERIFY(is(fallback("qwen3"), "chatml") && fallback("qwen3").reasoningSpan());
    QVERIFY(is(fallback("qwen3moe"), "chatml"));
    QVERIFY(is(fallback("gemma2"), "gemma"));
    QVERIFY(is(fallback("phi3"), "phi3"));
    QCOMPARE(joined(fallback("phi3").render({{ChatRole::User, "Q"}}, false)),
             std::string("<|user|>\nQ<|end|>\n<|endoftext|>"));
    QVERIFY(is(fallback("llama", {"<|begin_of_text|>", "<|eot_id|>"}), "llama3"));
    const ChatSpecialTexts deepSeek{"<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>"};
    QVERIFY(is(fallback("qwen2", deepSeek), "deepseek-r1") && fallback("qwen2", deepSeek).reasoningSpan()->promptOpens);
    QVERIFY(is(fallback("llama", deepSeek), "deepseek-r1"));
    // Architectures that do not say which turn markers the vocabulary has: Plain.
    QVERIFY(is(fallback("llama", {"<s>", "</s>"}), "plain"));
    QVERIFY(is(fallback("llama"), "plain"));
    QVERIFY(is(fallback("mistral3"), "plain"));
    // No template: a base model most often, so Plain; Gemma 3 GGUFs ship none, so Gemma.
    QCOMPARE(ChatFormat::detect("", "qwen2").kind(), ChatFormatKind::Plain);
    QCOMPARE(ChatFormat::detect("", "llama", {"<|begin_of_text|>", "<|eot_id|>"}).kind(), ChatFormatKind::Plain);
    QVERIFY(!ChatFormat::detect("", "gemma2").isFallback());
}

QTEST_GUILESS_MAIN(TestChatFormat)
#include "test_chat_format.moc"
