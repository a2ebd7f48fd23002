// The code blocks' highlighter: token classes for a sample of each language, strings and
// comments left open, fence labels naming languages, an unknown language staying plain, and
// random text giving ordered tokens inside the code.
#include <QRandomGenerator>
#include <QtTest>

#include "app/common/code_highlighter.h"

using namespace hearth;

namespace {

// "K:def S:\"hi\" C:# note N:42": each token's class and text, in order.
QString tokens(const QString& code, const QString& language) {
    QStringList out;
    for (const CodeToken& t : highlightCode(code, language)) {
        const char* kind = t.kind == CodeTokenKind::Keyword ? "K"
            : t.kind == CodeTokenKind::String               ? "S"
            : t.kind == CodeTokenKind::Comment              ? "C"
                                                            : "N";
        out << QStringLiteral("%1:%2").arg(QLatin1String(kind), code.mid(t.start, t.length));
    }
    return out.join(QLatin1Char(' '));
}

}  // namespace

class TestCodeHighlighter : public QObject {
    Q_OBJECT
private slots:
    void languages_data();
    void languages();
    void unterminated_data();
    void unterminated();
    void fenceLabels();
    void unknownLanguageIsPlain();
    void randomTextGivesOrderedTokens();
};

void TestCodeHighlighter::languages_data() {
    QTest::addColumn<QString>("language");
    QTest::addColumn<QString>("code");
    QTest::addColumn<QString>("expected");
    QTest::newRow("python") << "python"
                            << "def f(x):\n    return \"hi\" + 'a'  # note\n    n = 3.5e-2\n"
                            << "K:def K:return S:\"hi\" S:'a' C:# note N:3.5e-2";
    QTest::newRow("python triple quotes") << "py"
                                          << "s = \"\"\"two\nlines\"\"\"\nx = None"
                                          << "S:\"\"\"two\nlines\"\"\" K:None";
    QTest::newRow("c++") << "cpp"
                         << "#include <vector>\nint main() { /* block */ return 0x1F; } // end"
                         << "K:#include K:int C:/* block */ K:return N:0x1F C:// end";
    QTest::newRow("c") << "c"
                       << "char c = 'a'; const char* s = \"t\\\"x\";"
                       << "K:char S:'a' K:const K:char S:\"t\\\"x\"";
    QTest::newRow("javascript") << "js"
                                << "const s = `a\n${b}`; let n = 42; // done"
                                << "K:const S:`a\n${b}` K:let N:42 C:// done";
    QTest::newRow("typescript") << "ts"
                                << "interface A { n: number; s: string }"
                                << "K:interface K:number K:string";
    QTest::newRow("rust") << "rust"
                          << "fn f<'a>(x: &'a str) -> u32 { let c = 'x'; 1..10 }"
                          << "K:fn K:let S:'x' N:1 N:10";
    QTest::newRow("go") << "go"
                        << "func main() { s := `raw\nstring`; return nil }"
                        << "K:func S:`raw\nstring` K:return K:nil";
    QTest::newRow("java") << "java"
                          << "public class A { int x = 5; /** doc */ }"
                          << "K:public K:class K:int N:5 C:/** doc */";
    QTest::newRow("shell") << "bash"
                           << "echo $# \"hi\" # comment\nif [ -f x ]; then exit 1; fi"
                           << "S:\"hi\" C:# comment K:if K:then K:exit N:1 K:fi";
    QTest::newRow("json") << "json"
                          << "{\"a\": [1, -2.5, true, null]}"
                          << "S:\"a\" N:1 N:2.5 K:true K:null";
    QTest::newRow("sql") << "sql"
                         << "SELECT name FROM t WHERE id = 'x' -- why"
                         << "K:SELECT K:FROM K:WHERE S:'x' C:-- why";
    QTest::newRow("c#") << "csharp"
                        << "var s = \"x\"; foreach (var c in s) {}"
                        << "K:var S:\"x\" K:foreach K:var K:in";
}

void TestCodeHighlighter::languages() {
    QFETCH(QString, language);
    QFETCH(QString, code);
    QFETCH(QString, expected);
    QCOMPARE(tokens(code, language), expected);
}

void TestCodeHighlighter::unterminated_data() {
    QTest::addColumn<QString>("language");
    QTest::addColumn<QString>("code");
    QTest::addColumn<QString>("expected");
    // A plain string left open ends with its line; the next line is code again.
    QTest::newRow("string") << "python"
                            << "x = \"abc\ny = 2"
                            << "S:\"abc N:2";
    QTest::newRow("block comment") << "c"
                                   << "int a; /* open\nint x;"
                                   << "K:int C:/* open\nint x;";
    QTest::newRow("triple quotes") << "python"
                                   << "s = '''open\nfor"
                                   << "S:'''open\nfor";
    QTest::newRow("template") << "javascript"
                              << "let t = `open\nif"
                              << "K:let S:`open\nif";
    QTest::newRow("escape at the end") << "c"
                                       << "s = \"a\\"
                                       << "S:\"a\\";
}

void TestCodeHighlighter::unterminated() {
    QFETCH(QString, language);
    QFETCH(QString, code);
    QFETCH(QString, expected);
    QCOMPARE(tokens(code, language), expected);
}

void TestCodeHighlighter::fenceLabels() {
    QCOMPARE(canonicalCodeLanguage(u"C++"), QString("cpp"));
    QCOMPARE(canonicalCodeLanguage(u"py"), QString("python"));
    QCOMPARE(canonicalCodeLanguage(u"python title=x"), QString("python"));
    QCOMPARE(canonicalCodeLanguage(u"{.rust}"), QString("rust"));
    QCOMPARE(canonicalCodeLanguage(u"TSX"), QString("typescript"));
    QCOMPARE(canonicalCodeLanguage(u"zsh"), QString("shell"));
}

void TestCodeHighlighter::unknownLanguageIsPlain() {
    const QString code = "def f(): return 1  # a comment\n\"text\"";
    QVERIFY(!highlightCode(code, u"python").empty());
    for (const QString& label : {QString(), QString("brainfuck"), QString("text"), QString("   ")}) {
        QVERIFY2(highlightCode(code, label).empty(), qPrintable(label));
        QVERIFY(canonicalCodeLanguage(label).isEmpty());
    }
}

void TestCodeHighlighter::randomTextGivesOrderedTokens() {
    const QString alphabet = "ab1.e+-_\"'`#/*\\\n $'x09 ";
    const QStringList languages = {"c",          "cpp",  "csharp", "go",   "java",  "javascript",
                                   "typescript", "json", "python", "rust", "shell", "sql"};
    QRandomGenerator rng(27);
    for (int round = 0; round < 3000; ++round) {
        QString code;
        for (int i = 0, n = static_cast<int>(rng.bounded(60)); i < n; ++i)
            code += alphabet[static_cast<int>(rng.bounded(alphabet.size()))];
        const QString language = languages[static_cast<int>(rng.bounded(languages.size()))];
        int end = 0;
        for (const CodeToken& t : highlightCode(code, language)) {
            QVERIFY2(t.start >= end && t.length > 0 && t.start + t.length <= code.size(),
                     qPrintable(language + ": " + code));
            end = t.start + t.length;
        }
    }
}

QTEST_MAIN(TestCodeHighlighter)
#include "test_code_highlighter.moc"
