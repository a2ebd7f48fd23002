// KV persistence on tiny models: exactness across a close and reopen (ids and logits bit for
// bit; also for a Gemma 3 with a sliding window, whose saved blocks carry the window layers'
// K/V only for the last window), refusals (another model file, another block size, a flipped
// byte, the all-positions layout's saves) with the reply still right, and the disk budget
// (oldest conversations' KV evicted, text kept).
#include <QDateTime>
#include <QTemporaryDir>

#include "app/store/sqlite_db.h"
#include "app/chat/stored_turn.h"
#include "engine/str_cat.h"
#include "tests/app/store/store_test_util.h"
#include "tests/support/split_gguf.h"
#include "tests/support/tiny_gemma3.h"

using namespace hearth;
using namespace hearth::test;

class TestStoreKv : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    std::string model1_, model2_;
    std::string db(const char* name) { return (dir_.path() + "/" + name).toStdString(); }

    // Generates 60 tokens after prompt in a fresh engine and saves the KV in conversation c.
    int64_t saveConversation(const std::string& dbPath, const std::vector<TokenId>& prompt,
                             GenerateResult* out = nullptr) {
        auto store = ConversationStore::open(dbPath);
        auto e = loadTiny(model1_);
        auto c = (*store)->createConversation("kv");
        const GenerateResult r = greedy(*e, prompt, 60);
        auto saved = saveKv(*e, (*store)->kv(), c->id, concat(prompt, std::span(r.tokens).first(59)));
        if (!saved || *saved == 0) return 0;
        if (out) *out = r;
        return c->id;
    }

private slots:
    void initTestCase() {
        model1_ = writeTinyModel(dir_.path(), 1);
        model2_ = writeTinyModel(dir_.path(), 2);  // same architecture and vocabulary, other weights
        QVERIFY(!model1_.empty() && !model2_.empty());
    }

    // 200 tokens in one run == 100, close everything, reopen the database, restore, 100 more;
    // the logits after the restore are bitwise those of the uninterrupted run.
    void exactAcrossReopen() {
        const std::vector<TokenId> prompt = tinyPrompt(7, 37);
        auto whole = loadTiny(model1_);
        const GenerateResult all = greedy(*whole, prompt, 200);
        QCOMPARE(all.tokens.size(), size_t{200});
        std::vector<TokenId> first;
        int64_t conv = 0;
        {
            auto store = ConversationStore::open(db("exact.db"));
            auto e = loadTiny(model1_);
            conv = (*store)->createConversation("exact")->id;
            first = greedy(*e, prompt, 100).tokens;
            QVERIFY(saveKv(*e, (*store)->kv(), conv, concat(prompt, std::span(first).first(99))));
        }
        auto store = ConversationStore::open(db("exact.db"));
        auto e = loadTiny(model1_);
        const std::vector<TokenId> prompt2 = concat(prompt, first);
        auto restored = restoreKv(*e, (*store)->kv(), conv, prompt2);
        QVERIFY(restored);
        QVERIFY2(restored->refusal.empty(), restored->refusal.c_str());
        // Every computed token, the trailing partial block (136 = 8 x 16 + 8) included.
        QCOMPARE(restored->restoredTokens, int32_t(prompt2.size() - 1));
        QVERIFY(restored->restoredTokens % 16 != 0);
        const GenerateResult second = greedy(*e, prompt2, 100);
        QCOMPARE(second.timings.prefixCacheHitTokens, restored->restoredTokens);
        QCOMPARE(concat(first, second.tokens), all.tokens);
        for (size_t i = 0; i < 100; ++i)
            QVERIFY2(bitwiseEqual(second.topLogits[i], all.topLogits[100 + i]), qPrintable(QString::number(i)));
    }

    // exactAcrossReopen on a tiny Gemma 3 with a window of 32 (per-group KV pools): 200 tokens in
    // one run == 100, save, reopen, restore, 100 more, bit for bit; the rows of the blocks before
    // the last window hold the full-attention layer's bytes only. An engine keeping every
    // position in every layer (kv-layout/v1) refuses those rows, says why, and computes the same.
    void windowModelExactAcrossReopen() {
        TinyGemma3Shape shape;
        shape.slidingWindow = 32;
        shape.context = 512;
        const std::string path = (dir_.path() + "/gemma3-window32.gguf").toStdString();
        QVERIFY(tinyGemma3(shape).writeFile(path));
        const auto load = [&](bool windowPools) {
            EngineOptions o;
            o.kvWindowPools = windowPools;
            auto e = Engine::load(path, o);
            return e ? std::move(*e) : nullptr;
        };
        std::vector<TokenId> prompt{2};
        for (TokenId t : tinyPrompt(9, 61)) prompt.push_back(12 + t % 200);
        auto whole = load(true);
        QVERIFY(whole);
        const GenerateResult all = greedy(*whole, prompt, 200);
        QCOMPARE(all.tokens.size(), size_t{200});
        std::vector<TokenId> first;
        int64_t conv = 0;
        size_t rowBytes = 0;
        {
            auto store = ConversationStore::open(db("window.db"));
            auto e = load(true);
            conv = (*store)->createConversation("window")->id;
            first = greedy(*e, prompt, 100).tokens;
            QVERIFY(saveKv(*e, (*store)->kv(), conv, concat(prompt, std::span(first).first(99))));
            rowBytes = e->kvBytesPerBlock();
        }
        {
            auto sdb = SqliteDb::open(db("window.db"));
            QVERIFY(sdb);
            const auto nWithWindow =
                (*sdb)->queryInt(strCat("SELECT count(*) FROM kv_blocks WHERE length(data) = ", rowBytes));
            const auto nFullOnly =
                (*sdb)->queryInt(strCat("SELECT count(*) FROM kv_blocks WHERE length(data) < ", rowBytes / 2));
            QVERIFY(nWithWindow && *nWithWindow >= 1 && *nWithWindow <= 3);
            QVERIFY(nFullOnly && *nFullOnly >= 5);
        }
        auto store = ConversationStore::open(db("window.db"));
        const std::vector<TokenId> prompt2 = concat(prompt, first);
        auto old = load(false);
        auto refused = restoreKv(*old, (*store)->kv(), conv, prompt2);
        QVERIFY(refused);
        QCOMPARE(refused->acceptedTokens, 0);
        QVERIFY2(QString::fromStdString(refused->refusal).contains("KV layout differs"), refused->refusal.c_str());
        QCOMPARE(greedy(*old, prompt2, 3).tokens,
                 std::vector<TokenId>(all.tokens.begin() + 100, all.tokens.begin() + 103));
        auto e = load(true);
        auto restored = restoreKv(*e, (*store)->kv(), conv, prompt2);
        QVERIFY(restored);
        QVERIFY2(restored->refusal.empty(), restored->refusal.c_str());
        QCOMPARE(restored->restoredTokens, int32_t(prompt2.size() - 1));
        const GenerateResult second = greedy(*e, prompt2, 100);
        QCOMPARE(second.timings.prefixCacheHitTokens, restored->restoredTokens);
        QCOMPARE(concat(first, second.tokens), all.tokens);
        for (size_t i = 0; i < 100; ++i)
            QVERIFY2(bitwiseEqual(second.topLogits[i], all.topLogits[100 + i]), qPrintable(QString::number(i)));
    }

    void refusesAnotherModelFile() {
        const std::vector<TokenId> prompt = tinyPrompt(11, 40);
        const int64_t conv = saveConversation(db("model.db"), prompt);
        QVERIFY(conv);
        auto store = ConversationStore::open(db("model.db"));
        auto e = loadTiny(model2_);
        auto restored = restoreKv(*e, (*store)->kv(), conv, prompt);
        QCOMPARE(restored->restoredTokens, 0);
        QVERIFY2(restored->refusal.find("model file differs") != std::string::npos, restored->refusal.c_str());
        auto fresh = loadTiny(model2_);
        QCOMPARE(greedy(*e, prompt, 20).tokens, greedy(*fresh, prompt, 20).tokens);
    }

    void refusesAnotherBlockSize() {
        const std::vector<TokenId> prompt = tinyPrompt(12, 70);
        const int64_t conv = saveConversation(db("block.db"), prompt);
        auto store = ConversationStore::open(db("block.db"));
        auto e = loadTiny(model1_, 32);
        auto restored = restoreKv(*e, (*store)->kv(), conv, prompt);
        QCOMPARE(restored->restoredTokens, 0);
        QVERIFY2(restored->refusal.find("layout differs") != std::string::npos, restored->refusal.c_str());
        auto fresh = loadTiny(model1_, 32);
        QCOMPARE(greedy(*e, prompt, 20).tokens, greedy(*fresh, prompt, 20).tokens);
    }

    // One byte of the second block's data flipped on disk: the first block is restored, the
    // damaged one (and all after it) refused, and the reply is that of an untouched run.
    void refusesAFlippedByte() {
        const std::vector<TokenId> prompt = tinyPrompt(13, 70);
        GenerateResult original;
        const int64_t conv = saveConversation(db("flip.db"), prompt, &original);
        {
            auto sdb = SqliteDb::open(db("flip.db"));
            auto st = (*sdb)->prepare("SELECT data FROM kv_blocks WHERE position = 16");
            QVERIFY(st && st->step().value_or(false));
            std::vector<uint8_t> data = st->blob(0);
            data[data.size() / 3] ^= 0x10;
            auto put = (*sdb)->prepare("UPDATE kv_blocks SET data = ? WHERE position = 16");
            QVERIFY(put->bindBlob(1, data).run());
        }
        auto store = ConversationStore::open(db("flip.db"));
        auto e = loadTiny(model1_);
        auto restored = restoreKv(*e, (*store)->kv(), conv, prompt);
        QCOMPARE(restored->restoredTokens, 16);
        QVERIFY2(restored->refusal.find("checksum mismatch") != std::string::npos, restored->refusal.c_str());
        QCOMPARE(greedy(*e, prompt, 60).tokens, original.tokens);
    }

    // The trailing partial block: restored up to where the next prompt still agrees with it
    // (rows after a differing token left out), refused when its bytes are damaged; the reply
    // is each time that of a fresh engine.
    void partialBlockFitsOrIsRefused() {
        const std::vector<TokenId> prompt = tinyPrompt(14, 75);
        GenerateResult original;
        const int64_t conv = saveConversation(db("tail.db"), prompt, &original);  // 75 + 59 = 8 x 16 + 6
        QVERIFY(conv);
        std::vector<TokenId> diverging = concat(prompt, std::span(original.tokens).first(56));
        diverging.push_back(original.tokens[56] == 5 ? 6 : 5);  // the tail's 4th token differs
        diverging.push_back(3);
        auto fresh = loadTiny(model1_);
        {
            auto store = ConversationStore::open(db("tail.db"));
            auto e = loadTiny(model1_);
            auto restored = restoreKv(*e, (*store)->kv(), conv, diverging);
            QVERIFY2(restored->refusal.empty(), restored->refusal.c_str());
            QCOMPARE(restored->restoredTokens, 128 + 3);
            const GenerateResult a = greedy(*e, diverging, 20), b = greedy(*fresh, diverging, 20);
            QCOMPARE(a.tokens, b.tokens);
            QVERIFY(bitwiseEqual(a.topLogits[0], b.topLogits[0]));
        }
        {
            auto sdb = SqliteDb::open(db("tail.db"));
            auto st = (*sdb)->prepare("SELECT data FROM kv_blocks WHERE length(tokens) < 64");
            QVERIFY(st && st->step().value_or(false));
            std::vector<uint8_t> data = st->blob(0);
            data[data.size() / 2] ^= 0x01;
            auto put = (*sdb)->prepare("UPDATE kv_blocks SET data = ? WHERE length(tokens) < 64");
            QVERIFY(put->bindBlob(1, data).run());
        }
        const std::vector<TokenId> next = concat(prompt, original.tokens);
        auto store = ConversationStore::open(db("tail.db"));
        auto e = loadTiny(model1_);
        auto restored = restoreKv(*e, (*store)->kv(), conv, next);
        QCOMPARE(restored->restoredTokens, 128);
        QVERIFY2(restored->refusal.find("partial KV block") != std::string::npos &&
                     restored->refusal.find("checksum mismatch") != std::string::npos,
                 restored->refusal.c_str());
        QCOMPARE(greedy(*e, next, 20).tokens, greedy(*fresh, next, 20).tokens);
    }

    // The fingerprint comes from the cache while (path, size, mtime) are unchanged — shown by
    // planting a wrong cached value — and is recomputed once the file's mtime changes.
    void fingerprintCache() {
        auto store = ConversationStore::open(db("fp.db"));
        auto fp = (*store)->kv().modelFingerprint(model1_);
        QVERIFY(fp);
        QCOMPARE(fingerprintHex(*fp), fingerprintHex(*fingerprintFile(model1_)));
        {
            auto sdb = SqliteDb::open(db("fp.db"));
            QCOMPARE((*sdb)->queryInt("SELECT count(*) FROM model_fingerprints").value_or(0), int64_t{1});
            QVERIFY((*sdb)->exec("UPDATE model_fingerprints SET fingerprint = '00000000000000000000000000000001'"));
        }
        QCOMPARE(fingerprintHex(*(*store)->kv().modelFingerprint(model1_)),
                 std::string("00000000000000000000000000000001"));
        QFile f(QString::fromStdString(model1_));
        QVERIFY(f.open(QIODevice::ReadWrite));
        QVERIFY(f.setFileTime(QDateTime::currentDateTime().addSecs(-3600), QFileDevice::FileModificationTime));
        f.close();
        QCOMPARE(fingerprintHex(*(*store)->kv().modelFingerprint(model1_)), fingerprintHex(*fp));
    }

    // A split model's cached fingerprint is of all its parts: planted wrong, it is recomputed
    // when only the last part's modification time changes.
    void splitModelFingerprintCache() {
        auto whole = GgufFile::open(model1_);
        QVERIFY(whole);
        const auto parts = test::writeSplit(**whole, dir_.filePath("split").toStdString(), 3);
        QCOMPARE(parts.size(), size_t{3});
        auto store = ConversationStore::open(db("fp-split.db"));
        auto fp = (*store)->kv().modelFingerprint(parts[0]);
        QVERIFY2(fp, fp ? "" : fp.error().message.c_str());
        QCOMPARE(fingerprintHex(*fp), fingerprintHex(*fingerprintModel(parts[0])));
        QVERIFY(*fp != *fingerprintFile(parts[0]));
        {
            auto sdb = SqliteDb::open(db("fp-split.db"));
            QVERIFY((*sdb)->exec("UPDATE model_fingerprints SET fingerprint = '00000000000000000000000000000001'"));
        }
        QCOMPARE(fingerprintHex(*(*store)->kv().modelFingerprint(parts[0])),
                 std::string("00000000000000000000000000000001"));
        QFile last(QString::fromStdString(parts[2]));
        QVERIFY(last.open(QIODevice::ReadWrite));
        QVERIFY(last.setFileTime(QDateTime::currentDateTime().addSecs(-3600), QFileDevice::FileModificationTime));
        last.close();
        QCOMPARE(fingerprintHex(*(*store)->kv().modelFingerprint(parts[0])), fingerprintHex(*fp));
    }

    // A reply that streams for seconds is in the database, incomplete, before it finishes,
    // and complete with all its text after.
    void streamedReplyIsSavedWhileItGrows() {
        const std::string path = db("stream.db");
        auto store = ConversationStore::open(path);
        auto e = loadTiny(model1_);
        auto c = (*store)->createConversation("stream");
        auto reader = SqliteDb::open(path);  // a second connection, as after a crash
        bool sawPartial = false;
        GenerateRequest req;
        req.maxTokens = 12;
        req.sampling.temperature = 0;
        req.sampling.logitBias = {{2, -std::numeric_limits<float>::infinity()}};
        auto r = runStoredTurn(*e, **store, c->id, "the cat at the", req, {}, [&](std::string_view) {
            QTest::qSleep(300);
            auto st = (*reader)->prepare("SELECT length(text) FROM messages WHERE role = 'assistant' AND complete = 0");
            if (st && st->step().value_or(false) && st->int64(0) > 0) sawPartial = true;
            return true;
        });
        QVERIFY(r);
        QVERIFY(sawPartial);
        auto m = (*store)->message(r->replyMessageId);
        QVERIFY((*m)->complete);
        QCOMPARE(QString::fromStdString((*m)->text), QString::fromStdString(r->text));
        QCOMPARE((*m)->stats.generatedTokens, 12);
    }

    // A stored turn goes through the same trimming as the window's: a conversation that fits
    // is rendered whole; one longer than the context keeps its latest turns in the prompt, with
    // room for the reply, and every message stays stored.
    void storedTurnTrimsToTheContext() {
        auto store = ConversationStore::open(db("trim.db"));
        auto e = loadTiny(model1_);
        auto c = (*store)->createConversation("trim");
        GenerateRequest req;
        req.maxTokens = 4;
        req.sampling.temperature = 0;
        req.sampling.logitBias = {{2, -std::numeric_limits<float>::infinity()}};  // no end-of-text: 4 tokens
        auto first = runStoredTurn(*e, **store, c->id, "the cat", req, {});
        QVERIFY(first);
        QCOMPARE(first->omittedTurns, 0);
        QVERIFY(first->prompt == e->chatPrompt({{ChatRole::User, "the cat"}}));
        int64_t parent = first->replyMessageId;
        for (int i = 0; i < 40; ++i) {
            const ChatRole role = i % 2 == 0 ? ChatRole::User : ChatRole::Assistant;
            auto m = (*store)->appendMessage(c->id, parent, role, "the cat at the cat at a the cat at the cat");
            QVERIFY(m);
            parent = m->id;
        }
        auto all = (*store)->activeBranch(c->id);
        auto conv = (*store)->conversation(c->id);
        QVERIFY(all && conv && *conv);
        QVERIFY(e->chatPrompt(chatMessages(**conv, *all)).size() > size_t(e->contextLength()));
        auto r = runStoredTurn(*e, **store, c->id, "a cat", req, {});
        QVERIFY2(r, r ? "" : r.error().message.c_str());
        QVERIFY(r->omittedTurns > 0);
        QVERIFY(static_cast<int>(r->prompt.size()) + 16 <= e->contextLength());
        QCOMPARE(static_cast<int>(r->tokens.size()), 4);
        QCOMPARE(static_cast<int>((*store)->activeBranch(c->id)->size()), 2 + 40 + 2);
    }

    // A budget smaller than all conversations' KV: the least recently used lose their
    // blocks first, every message is kept, and the file stays under the budget.
    void diskBudgetEvictsOldestKv() {
        const int64_t budget = 640 << 10;
        auto store = ConversationStore::open(db("budget.db"), budget);
        QVERIFY(store);
        auto e = loadTiny(model1_);
        std::vector<int64_t> convs;
        for (uint32_t i = 0; i < 12; ++i) {
            auto c = (*store)->createConversation(strCat("c", i));
            QVERIFY((*store)->appendMessage(c->id, 0, ChatRole::User, std::string(2000, 'a' + i)));
            const std::vector<TokenId> prompt = tinyPrompt(100 + i, 200);
            const GenerateResult r = greedy(*e, prompt, 40);
            QVERIFY(saveKv(*e, (*store)->kv(), c->id, concat(prompt, std::span(r.tokens).first(39))));
            convs.push_back(c->id);
            QVERIFY2((*store)->kv().diskUsageBytes() <= budget,
                     qPrintable(QString::number((*store)->kv().diskUsageBytes())));
        }
        auto sdb = SqliteDb::open(db("budget.db"));
        auto hasKv = [&](int64_t id) {
            return (*sdb)
                       ->queryInt("SELECT count(*) FROM conversation_kv WHERE conversation_id = " + std::to_string(id))
                       .value_or(0) > 0;
        };
        QVERIFY(!hasKv(convs.front()));  // the oldest lost its KV
        QVERIFY(hasKv(convs.back()));  // the newest kept it
        for (size_t i = 1; i < convs.size(); ++i) QVERIFY(!hasKv(convs[i - 1]) || hasKv(convs[i]));  // LRU order
        QCOMPARE((*sdb)->queryInt("SELECT count(*) FROM messages").value_or(0), int64_t{12});
        QCOMPARE(
            (*sdb)
                ->queryInt(
                    "SELECT count(*) FROM kv_blocks WHERE block_key NOT IN (SELECT block_key FROM conversation_kv)")
                .value_or(-1),
            int64_t{0});
    }
};

QTEST_GUILESS_MAIN(TestStoreKv)
#include "test_store_kv.moc"
