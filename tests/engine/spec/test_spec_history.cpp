// Exactness of history drafting (SpecDrafter::History) on the real models (label model): the
// engine's history index is seeded with the model's own greedy replies to reworded prompts
// (similar replies, not the same ones: some drafts kept, some refused), then greedy ids with the
// History drafter, and with the window's Default (SpecDrafter::Auto: n-gram and history trees),
// equal plain decoding's on 20 prompts.
#include <QtTest>

#include "engine/engine.h"
#include "engine/spec/suffix_index.h"
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
    Engine& e = **engine;
    std::vector<std::string> texts = test::specExactnessPrompts();
    texts.resize(20);
    // The history: each reworded prompt and its greedy reply, as the app adds saved messages.
    for (const std::string& text : texts) {
        const std::string reworded = "Please answer this one: " + text;
        GenerateRequest req;
        req.prompt = e.chatPrompt({{ChatRole::User, reworded}});
        req.maxTokens = kReplyTokens * 2 / 3;  // shorter than the measured replies: CI time
        req.sampling.temperature = 0.0f;
        auto r = e.generate(req, [](TokenId, std::string_view) { return true; });
        QVERIFY2(r.has_value(), r ? "" : r.error().message.c_str());
        e.addHistory(e.tokenizer().encode(reworded, false, false));
        e.addHistory(r->tokens);
    }
    std::printf("%s: history of %lld tokens in %lld documents\n", label, static_cast<long long>(e.history().nTokens()),
                static_cast<long long>(e.history().nDocuments()));
    std::vector<std::vector<TokenId>> prompts;
    for (const std::string& p : texts) prompts.push_back(e.chatPrompt({{ChatRole::User, p}}));
    SpecOptions history = alwaysOn(specHistory(6));
    history.ngramMin = 1;
    // The window's Default: n-gram and history continuations merged into trees.
    SpecOptions mixed = alwaysOn(specAuto(6, 16));
    const test::ExactnessTally t = test::checkExactness(e, prompts, {history, mixed}, kReplyTokens, label);
    QCOMPARE(t.mismatches, 0);
    QCOMPARE(t.prompts, 2 * static_cast<int>(prompts.size()));
    QVERIFY2(t.withTrees > 0, "the Default drafter's trees should branch");
    QVERIFY2(t.withDrafts * 4 >= t.prompts * 3, "most prompts should draft from the history");
    QVERIFY2(t.withRejections * 4 >= t.prompts, "some prompts should refuse a draft (rollback exercised)");
}

}  // namespace

class TestSpecHistory : public QObject {
    Q_OBJECT
private slots:
    void smolLm2() { checkModel(test::modelFile("SmolLM2-135M-Instruct.Q4_1.gguf"), "smollm2"); }
    void gemma3() { checkModel(test::modelFile("gemma-3-270m-q4_k_m.gguf"), "gemma3"); }
};

QTEST_GUILESS_MAIN(TestSpecHistory)
#include "test_spec_history.moc"
