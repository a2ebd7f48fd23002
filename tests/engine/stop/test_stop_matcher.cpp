// Stop strings across piece boundaries: matched text is never shown; a possible start is
// held back until the stream disambiguates it.
#include <QtTest>

#include "engine/stop/stop_matcher.h"

using namespace hearth;

class TestStopMatcher : public QObject {
    Q_OBJECT
private slots:
    void matchesAcrossPieces() {
        StopMatcher m({"END"});
        QCOMPARE(m.push("hello E").text, std::string("hello "));
        auto out = m.push("N");
        QCOMPARE(out.text, std::string());
        QVERIFY(!out.stopped);
        out = m.push("Dafter");
        QVERIFY(out.stopped);
        QCOMPARE(out.text, std::string());
        QCOMPARE(m.flush(), std::string());
        QVERIFY(m.push("more").text.empty());
    }
    void releasesAFalseStart() {
        StopMatcher m({"END"});
        QCOMPARE(m.push("EN").text, std::string());
        QCOMPARE(m.push("d").text, std::string("ENd"));
        QCOMPARE(m.push("E").text, std::string());
        QCOMPARE(m.flush(), std::string("E"));
    }
    void earliestOfSeveral() {
        StopMatcher m({"cat", "at"});
        const auto out = m.push("a cat");
        QVERIFY(out.stopped);
        QCOMPARE(out.text, std::string("a "));
    }
    void multibyteStopStrings() {
        StopMatcher m({"\xE2\x96\x81x"});
        QCOMPARE(m.push("ab\xE2\x96\x81").text, std::string("ab"));
        QCOMPARE(m.push("y").text, std::string("\xE2\x96\x81y"));
    }
    void noStopsPassesEverything() {
        StopMatcher m({"", {}});
        QCOMPARE(m.push("abc").text, std::string("abc"));
    }
};

QTEST_APPLESS_MAIN(TestStopMatcher)
#include "test_stop_matcher.moc"
