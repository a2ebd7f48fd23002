// KV persistence on SmolLM2: 200 tokens in one run == 100, close, reopen the database,
// restore, 100 more — the same ids, and the logits after the restore bit for bit those of
// the uninterrupted run (CPU).
#include <QTemporaryDir>

#include "tests/app/store/store_test_util.h"
#include "tests/support/test_env.h"

using namespace hearth;
using namespace hearth::test;

class TestStoreModel : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;

private slots:
    void exactAcrossReopenSmolLm2() {
        const QString model = modelFile("SmolLM2-135M-Instruct.Q4_1.gguf");
        HEARTH_REQUIRE_FILE(model);
        const std::string path = model.toStdString();
        const std::string db = (dir_.path() + "/smol.db").toStdString();
        auto whole = loadTiny(path);
        QVERIFY(whole);
        const std::vector<TokenId> prompt =
            whole->rawPrompt("Once upon a time, in a quiet village by the sea, there lived");
        const GenerateResult all = greedy(*whole, prompt, 200);
        whole.reset();
        QCOMPARE(all.tokens.size(), size_t{200});
        std::vector<TokenId> first;
        int64_t conv = 0;
        {
            auto store = ConversationStore::open(db);
            auto e = loadTiny(path);
            conv = (*store)->createConversation("smol")->id;
            first = greedy(*e, prompt, 100).tokens;
            QVERIFY(saveKv(*e, (*store)->kv(), conv, concat(prompt, std::span(first).first(99))));
        }
        auto store = ConversationStore::open(db);
        auto e = loadTiny(path);
        const std::vector<TokenId> prompt2 = concat(prompt, first);
        auto restored = restoreKv(*e, (*store)->kv(), conv, prompt2);
        QVERIFY(restored);
        QVERIFY2(restored->refusal.empty(), restored->refusal.c_str());
        QCOMPARE(restored->restoredTokens, int32_t(prompt2.size() - 1));  // the partial last block too
        const GenerateResult second = greedy(*e, prompt2, 100);
        QCOMPARE(second.timings.prefixCacheHitTokens, restored->restoredTokens);
        QCOMPARE(concat(first, second.tokens), all.tokens);
        for (size_t i = 0; i < 100; ++i)
            QVERIFY2(bitwiseEqual(second.topLogits[i], all.topLogits[100 + i]), qPrintable(QString::number(i)));
    }
};

QTEST_GUILESS_MAIN(TestStoreModel)
#include "test_store_model.moc"
