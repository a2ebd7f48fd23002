// Splitting a thinking model's reply into reasoning and answer: no span, a span the reply opens,
// a span the generation prompt opened, and replies still streaming (unclosed span, half markers).
#include <QTest>

#include "engine/tokenizer/reasoning.h"

using namespace hearth;

namespace {

// The split as one comparable string: reasoning|answer|open.
QString split(std::string_view reply, bool promptOpens = false) {
    const ReasoningSplit s = splitReasoning(reply, ReasoningSpan{.promptOpens = promptOpens});
    return QString::fromUtf8(s.reasoning.data(), s.reasoning.size()) + "|" +
        QString::fromUtf8(s.answer.data(), s.answer.size()) + "|" + (s.open ? "open" : "closed");
}

}  // namespace

class TestReasoning : public QObject {
    Q_OBJECT

private slots:
    void noSpan();
    void spanOpenedByTheReply();
    void spanOpenedByThePrompt();
    void streamingHoldsBackHalfMarkers();
    void customMarkers();
};

void TestReasoning::noSpan() {
    QCOMPARE(split("Hello!"), QString("|Hello!|closed"));
    QCOMPARE(split(""), QString("||closed"));
    QCOMPARE(split("\n\n"), QString("|\n\n|closed"));
    // A marker that is not where the reply starts is the answer's own text.
    QCOMPARE(split("Use <think> tags.</think>"), QString("|Use <think> tags.</think>|closed"));
    // Qwen 3 with enable_thinking false: the prompt closed an empty span, the reply is all answer.
    QCOMPARE(split("Paris."), QString("|Paris.|closed"));
}

void TestReasoning::spanOpenedByTheReply() {
    QCOMPARE(split("<think>\nThe capital.\n</think>\n\nParis."), QString("The capital.|Paris.|closed"));
    QCOMPARE(split("  \n<think>x</think>y"), QString("x|y|closed"));
    QCOMPARE(split("<think>\n\n</think>\n\nParis."), QString("|Paris.|closed"));
    // Only the first closing marker ends the span.
    QCOMPARE(split("<think>a</think>b</think>c"), QString("a|b</think>c|closed"));
    QCOMPARE(split("<think>\nStill thinking"), QString("Still thinking||open"));
    QCOMPARE(split("<think>"), QString("||open"));
}

void TestReasoning::spanOpenedByThePrompt() {
    QCOMPARE(split("The user greets me.\n</think>\n\nHello!", true), QString("The user greets me.|Hello!|closed"));
    QCOMPARE(split("Thinking on", true), QString("Thinking on||open"));
    QCOMPARE(split("", true), QString("||open"));
    // A reply that writes the opening marker anyway keeps it as reasoning text.
    QCOMPARE(split("<think>x</think>y", true), QString("<think>x|y|closed"));
}

void TestReasoning::streamingHoldsBackHalfMarkers() {
    QCOMPARE(split("<thi"), QString("||closed"));
    QCOMPARE(split("<"), QString("||closed"));
    QCOMPARE(split("<think>\nAlmost\n</thi"), QString("Almost||open"));
    QCOMPARE(split("Almost </", true), QString("Almost ||open"));
    // Text that only looks like a marker's beginning once more arrives is reasoning after all.
    QCOMPARE(split("<think>a < b", false), QString("a < b||open"));
    QCOMPARE(split("<thing>", false), QString("|<thing>|closed"));
}

void TestReasoning::customMarkers() {
    const ReasoningSplit s = splitReasoning("[R]x[/R]y", ReasoningSpan{.open = "[R]", .close = "[/R]"});
    QCOMPARE(s.reasoning, std::string_view("x"));
    QCOMPARE(s.answer, std::string_view("y"));
    const ReasoningSplit none = splitReasoning("<think>x</think>y", ReasoningSpan{.open = "", .close = ""});
    QCOMPARE(none.answer, std::string_view("<think>x</think>y"));
    QVERIFY(none.reasoning.empty() && !none.open);
}

QTEST_GUILESS_MAIN(TestReasoning)
#include "test_reasoning.moc"
