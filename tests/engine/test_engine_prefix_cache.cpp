// The engine reuses cached KV blocks across requests (tiny random Llama, no model files): a
// second conversation with the same system prompt, returning to the first one, regenerating
// and editing; the reply is always the one a fresh engine gives, and
// len(prompt) == prefixCacheHitTokens + prefillTokens.
#include <QTemporaryDir>
#include <QtTest>
#include <map>
#include <random>

#include "engine/engine.h"
#include "tests/support/tiny_llama.h"

using namespace hearth;
using Tokens = std::vector<TokenId>;

namespace {

Tokens randomTokens(uint32_t seed, int n) {
    std::mt19937 rng(seed);
    Tokens t;
    for (int i = 0; i < n; ++i) t.push_back(static_cast<TokenId>(3 + rng() % 261));  // no <unk>, <s>, </s>
    return t;
}

Tokens concat(Tokens a, const Tokens& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

}  // namespace

class TestEnginePrefixCache : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        test::TinyLlamaShape shape;
        shape.context = 1100;
        path_ = dir_.filePath("tiny.gguf").toStdString();
        QVERIFY(test::tinyLlama(shape).writeFile(path_));
        auto engine = Engine::load(path_, {});
        QVERIFY2(engine, engine ? "" : engine.error().message.c_str());
        engine_ = std::move(*engine);
    }

    void conversationsShareTheSystemPrompt() {
        const Tokens system = randomTokens(1, 40);  // 2.5 blocks of 16
        Tokens a = concat(system, randomTokens(2, 20)), b = concat(system, randomTokens(3, 25));
        a[40] = 5, b[40] = 6;  // the conversations differ right after the system prompt
        QCOMPARE(generate(a).prefixCacheHitTokens, 0);
        QCOMPARE(generate(b).prefixCacheHitTokens, 40);  // the previous call's tokens
        // Back to a: its blocks 0..2 (block 2 copied away from b before b wrote into it) are
        // cached, which beats the 40 tokens in common with b.
        QCOMPARE(generate(a).prefixCacheHitTokens, 48);
        QCOMPARE(generate(a).prefixCacheHitTokens, 59);  // regenerate: all but the last token
    }

    void regeneratingAndEditingALongConversation() {
        const Tokens conversation = randomTokens(4, 1000);
        QCOMPARE(generate(conversation).prefixCacheHitTokens, 0);
        QCOMPARE(generate(conversation).prefixCacheHitTokens, 999);  // >= 98% of the prompt
        Tokens edited = conversation;
        for (size_t i = 980; i < edited.size(); ++i) edited[i] = 7;  // the last message changes
        const int32_t hit = generate(edited).prefixCacheHitTokens;
        QCOMPARE(hit, 980);
        QVERIFY(hit >= 0.98 * static_cast<double>(edited.size()));
    }

private:
    // Generates greedily with the shared engine and checks the reply against a fresh engine.
    GenerateTimings generate(const Tokens& prompt) {
        GenerateRequest req;
        req.prompt = prompt;
        req.maxTokens = 6;
        req.sampling.temperature = 0;
        const auto ignore = [](TokenId, std::string_view) { return true; };
        auto cached = engine_->generate(req, ignore);
        if (!references_.contains(prompt)) {  // a fresh engine, once per prompt
            auto fresh = Engine::load(path_, {});
            auto reference = fresh ? (*fresh)->generate(req, ignore) : Result<GenerateResult>();
            if (reference) references_[prompt] = reference->tokens;
        }
        if (!cached || !references_.contains(prompt)) {
            QTest::qFail("generate failed", __FILE__, __LINE__);
            return {};
        }
        QTest::qCompare(cached->tokens, references_[prompt], "cached", "reference", __FILE__, __LINE__);
        QTest::qCompare(cached->timings.prefixCacheHitTokens + cached->timings.prefillTokens,
                        static_cast<int32_t>(prompt.size()), "hit + prefill", "prompt", __FILE__, __LINE__);
        return cached->timings;
    }

    QTemporaryDir dir_;
    std::string path_;
    std::unique_ptr<Engine> engine_;
    std::map<Tokens, Tokens> references_;  // prompt -> reply of a fresh engine
};

QTEST_APPLESS_MAIN(TestEnginePrefixCache)
#include "test_engine_prefix_cache.moc"
