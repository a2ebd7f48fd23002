// Speculative decoding inside Engine::submit()/step() (label tiny, so ASan+UBSan run it): a
// plain, an n-gram and a draft-model request stepped together each give their solo plain
// greedy tokens (also under KV pressure that preempts them); an end-of-generation token and a
// stop string inside an accepted run of drafts cut the reply exactly there; a request cancelled
// while speculating finishes at the next step and leaves the others and later requests exact.
#include <QTemporaryDir>
#include <QtTest>

#include <limits>
#include <map>

#include "engine/engine.h"
#include "tests/support/tiny_llama.h"

using namespace hearth;
using Tokens = std::vector<TokenId>;

namespace {

GenerateRequest greedy(Tokens prompt, int32_t maxTokens, SpecOptions spec = {}) {
    GenerateRequest req;
    req.prompt = std::move(prompt);
    req.maxTokens = maxTokens;
    req.sampling.temperature = 0;
    req.sampling.logitBias.push_back({2, -std::numeric_limits<float>::infinity()});  // no </s>: full length
    req.spec = std::move(spec);
    return req;
}

Tokens promptOf(int i) {
    Tokens t{1};
    for (int k = 0; k < 5 + 7 * i; ++k) t.push_back(static_cast<TokenId>(3 + (k * 37 + i * 101) % 256));
    return t;
}

// One request's events.
struct Run {
    Tokens tokens;
    std::vector<int> perStep;  // Token events in each step that had any
    std::string text;  // shown text, the finish event's included
    std::vector<std::string> shown;  // each Token event's text
    FinishReason reason = FinishReason::Error;
    GenerateTimings timings;
    SpecStats spec;
    bool finished = false;
    // Tokens the verifier produced (kept drafts plus one per forward): more than were emitted
    // when the reply was cut inside a run.
    int32_t verified() const { return spec.accepted + spec.targetForwards; }
};

// Steps every request in ids to its end; also counts steps where several requests made tokens.
std::map<RequestId, Run> stepAll(Engine& e, const std::vector<RequestId>& ids, int* sharedSteps = nullptr) {
    std::map<RequestId, Run> runs;
    for (RequestId id : ids) runs[id];
    while (!e.idle()) {
        std::map<RequestId, int> counts;
        for (const EngineEvent& ev : e.step()) {
            Run& r = runs.at(ev.request);
            r.text += ev.text;
            if (ev.kind == EngineEvent::Kind::Token) {
                r.tokens.push_back(ev.token);
                r.shown.push_back(ev.text);
                ++counts[ev.request];
                continue;
            }
            r.reason = ev.reason;
            r.timings = ev.timings;
            r.spec = ev.spec;
            r.finished = true;
        }
        for (const auto& [id, n] : counts) runs.at(id).perStep.push_back(n);
        if (sharedSteps && counts.size() > 1) ++*sharedSteps;
    }
    return runs;
}

Run runAlone(Engine& e, GenerateRequest req) {
    auto id = e.submit(std::move(req));
    if (!id) return {};
    return stepAll(e, {*id}).at(*id);
}

// Indexes of tokens that are neither first nor last of their step: inside an accepted run.
std::vector<size_t> insideRuns(const Run& r) {
    std::vector<size_t> out;
    size_t at = 0;
    for (int n : r.perStep) {
        for (int k = 1; k + 1 < n; ++k) out.push_back(at + static_cast<size_t>(k));
        at += static_cast<size_t>(n);
    }
    return out;
}

}  // namespace

class TestSpecStep : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        test::TinyLlamaShape shape;
        target_ = dir_.filePath("target.gguf").toStdString();
        QVERIFY(test::tinyLlama(shape).writeFile(target_));
        shape.seed = 2;
        shape.nLayers = 1;
        other_ = dir_.filePath("other.gguf").toStdString();
        QVERIFY(test::tinyLlama(shape).writeFile(other_));
        auto e = Engine::load(target_, {});
        QVERIFY2(e, e ? "" : e.error().message.c_str());
        engine_ = std::move(*e);
    }

    void plainNgramAndDraftModelTogetherEqualAlone() { mixedBatch(*engine_, false); }

    void preemptedWhileSpeculatingKeepsTheTokens() {
        EngineOptions options;
        options.contextLength = 96;  // 6 blocks of 16 for three requests of ~60 positions
        auto small = Engine::load(target_, options);
        QVERIFY(small);
        mixedBatch(**small, true);
    }

    // The target's own file as draft model: every draft is kept, so steps emit runs of tokens.
    // A token first seen inside such a run becomes the end-of-generation id of a copy of the
    // target (same weights): plain and speculative replies both end exactly at it.
    void endOfGenerationInsideARunCutsThere() {
        const Run full = runAlone(*engine_, greedy(promptOf(1), 40, alwaysOn(specDraftModel(target_, 4))));
        QVERIFY(full.finished);
        TokenId eos = -1;
        size_t at = 0;
        for (size_t j : insideRuns(full)) {
            const TokenId t = full.tokens[j];
            if (t > 2 &&
                std::find(full.tokens.begin(), full.tokens.begin() + static_cast<std::ptrdiff_t>(j), t) ==
                    full.tokens.begin() + static_cast<std::ptrdiff_t>(j)) {
                eos = t;
                at = j;
                break;
            }
        }
        QVERIFY2(eos > 2, "no token first seen inside an accepted run");
        test::TinyLlamaShape shape;
        auto w = test::tinyLlama(shape);
        w.set("tokenizer.ggml.eos_token_id", static_cast<uint32_t>(eos));
        const std::string path = dir_.filePath("eos.gguf").toStdString();
        QVERIFY(w.writeFile(path));
        auto e = Engine::load(path, {});
        QVERIFY(e);
        const Run plain = runAlone(**e, greedy(promptOf(1), 40));
        const Run spec = runAlone(**e, greedy(promptOf(1), 40, alwaysOn(specDraftModel(target_, 4))));
        const Tokens expected(full.tokens.begin(), full.tokens.begin() + static_cast<std::ptrdiff_t>(at) + 1);
        std::printf("eos %d at token %zu: plain %zu tokens, speculative %zu (verified %d)\n", eos, at,
                    plain.tokens.size(), spec.tokens.size(), spec.verified());
        QCOMPARE(plain.tokens, expected);
        QCOMPARE(plain.reason, FinishReason::Eos);
        QCOMPARE(spec.tokens, expected);
        QCOMPARE(spec.reason, FinishReason::Eos);
        QCOMPARE(spec.text, plain.text);
        QVERIFY(spec.verified() > static_cast<int32_t>(spec.tokens.size()));  // the run went on past it
    }

    // A stop string ending inside an accepted run (its first occurrence in the shown text): the reply
    // ends there, with the same tokens and shown text as plain decoding with that stop string.
    void stopStringInsideARunCutsThere() {
        const Run full = runAlone(*engine_, greedy(promptOf(2), 40, alwaysOn(specDraftModel(target_, 4))));
        QVERIFY(full.finished);
        std::string stop;
        size_t at = 0;
        for (size_t j : insideRuns(full)) {
            std::string text;  // shown up to token j
            for (size_t i = 0; i <= j; ++i) text += full.shown[i];
            const std::string s = full.shown[j - 1] + full.shown[j];
            // Token j shows text, and the first occurrence of s ends with it.
            if (!full.shown[j].empty() && text.find(s) == text.size() - s.size()) {
                stop = s;
                at = j;
                break;
            }
        }
        QVERIFY2(!stop.empty(), "no stop string ends inside an accepted run");
        GenerateRequest req = greedy(promptOf(2), 40);
        req.stop = {stop};
        const Run plain = runAlone(*engine_, req);
        req.spec = alwaysOn(specDraftModel(target_, 4));
        const Run spec = runAlone(*engine_, req);
        std::printf("stop '%s' at token %zu: plain %zu tokens, speculative %zu (verified %d)\n", stop.c_str(), at,
                    plain.tokens.size(), spec.tokens.size(), spec.verified());
        QCOMPARE(plain.tokens.size(), at + 1);
        QCOMPARE(plain.reason, FinishReason::Stop);
        QCOMPARE(spec.tokens, plain.tokens);
        QCOMPARE(spec.reason, FinishReason::Stop);
        QCOMPARE(spec.text, plain.text);
        QVERIFY(spec.text.find(stop) == std::string::npos);
        QVERIFY(spec.verified() > static_cast<int32_t>(spec.tokens.size()));
    }

    // Cancelled after a few speculative steps: Cancelled at the next step, its tokens a prefix
    // of the plain reply; the plain request beside it and a later request with the same options
    // (the session taken up again, its draft model's sequence left mid-reply) stay exact.
    void cancelWhileSpeculating() {
        Engine& e = *engine_;
        const Tokens soloA = runAlone(e, greedy(promptOf(3), 40)).tokens,
                     soloB = runAlone(e, greedy(promptOf(4), 30)).tokens;
        const SpecOptions spec = alwaysOn(specDraftModel(other_, 4));
        const RequestId a = e.submit(greedy(promptOf(3), 40, spec)).value(),
                        b = e.submit(greedy(promptOf(4), 30)).value();
        Tokens gotA, gotB;
        std::optional<EngineEvent> finishA;
        int step = 0, cancelledAt = -1, finishedAt = -1;
        while (!e.idle()) {
            ++step;
            for (EngineEvent& ev : e.step()) {
                QVERIFY(ev.request == a || ev.request == b);
                Tokens& got = ev.request == a ? gotA : gotB;
                if (ev.kind == EngineEvent::Kind::Token) got.push_back(ev.token);
                else if (ev.request == a) finishA = ev, finishedAt = step;
            }
            if (cancelledAt < 0 && gotA.size() >= 6) {
                e.cancel(a);
                cancelledAt = step;
            }
        }
        QVERIFY(finishA.has_value());
        QCOMPARE(finishedAt, cancelledAt + 1);
        QCOMPARE(finishA->reason, FinishReason::Cancelled);
        QVERIFY(finishA->spec.drafted > 0);
        QVERIFY(gotA.size() < soloA.size());
        QCOMPARE(gotA, Tokens(soloA.begin(), soloA.begin() + static_cast<std::ptrdiff_t>(gotA.size())));
        QCOMPARE(gotB, soloB);
        const Run again = runAlone(e, greedy(promptOf(3), 40, spec));
        QCOMPARE(again.tokens, soloA);
        QVERIFY(again.spec.rollbacks > 0);
        std::printf("again: prefix cache hit %d of %zu prompt tokens\n", again.timings.prefixCacheHitTokens,
                    promptOf(3).size());
        QVERIFY(again.timings.prefixCacheHitTokens > 0);  // the cancelled request's KV was reused
    }

    // nTopLogits on the speculative path: each token's top logits come from the verify row that
    // chose it, equal to plain decoding's.
    void topLogitsOfVerifiedTokens() {
        GenerateRequest req = greedy(promptOf(5), 24);
        req.nTopLogits = 4;
        const auto ignore = [](TokenId, std::string_view) { return true; };
        auto plain = engine_->generate(req, ignore);
        req.spec = alwaysOn(specDraftModel(target_, 4));
        auto spec = engine_->generate(req, ignore);
        QVERIFY(plain && spec);
        QCOMPARE(spec->tokens, plain->tokens);
        QVERIFY(spec->spec.accepted > 0);
        QCOMPARE(spec->topLogits.size(), plain->topLogits.size());
        QCOMPARE(spec->topLogits, plain->topLogits);
    }

private:
    void mixedBatch(Engine& e, bool expectPreemption) {
        const SpecOptions ngram = alwaysOn(specNGram(5)), draft = alwaysOn(specDraftModel(other_, 4));
        const std::vector<SpecOptions> modes{{}, ngram, draft};
        std::vector<Tokens> alone;
        // Prompts that repeat themselves: the n-gram drafter proposes their continuation, which
        // the random model does not follow (rejections), besides its own repeats.
        std::vector<Tokens> prompts;
        for (int i = 0; i < 3; ++i) {
            prompts.push_back(promptOf(i + 1));
            prompts.back().insert(prompts.back().end(), prompts.back().begin() + 1, prompts.back().end());
        }
        for (int i = 0; i < 3; ++i) alone.push_back(runAlone(e, greedy(prompts[static_cast<size_t>(i)], 24)).tokens);
        std::vector<RequestId> ids;
        for (int i = 0; i < 3; ++i)
            ids.push_back(e.submit(greedy(prompts[static_cast<size_t>(i)], 24, modes[static_cast<size_t>(i)])).value());
        int shared = 0;
        const std::map<RequestId, Run> runs = stepAll(e, ids, &shared);
        for (int i = 0; i < 3; ++i) {
            const Run& r = runs.at(ids[static_cast<size_t>(i)]);
            const int most = r.perStep.empty() ? 0 : *std::max_element(r.perStep.begin(), r.perStep.end());
            std::printf("%s: %zu tokens, drafted %d accepted %d rollbacks %d, forwards %d, most tokens in a step %d\n",
                        i == 0       ? "plain"
                            : i == 1 ? "ngram"
                                     : "draft",
                        r.tokens.size(), r.spec.drafted, r.spec.accepted, r.spec.rollbacks, r.spec.targetForwards,
                        most);
            QCOMPARE(r.tokens, alone[static_cast<size_t>(i)]);
            QCOMPARE(r.reason, FinishReason::Length);
            if (i > 0) QVERIFY(r.spec.drafted > 0);
            if (i > 0) QVERIFY(r.spec.rollbacks > 0);
            if (i > 0) QCOMPARE(r.spec.targetForwards, static_cast<int32_t>(r.tokens.size()) - r.spec.accepted);
        }
        std::printf("steps with tokens of several requests: %d; preemptions %lld\n", shared,
                    static_cast<long long>(e.metrics().nPreemptions));
        QVERIFY(shared > 0);
        if (expectPreemption) QVERIFY(e.metrics().nPreemptions > 0);
    }

    QTemporaryDir dir_;
    std::string target_, other_;
    std::unique_ptr<Engine> engine_;
};

QTEST_GUILESS_MAIN(TestSpecStep)
#include "test_spec_step.moc"
