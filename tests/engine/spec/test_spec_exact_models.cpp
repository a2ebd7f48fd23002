// Exactness of speculative decoding on the real models (label model): greedy ids with the
// n-gram drafter (chains, and trees of its continuations) and with the draft-model drafter (the same file: no smaller model with the
// same vocabulary is at hand, so every draft is kept) equal plain decoding's, over the
// prompts of tests/engine/spec/spec_prompts.h. Also: a draft model with another vocabulary is refused.
#include <QtTest>

#include "engine/engine.h"
#include "tests/engine/spec/spec_exactness.h"
#include "tests/engine/spec/spec_prompts.h"
#include "tests/support/test_env.h"

using namespace hearth;

namespace {

constexpr int32_t kReplyTokens = 24;

void checkModel(const QString& path, const char* label) {
    HEARTH_REQUIRE_FILE(path);
    EngineOptions options;
    options.contextLength = 1024;
    auto engine = Engine::load(path.toStdString(), options);
    QVERIFY2(engine.has_value(), engine ? "" : engine.error().message.c_str());
    std::vector<std::vector<TokenId>> prompts;
    for (const std::string& p : test::specExactnessPrompts())
        prompts.push_back((*engine)->chatPrompt({{ChatRole::User, p}}));
    prompts.resize(20);
    // n = 1 too, so that every prompt drafts something.
    SpecOptions ngram = alwaysOn(specNGram(6));
    ngram.ngramMin = 1;
    const SpecOptions draft = alwaysOn(specDraftModel(path.toStdString()));
    const test::ExactnessTally n = test::checkExactness(**engine, prompts, {ngram}, kReplyTokens, label);
    QCOMPARE(n.mismatches, 0);
    QCOMPARE(n.prompts, static_cast<int>(prompts.size()));
    QCOMPARE(n.withDrafts, n.prompts);
    QVERIFY2(n.withRejections * 2 > n.prompts, "most prompts should reject a draft (rollback exercised)");
    // Trees of the n-gram drafter's continuations (at their widest: no switching to linear).
    SpecOptions tree = alwaysOn(specNGramTree(6, 16));
    tree.ngramMin = 1;
    const test::ExactnessTally t = test::checkExactness(**engine, prompts, {tree}, kReplyTokens, label);
    QCOMPARE(t.mismatches, 0);
    QCOMPARE(t.prompts, static_cast<int>(prompts.size()));
    QCOMPARE(t.withDrafts, t.prompts);
    QVERIFY2(t.withRejections * 2 > t.prompts, "most prompts should reject a draft (rollback exercised)");
    QVERIFY2(t.withTrees * 2 > t.prompts, "most prompts should verify a branched tree");
    // The draft model on a few prompts (it costs a full model per drafted token here).
    prompts.resize(4);
    const test::ExactnessTally d = test::checkExactness(**engine, prompts, {draft}, kReplyTokens / 3, label);
    QCOMPARE(d.mismatches, 0);
    QCOMPARE(d.withDrafts, d.prompts);
}

}  // namespace

class TestSpecExactModels : public QObject {
    Q_OBJECT
private slots:
    void smolLm2() { checkModel(test::modelFile("SmolLM2-135M-Instruct.Q4_1.gguf"), "smollm2"); }
    void gemma3() { checkModel(test::modelFile("gemma-3-270m-q4_k_m.gguf"), "gemma3"); }
    void otherVocabularyRefused() {
        const QString target = test::modelFile("SmolLM2-135M-Instruct.Q4_1.gguf");
        const QString other = test::modelFile("gemma-3-270m-q4_k_m.gguf");
        HEARTH_REQUIRE_FILE(target);
        HEARTH_REQUIRE_FILE(other);
        EngineOptions options;
        options.contextLength = 256;
        auto engine = Engine::load(target.toStdString(), options);
        QVERIFY(engine.has_value());
        GenerateRequest req;
        req.prompt = (*engine)->rawPrompt("Hello");
        req.maxTokens = 4;
        req.spec = specDraftModel(other.toStdString());
        auto r = (*engine)->generate(req, [](TokenId, std::string_view) { return true; });
        QVERIFY(!r.has_value());
        QCOMPARE(r.error().code, ErrorCode::InvalidArgument);
        std::printf("refused: %s\n", r.error().message.c_str());
        QVERIFY(r.error().message.find("vocabulary") != std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestSpecExactModels)
#include "test_spec_exact_models.moc"
