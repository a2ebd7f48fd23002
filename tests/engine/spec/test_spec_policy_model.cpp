// The policy on a real model (label model, SmolLM2, n-gram drafter): speculation switches
// itself off during an open-ended chat reply (sampled with the app's default settings, seeded;
// slower than plain decoding under the cost model below), and back on when a later reply of the same chat
// (greedy) repeats a passage. The policy judges the steps by a fixed cost model (a step that
// verifies n rows costs 1 + 8.5 n ms: one row a little under 10 ms, as SmolLM2's decode step on
// 2 threads, and each further row almost as much, as small batches cost on this CPU today: the
// "CPU bandwidth" issue measured two rows at 0.76x of one after the other) rather than the wall clock,
// so that its decisions follow the drafts the model accepts and not the host's load: on a
// loaded host the wall clock once made plain steps look slower than speculative ones. What
// speculation gains in wall time is measured by `hearth-cli bench-spec`.
#include <QtTest>

#include "engine/engine.h"
#include "tests/engine/spec/spec_prompts.h"
#include "tests/support/test_env.h"

using namespace hearth;

namespace {

void print(const char* what, const GenerateResult& r) {
    const SpecStats& s = r.spec;
    std::printf(
        "%s: %zu tokens, drafted %d accepted %d, forwards %d, off %d on %d, active at end %d; "
        "ms/token plain %.2f, speculative %.2f (last window)\n",
        what, r.tokens.size(), s.drafted, s.accepted, s.targetForwards, s.switchedOff, s.switchedOn, s.activeAtEnd,
        s.plainMsPerToken, s.specMsPerToken);
    std::fflush(stdout);
}

}  // namespace

class TestSpecPolicyModel : public QObject {
    Q_OBJECT
private slots:
    void offOnChatBackOnWhenRepetitive() {
        const QString path = test::modelFile("SmolLM2-135M-Instruct.Q4_1.gguf");
        HEARTH_REQUIRE_FILE(path);
        EngineOptions options;
        options.contextLength = 2048;
        auto engine = Engine::load(path.toStdString(), options);
        QVERIFY(engine.has_value());
        Engine& e = **engine;
        GenerateRequest req;
        req.sampling.seed = 3;
        req.maxTokens = 128;
        req.spec = specNGram(8);
        req.spec.stepCostMs = 1.0;
        req.spec.rowCostMs = 8.5;
        std::string text;
        const auto collect = [&](TokenId, std::string_view t) {
            text += t;
            return true;
        };
        std::vector<ChatMessage> chat{{ChatRole::User, test::specChatPrompts()[0]}};
        req.prompt = e.chatPrompt(chat);
        auto first = e.generate(req, collect);
        QVERIFY(first.has_value());
        print("open-ended reply", *first);
        QVERIFY(first->spec.switchedOff >= 1);
        QVERIFY(!first->spec.activeAtEnd);
        chat.push_back({ChatRole::Assistant, text});
        chat.push_back({ChatRole::User, std::string("Repeat this passage word for word: ") + test::kSpecPassage});
        req.prompt = e.chatPrompt(chat);
        req.maxTokens = 64;
        req.sampling.temperature = 0.0f;
        auto second = e.generate(req, collect);
        QVERIFY(second.has_value());
        print("repetitive reply", *second);
        QVERIFY(second->spec.switchedOn >= 1);
        QVERIFY(second->spec.accepted > 0);
    }
};

QTEST_GUILESS_MAIN(TestSpecPolicyModel)
#include "test_spec_policy_model.moc"
