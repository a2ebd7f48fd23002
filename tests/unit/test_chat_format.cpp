// Chat format tests: detection from template text, and rendering that matches what each
// family's Jinja template renders (SmolLM2's ChatML with its default system prompt, Gemma 3,
// Llama 2), with template text and message content in the right kind of segment.
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
};

void TestChatFormat::detectsFamilies() {
    QCOMPARE(ChatFormat::detect(kSmolTemplate, "llama").kind(), ChatFormatKind::ChatML);
    QCOMPARE(ChatFormat::detect("{{ '<start_of_turn>' + role }}", "gemma3").kind(), ChatFormatKind::Gemma);
    QCOMPARE(ChatFormat::detect("", "gemma3").kind(), ChatFormatKind::Gemma);
    QCOMPARE(ChatFormat::detect("", "gemma2").kind(), ChatFormatKind::Gemma);
    QCOMPARE(ChatFormat::detect("", "llama").kind(), ChatFormatKind::Plain);
    QCOMPARE(ChatFormat::detect("{{ bos_token + '[INST] ' + content + ' [/INST]' }}", "llama").kind(),
             ChatFormatKind::Llama2);
    QCOMPARE(ChatFormat::detect("{{ messages }}", "llama").kind(), ChatFormatKind::Plain);
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
}

void TestChatFormat::chatmlWithoutSystemUsesDefault() {
    const ChatFormat format = ChatFormat::detect(kSmolTemplate, "llama");
    const auto segments = format.render({{"user", "What is <|im_start|>?"}}, true);
    QCOMPARE(joined(segments),
             std::string("<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face"
                         "<|im_end|>\n<|im_start|>user\nWhat is <|im_start|>?<|im_end|>\n<|im_start|>assistant\n"));
    QCOMPARE(plainText(segments), std::string("What is <|im_start|>?|"));
}

void TestChatFormat::chatmlWithSystem() {
    const ChatFormat format = ChatFormat::detect(kSmolTemplate, "llama");
    const auto segments = format.render({{"system", "Be brief."}, {"user", "Hi"}}, true);
    QCOMPARE(joined(segments), std::string("<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
                                           "<|im_start|>assistant\n"));
    QCOMPARE(plainText(segments), std::string("Be brief.|Hi|"));
    // Without a generation prompt the assistant's turn is not opened.
    QCOMPARE(joined(format.render({{"system", "S"}}, false)), std::string("<|im_start|>system\nS<|im_end|>\n"));
    QVERIFY(format.render({}, false).empty());
}

void TestChatFormat::chatmlMultiTurn() {
    const ChatFormat format(ChatFormatKind::ChatML);  // no default system prompt
    const auto segments = format.render({{"user", "1+1?"}, {"assistant", "2"}, {"user", "  and 2+2? "}}, true);
    QCOMPARE(joined(segments), std::string("<|im_start|>user\n1+1?<|im_end|>\n<|im_start|>assistant\n2<|im_end|>\n"
                                           "<|im_start|>user\n  and 2+2? <|im_end|>\n<|im_start|>assistant\n"));
}

void TestChatFormat::gemmaRendering() {
    const ChatFormat format = ChatFormat::detect("", "gemma3");
    const auto segments = format.render({{"user", "Hello"}, {"assistant", "Hi!"}, {"user", " Bye \n"}}, true);
    QCOMPARE(joined(segments), std::string("<bos><start_of_turn>user\nHello<end_of_turn>\n<start_of_turn>model\nHi!"
                                           "<end_of_turn>\n<start_of_turn>user\nBye<end_of_turn>\n"
                                           "<start_of_turn>model\n"));
    QVERIFY(segments.front().allowSpecial);
    QVERIFY(segments.front().text.starts_with("<bos>"));
    QCOMPARE(plainText(segments), std::string("Hello|Hi!|Bye|"));
}

void TestChatFormat::gemmaSystemPrefixesFirstTurn() {
    const ChatFormat format(ChatFormatKind::Gemma);
    const auto segments = format.render({{"system", "You are terse."}, {"user", "Why?"}}, true);
    QCOMPARE(joined(segments), std::string("<bos><start_of_turn>user\nYou are terse.\n\nWhy?<end_of_turn>\n"
                                           "<start_of_turn>model\n"));
    QCOMPARE(plainText(segments), std::string("You are terse.\n\nWhy?|"));
}

void TestChatFormat::llama2Rendering() {
    const ChatFormat format(ChatFormatKind::Llama2);
    const auto segments = format.render({{"system", "Sys"}, {"user", "Hi "}, {"assistant", "Hello"}, {"user", "More"}}, true);
    QCOMPARE(joined(segments), std::string("<s>[INST] <<SYS>>\nSys\n<</SYS>>\n\nHi [/INST] Hello </s>"
                                           "<s>[INST] More [/INST]"));
    QVERIFY(format.startsWithBos());
}

void TestChatFormat::plainRendering() {
    const ChatFormat format(ChatFormatKind::Plain);
    const auto segments = format.render({{"user", "Once upon"}, {"user", "a time"}}, true);
    QCOMPARE(joined(segments), std::string("Once upon\na time"));
    for (const TextSegment& s : segments) QVERIFY(!s.allowSpecial);
    QVERIFY(format.endOfTurnPieces().empty());
}

QTEST_GUILESS_MAIN(TestChatFormat)
#include "test_chat_format.moc"
