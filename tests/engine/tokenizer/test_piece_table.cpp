// PieceTable, the vocabulary's piece texts in one buffer with its text -> id index: every piece
// reads back and is found under its id, a text given twice finds the last id (llama.cpp's rule),
// absent texts and an empty table find -1, and views survive moving the table.
#include <QTest>

#include <random>
#include <string>
#include <vector>

#include "engine/tokenizer/piece_table.h"

using namespace hearth;

class TestPieceTable : public QObject {
    Q_OBJECT
private slots:
    void emptyTableFindsNothing() {
        const PieceTable table;
        QCOMPARE(table.size(), size_t{0});
        QCOMPARE(table.find("a"), -1);
        QCOMPARE(PieceTable(std::vector<std::string>{}).find(""), -1);
    }

    void everyPieceReadsBackAndIsFound() {
        std::mt19937 rng(7);
        std::vector<std::string> texts;
        for (int i = 0; i < 20000; ++i) {
            std::string t(rng() % 12 + 1, ' ');
            for (char& c : t) c = static_cast<char>('a' + rng() % 26);
            texts.push_back(t + std::to_string(i));  // unique
        }
        const PieceTable table(texts);
        QCOMPARE(table.size(), texts.size());
        for (size_t i = 0; i < texts.size(); ++i) {
            QCOMPARE(table[i], std::string_view(texts[i]));
            QCOMPARE(table.find(texts[i]), static_cast<int32_t>(i));
        }
        QCOMPARE(table.find("not-a-piece"), -1);
        QCOMPARE(table.find(texts[5] + "x"), -1);
        QCOMPARE(table.find(""), -1);
    }

    void aRepeatedTextFindsTheLastId() {
        const PieceTable table(std::vector<std::string>{"a", "", "bc", "a", "d", "bc", ""});
        QCOMPARE(table.find("a"), 3);
        QCOMPARE(table.find("bc"), 5);
        QCOMPARE(table.find(""), 6);
        QCOMPARE(table.find("d"), 4);
        QCOMPARE(table[1], std::string_view());
        QCOMPARE(table[2], std::string_view("bc"));
    }

    void viewsSurviveAMove() {
        PieceTable table(std::vector<std::string>{"x", "yz"});
        const std::string_view before = table[1];
        const PieceTable moved = std::move(table);
        QCOMPARE(before, std::string_view("yz"));
        QVERIFY(moved[1].data() == before.data());  // the same bytes, not a copy
        QCOMPARE(moved.find("yz"), 1);
    }
};

QTEST_GUILESS_MAIN(TestPieceTable)
#include "test_piece_table.moc"
