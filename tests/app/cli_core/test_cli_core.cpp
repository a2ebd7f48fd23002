// The Qt-free CLI core against the Qt classes it replaces in the Windows build: the option
// parser against QCommandLineParser (values, defaults, positionals, error texts), the JSON writer
// against QJsonDocument::Compact (random numbers and strings, nested values), validUtf8 against
// QString's UTF-8 round trip, describeError's one-line rule; and the core's list of full-build
// commands against the Linux hearth-cli's usage text.
#include <QCommandLineParser>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QtTest>
#include <cmath>
#include <cstring>
#include <random>

#include "app/cli_core/core_commands.h"
#include "app/cli_core/core_common.h"
#include "app/cli_core/json.h"
#include "app/cli_core/options.h"
#include "app/cli_core/text.h"
#include "tests/support/cli_runner.h"

using namespace hearth;
using namespace hearth::cli::core;

class TestCliCore : public QObject {
    Q_OBJECT
private slots:
    void parserMatchesQCommandLineParser();
    void numbersParseAsQtReadsThem();
    void jsonMatchesQJsonDocument();
    void utf8CleanedAsQStringDoes();
    void errorsAreOneLine();
    void fullBuildCommandsAreTheLinuxOnes();
};

namespace {

QString qs(const std::string& s) { return QString::fromStdString(s); }

std::vector<OptionSpec> specs() {
    std::vector<OptionSpec> all = commonOptionSpecs();
    for (const OptionSpec& s : storeOptionSpecs()) all.push_back(s);
    return all;
}

// Compares the core parser with QCommandLineParser on args (program name first).
void compareParse(const std::vector<std::string>& args) {
    QCommandLineParser qt;
    for (const OptionSpec& s : specs())
        qt.addOption(QCommandLineOption(qs(s.name), qs(s.description), qs(s.valueName), qs(s.defaultValue)));
    QStringList qargs;
    for (const std::string& a : args) qargs << qs(a);
    ArgParser core(specs());
    const bool qtOk = qt.parse(qargs);
    const bool coreOk = core.parse(args);
    const QString context = qargs.join(' ');
    QVERIFY2(qtOk == coreOk, qPrintable(context));
    if (!qtOk) {
        QVERIFY2(qt.errorText() == qs(core.errorText()),
                 qPrintable(context + " | qt: " + qt.errorText() + " | core: " + qs(core.errorText())));
        return;
    }
    QStringList corePositional;
    for (const std::string& p : core.positionalArguments()) corePositional << qs(p);
    QVERIFY2(qt.positionalArguments() == corePositional, qPrintable(context));
    for (const OptionSpec& s : specs()) {
        const QString name = qs(s.name);
        QVERIFY2(qt.isSet(name) == core.isSet(s.name), qPrintable(context + " isSet " + name));
        QVERIFY2(qt.value(name) == qs(core.value(s.name)), qPrintable(context + " value " + name));
        QStringList coreValues;
        for (const std::string& v : core.values(s.name)) coreValues << qs(v);
        QVERIFY2(qt.values(name) == coreValues, qPrintable(context + " values " + name));
    }
}

}  // namespace

void TestCliCore::parserMatchesQCommandLineParser() {
    const std::vector<std::vector<std::string>> cases = {
        {"hearth-cli"},
        {"hearth-cli", "--model", "m.gguf", "--prompt", "hi there", "--json"},
        {"hearth-cli", "--model=m.gguf", "--temp=0", "--stop", "a", "--stop=b", "--stop", ""},
        {"hearth-cli", "--model", "a", "--model", "b"},
        {"hearth-cli", "--logit-bias", "5=-inf", "--logit-bias=6=1.5"},
        {"hearth-cli", "--model"},
        {"hearth-cli", "--raw=1"},
        {"hearth-cli", "--foo"},
        {"hearth-cli", "--foo", "--bar=2", "--model", "x"},
        {"hearth-cli", "-x"},
        {"hearth-cli", "-"},
        {"hearth-cli", "extra", "--json", "more"},
        {"hearth-cli", "--", "--json", "-x"},
        {"hearth-cli", "--prompt", "--json"},
        {"hearth-cli", "--prompt", "-"},
        {"hearth-cli", "--prompt=", "--db", "c.db", "--no-kv-restore"},
        {"hearth-cli", "--model", "Zoë Li/模型/model.gguf"},
        {"hearth-cli", "--=x"},
        {"hearth-cli", "--json", "--json"},
        {"hearth-cli", "--raw=1", "--foo"},
    };
    for (const auto& args : cases) {
        compareParse(args);
        if (QTest::currentTestFailed()) return;
    }
    // Random command lines from a pool of words.
    const std::vector<std::string> pool = {"--model", "m",  "--json", "--raw",     "--stop", "--temp", "0.5", "--x",
                                           "-q",      "--", "pos",    "--top-k=3", "--db=",  "--raw=", "-",   "--seed"};
    std::mt19937 rng(7);
    for (int i = 0; i < 3000; ++i) {
        std::vector<std::string> args{"hearth-cli"};
        const int n = static_cast<int>(rng() % 7);
        for (int k = 0; k < n; ++k) args.push_back(pool[rng() % pool.size()]);
        compareParse(args);
        if (QTest::currentTestFailed()) return;
    }
}

void TestCliCore::numbersParseAsQtReadsThem() {
    const char* inputs[] = {"0",
                            "1",
                            "-1",
                            "+2",
                            " 3 ",
                            "1.5",
                            "-0.25",
                            "1e3",
                            "1e-7",
                            "abc",
                            "",
                            " ",
                            "1,5",
                            "0x10",
                            "12abc",
                            "inf",
                            "-inf",
                            "nan",
                            "1e999",
                            "99999999999999999999",
                            "-9223372036854775808",
                            ".5",
                            "5.",
                            "--1",
                            "+-1",
                            "+"};
    for (const char* in : inputs) {
        const QString q = QString::fromLatin1(in);
        bool qok = false;
        const double qd = q.toDouble(&qok);
        double cd = 0;
        const bool cok = parseDouble(in, cd);
        QVERIFY2(qok == cok, in);
        if (qok && !std::isnan(qd)) QCOMPARE(cd, qd);
        const qlonglong ql = q.toLongLong(&qok);
        long long cl = 0;
        QVERIFY2(qok == parseLongLong(in, cl), in);
        if (qok) QCOMPARE(cl, ql);
        const qulonglong qu = q.toULongLong(&qok);
        unsigned long long cu = 0;
        QVERIFY2(qok == parseULongLong(in, cu), in);
        if (qok) QCOMPARE(cu, qu);
    }
}

void TestCliCore::jsonMatchesQJsonDocument() {
    std::mt19937_64 rng(11);
    for (int i = 0; i < 200000; ++i) {
        double d = 0;
        const uint64_t bits = rng();
        switch (i % 4) {
        case 0: std::memcpy(&d, &bits, sizeof d); break;
        case 1: d = std::ldexp(static_cast<double>(bits >> 11), static_cast<int>(rng() % 160) - 110); break;
        case 2: d = static_cast<double>(rng() % 1000000) / std::pow(10.0, static_cast<int>(rng() % 12)); break;
        default: d = static_cast<double>(static_cast<float>(static_cast<int64_t>(bits) >> 20) * 1e-6f); break;
        }
        if (!std::isfinite(d)) continue;
        const QByteArray qt = QJsonDocument(QJsonArray{d}).toJson(QJsonDocument::Compact);
        const std::string core = Json(Json::Array{Json(d)}).compact();
        QVERIFY2(qt.toStdString() == core, (qt.toStdString() + " vs " + core).c_str());
    }
    // Strings: every control character, quotes, backslashes, non-ASCII, invalid UTF-8.
    for (int i = 0; i < 20000; ++i) {
        std::string s;
        const int n = static_cast<int>(rng() % 10);
        for (int k = 0; k < n; ++k) {
            const int pick = static_cast<int>(rng() % 6);
            if (pick == 0) s += static_cast<char>(rng() % 0x20);
            else if (pick == 1) s += "\"\\/";
            else if (pick == 2) s += "é模✓\x7f";
            else if (pick == 3) s += static_cast<char>(0x80 + rng() % 0x80);
            else s += static_cast<char>(0x20 + rng() % 0x5f);
        }
        const QByteArray qt = QJsonDocument(QJsonObject{{qs(s), qs(s)}}).toJson(QJsonDocument::Compact);
        const std::string core = Json(Json::Object{{s, s}}).compact();
        QVERIFY2(qt.toStdString() == core, core.c_str());
    }
    // A nested value of every kind, keys out of order.
    const QJsonObject qo{{"z", 1},
                         {"a", QJsonArray{1, 2.5, true, QJsonValue()}},
                         {"m", QJsonObject{{"k", "v"}}},
                         {"neg", -3},
                         {"f", 0.1f}};
    const Json co = Json::Object{{"z", 1},
                                 {"a", Json::Array{Json(1), Json(2.5), Json(true), Json()}},
                                 {"m", Json::Object{{"k", "v"}}},
                                 {"neg", -3},
                                 {"f", 0.1f}};
    QCOMPARE(co.compact(), QJsonDocument(qo).toJson(QJsonDocument::Compact).toStdString());
}

void TestCliCore::utf8CleanedAsQStringDoes() {
    std::mt19937 rng(5);
    const unsigned char bytes[] = {0x80, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0, 0xE1, 0xED, 0xEF,
                                   0xF0, 0xF4, 0xF5, 0xFF, 0x9F, 0xA0, 0x8F, 0x90, 'a'};
    for (int i = 0; i < 100000; ++i) {
        std::string s;
        const int n = static_cast<int>(rng() % 8);
        for (int k = 0; k < n; ++k) s += static_cast<char>(bytes[rng() % sizeof bytes]);
        QCOMPARE(validUtf8(s), QString::fromStdString(s).toStdString());
    }
}

void TestCliCore::errorsAreOneLine() {
    const std::string text = describeError({ErrorCode::InvalidFormat, "name \"a\nb\tc\x7f\xc2\x85\" \xff end"});
    QCOMPARE(text, std::string("the file is not a valid model: name \"a b c  \" \xEF\xBF\xBD end"));
}

void TestCliCore::fullBuildCommandsAreTheLinuxOnes() {
    const test::CliRun help = test::runCli({"--help"});
    QCOMPARE(help.exitCode, 0);
    QStringList listed;
    const QRegularExpression line(QStringLiteral("^  ([a-z-]+) "));
    for (const QByteArray& l : help.out.split('\n'))
        if (const auto m = line.match(QString::fromUtf8(l)); m.hasMatch()) listed << m.captured(1);
    QStringList expected;
    for (const CoreCommand& c : coreCommands()) expected << QString::fromLatin1(c.name);
    for (const std::string& name : fullBuildCommandNames()) expected << qs(name);
    listed.removeDuplicates();  // a command may have several usage lines (bench, bench --depth)
    listed.sort();
    expected.sort();
    QCOMPARE(listed, expected);
}

QTEST_GUILESS_MAIN(TestCliCore)
#include "test_cli_core.moc"
