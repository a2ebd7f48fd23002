// Sampled speculative decoding keeps the target's distribution (label tiny). Target:
// stories260K with penalties, top-k 40, top-p and temperature; draft: the same model with its
// logits perturbed by fixed noise, so q differs from p. Thousands of seeded three-token requests
// stepped by the engine's request machinery (EngineRequests: the drafts ride on the prompt's
// last chunk and are verified from its logit rows); the first and second tokens' frequencies
// against the target's exact p (from its own forward passes) by chi-squared, cells with
// expected count < 5 pooled.
// Controls: the plain Sampler passes the same test; a verifier that keeps every draft fails it.
// Trees (SpecInfer's multi-step speculative sampling, verifyTree): a fixed tree of the target's
// likeliest first tokens and one it never samples, each with two second tokens, verified the
// same way; a tree verifier that walks the first children to a leaf fails.
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>

#include "engine/engine_requests.h"
#include "engine/model/gguf.h"
#include "engine/spec/draft_model_drafter.h"
#include "engine/spec/spec_session.h"
#include "engine/tokenizer/tokenizer.h"
#include "tests/support/test_env.h"

using namespace hearth;

namespace {

constexpr int kTrials = 3000;
constexpr int32_t kContext = 128;

SamplingParams params() {
    SamplingParams s;
    s.repeatPenalty = 1.3f;
    s.topK = 40;
    s.topP = 0.95f;
    s.minP = 0.0f;
    s.temperature = 0.9f;
    return s;
}

// Keeps every drafted token (and adds a token from the last row): the wrong verifier.
VerifyOutcome acceptAll(const TargetRows& rows, const Draft& draft, SpecSampler& sampler) {
    VerifyOutcome o;
    for (int32_t t : draft.tokens) sampler.push(t);
    o.tokens = draft.tokens;
    o.nAccepted = static_cast<int32_t>(draft.tokens.size());
    o.tokens.push_back(sampler.draw(sampler.distribution(rows.row(draft.tokens.size()))));
    sampler.push(o.tokens.back());
    o.bonus = true;
    return o;
}

// Keeps the first child at every node down to a leaf (then a token from its row): the wrong tree verifier.
VerifyOutcome acceptFirstPath(const TargetRows& rows, const DraftTree& tree, SpecSampler& sampler) {
    VerifyOutcome o;
    int32_t at = -1;
    for (;;) {
        int32_t next = -1;
        for (size_t i = 0; i < tree.size() && next < 0; ++i)
            if (tree.parents[i] == at) next = static_cast<int32_t>(i);
        if (next < 0) break;
        sampler.push(tree.tokens[static_cast<size_t>(next)]);
        o.tokens.push_back(tree.tokens[static_cast<size_t>(next)]);
        o.rows.push_back(at + 1);
        o.nodes.push_back(next);
        ++o.nAccepted;
        at = next;
    }
    o.tokens.push_back(sampler.draw(sampler.distribution(rows.row(static_cast<size_t>(at + 1)))));
    o.rows.push_back(at + 1);
    sampler.push(o.tokens.back());
    o.bonus = true;
    return o;
}

// The same tree for the prompt's context every time; nothing after it.
class FixedTreeDrafter final : public Drafter {
public:
    FixedTreeDrafter(DraftTree tree, size_t promptSize) : tree_(std::move(tree)), promptSize_(promptSize) {}
    Result<Draft> propose(std::span<const int32_t>, int32_t, const SpecSampler&) override { return Draft{}; }
    Result<DraftTree> proposeTree(std::span<const int32_t> context, int32_t, int32_t, const SpecSampler&) override {
        return context.size() == promptSize_ ? tree_ : DraftTree{};
    }

private:
    DraftTree tree_;
    size_t promptSize_;
};

struct ChiSquare {
    double statistic = 0, critical = 0;
    int cells = 0, impossible = 0;  // observations of tokens with p = 0
    bool passes() const { return impossible == 0 && statistic <= critical; }
};

// Pearson's chi-squared of observed counts against n * expected, cells with expected count < 5
// pooled (and the pool merged into the smallest cell when itself < 5); critical value at
// alpha = 0.001 by the Wilson-Hilferty approximation.
ChiSquare chiSquare(const std::map<int32_t, int>& observed, const std::map<int32_t, double>& expected, int n) {
    std::vector<std::pair<double, double>> cells;  // (expected count, observed)
    double poolE = 0, poolO = 0;
    ChiSquare r;
    for (const auto& [id, count] : observed)
        if (!expected.contains(id)) r.impossible += count;
    for (const auto& [id, p] : expected) {
        const double e = p * n;
        const double o = observed.contains(id) ? observed.at(id) : 0;
        if (e < 5) {
            poolE += e;
            poolO += o;
        } else cells.emplace_back(e, o);
    }
    if (poolE > 0) {
        if (poolE < 5 && !cells.empty()) {
            auto smallest = std::min_element(cells.begin(), cells.end());
            smallest->first += poolE;
            smallest->second += poolO;
        } else {
            cells.emplace_back(poolE, poolO);
        }
    }
    for (const auto& [e, o] : cells) r.statistic += (o - e) * (o - e) / e;
    r.cells = static_cast<int>(cells.size());
    const double k = std::max(1, r.cells - 1), z = 3.090;  // the 0.999 quantile of N(0, 1)
    r.critical = k * std::pow(1 - 2 / (9 * k) + z * std::sqrt(2 / (9 * k)), 3);
    return r;
}

class Stories {
public:
    bool load(const QString& path) {
        auto f = GgufFile::open(path.toStdString());
        if (!f) return false;
        file = std::move(*f);
        auto m = Model::load(*file);
        auto t = Tokenizer::fromGguf(*file);
        if (!m || !t) return false;
        model = std::move(*m);
        vocab = std::move(*t);
        backend = makeBestCpuBackend(1);
        auto c = KvCache::create(model->kvLayout(), kContext);
        if (!c) return false;
        cache = std::move(*c);
        return true;
    }
    // The logits after tokens, from a fresh sequence.
    std::vector<float> logitsAfter(const std::vector<int32_t>& tokens) {
        std::vector<float> logits(static_cast<size_t>(model->config().nVocab));
        KvSequence seq;
        if (!model->forward(*backend, *cache, seq, tokens, logits)) logits.clear();
        cache->release(seq);
        return logits;
    }
    // The chain's distribution of the token after tokens (penalties over all of them).
    std::map<int32_t, double> next(const std::vector<int32_t>& tokens) {
        SpecSampler s(params());
        s.observe(tokens);
        std::map<int32_t, double> out;
        for (const TokenProb& t : s.distribution(logitsAfter(tokens))) out[t.id] = t.p;
        return out;
    }
    std::unique_ptr<GgufFile> file;
    std::unique_ptr<Model> model;
    std::unique_ptr<Tokenizer> vocab;
    std::unique_ptr<Backend> backend;
    std::unique_ptr<KvCache> cache;
};

struct Samples {
    std::map<int32_t, int> first, second;
    SpecStats total;
};

}  // namespace

class TestSpecDistribution : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        path_ = test::testDataFile("stories260K.gguf");
        HEARTH_REQUIRE_FILE(path_);
        QVERIFY(target_.load(path_));
        prompt_ = target_.vocab->encode("Once upon a time, there was a little", true, false);
        p1_ = target_.next(prompt_);
        for (const auto& [t1, p] : p1_) {
            std::vector<int32_t> ctx = prompt_;
            ctx.push_back(t1);
            for (const auto& [t2, q] : target_.next(ctx)) p2_[t2] += p * q;
        }
        std::printf("target: %zu first tokens possible, %zu second\n", p1_.size(), p2_.size());
    }

    void plainSamplerMatchesTargetDistribution() {
        const std::vector<float> row = target_.logitsAfter(prompt_);
        std::map<int32_t, int> first;
        for (int i = 0; i < kTrials; ++i) {
            SamplingParams sp = params();
            sp.seed = 1000 + static_cast<uint64_t>(i);
            Sampler s(sp);
            s.observe(prompt_);
            ++first[s.sample(row)];
        }
        const ChiSquare c = chiSquare(first, p1_, kTrials);
        std::printf("plain sampler, first token: chi2 %.1f, %d cells, critical %.1f\n", c.statistic, c.cells,
                    c.critical);
        QVERIFY(c.passes());
    }

    void speculativeMatchesTarget() {
        const Samples s = sampleSpeculative(false);
        const ChiSquare c1 = chiSquare(s.first, p1_, kTrials), c2 = chiSquare(s.second, p2_, kTrials);
        std::printf(
            "speculative: drafted %d accepted %d rejected %d; first chi2 %.1f (%d cells, critical %.1f), "
            "second chi2 %.1f (%d cells, critical %.1f)\n",
            s.total.drafted, s.total.accepted, s.total.rejected, c1.statistic, c1.cells, c1.critical, c2.statistic,
            c2.cells, c2.critical);
        QVERIFY(s.total.rejected > kTrials / 10);  // the draft is really different
        QVERIFY(s.total.accepted > kTrials / 10);
        QVERIFY(c1.passes());
        QVERIFY(c2.passes());
    }

    void acceptEverythingVerifierFails() {
        const Samples s = sampleSpeculative(true);
        const ChiSquare c1 = chiSquare(s.first, p1_, kTrials), c2 = chiSquare(s.second, p2_, kTrials);
        std::printf(
            "accept-all control: first chi2 %.1f (critical %.1f, %d impossible), second chi2 %.1f "
            "(critical %.1f, %d impossible)\n",
            c1.statistic, c1.critical, c1.impossible, c2.statistic, c2.critical, c2.impossible);
        QVERIFY(!c1.passes());
        QVERIFY(!c2.passes());
    }

    void treeSpeculativeMatchesTarget() {
        const Samples s = sampleTree(false);
        const ChiSquare c1 = chiSquare(s.first, p1_, kTrials), c2 = chiSquare(s.second, p2_, kTrials);
        std::printf(
            "tree: drafted %d accepted %d rejected %d; first chi2 %.1f (%d cells, critical %.1f), "
            "second chi2 %.1f (%d cells, critical %.1f)\n",
            s.total.drafted, s.total.accepted, s.total.rejected, c1.statistic, c1.cells, c1.critical, c2.statistic,
            c2.cells, c2.critical);
        QVERIFY(s.total.accepted > kTrials / 4);
        QVERIFY(c1.passes());
        QVERIFY(c2.passes());
    }

    void treeAcceptFirstPathFails() {
        const Samples s = sampleTree(true);
        const ChiSquare c1 = chiSquare(s.first, p1_, kTrials), c2 = chiSquare(s.second, p2_, kTrials);
        std::printf(
            "tree accept-first-path control: first chi2 %.1f (critical %.1f), second chi2 %.1f (critical %.1f)\n",
            c1.statistic, c1.critical, c2.statistic, c2.critical);
        QVERIFY(!c1.passes());
        QVERIFY(!c2.passes());
    }

private:
    // The target's likeliest n tokens of a distribution.
    static std::vector<int32_t> top(const std::map<int32_t, double>& dist, size_t n) {
        std::vector<std::pair<double, int32_t>> v;
        for (const auto& [id, p] : dist) v.emplace_back(-p, id);
        std::sort(v.begin(), v.end());
        std::vector<int32_t> out;
        for (size_t i = 0; i < std::min(n, v.size()); ++i) out.push_back(v[i].second);
        return out;
    }

    Samples sampleTree(bool wrongVerifier) {
        Samples out;
        // Root children: the three likeliest first tokens, then one the target never samples;
        // under each, the two likeliest tokens after it.
        DraftTree tree;
        std::vector<int32_t> roots = top(p1_, 3);
        for (int32_t id = 3; id < target_.model->config().nVocab; ++id)
            if (!p1_.contains(id)) {
                roots.push_back(id);
                break;
            }
        for (const int32_t r : roots) {
            tree.tokens.push_back(r);
            tree.parents.push_back(-1);
        }
        for (size_t i = 0; i < roots.size(); ++i) {
            std::vector<int32_t> ctx = prompt_;
            ctx.push_back(roots[i]);
            for (const int32_t c : top(target_.next(ctx), 2)) {
                tree.tokens.push_back(c);
                tree.parents.push_back(static_cast<int32_t>(i));
            }
        }
        if (!tree.valid()) QTest::qFail("the fixed tree is not a tree", __FILE__, __LINE__);
        SpecOptions options = alwaysOn(specNGramTree(2, static_cast<int32_t>(tree.size())));
        auto session =
            SpecSession::create(options, *target_.vocab, target_.model->config().nVocab, *target_.backend, kContext);
        if (!session) QTest::qFail(session.error().message.c_str(), __FILE__, __LINE__);
        if (!session) return out;
        (*session)->drafter = std::make_unique<FixedTreeDrafter>(tree, prompt_.size());
        if (wrongVerifier) (*session)->verifyTree = acceptFirstPath;
        SpecSession* const shared = session->get();
        EngineRequests requests(*target_.model, *target_.backend, *target_.cache, *target_.vocab, kContext, {});
        requests.specSessions().put(std::move(*session));
        for (int i = 0; i < kTrials; ++i) {
            shared->policy =
                SpecPolicy({.maxDraft = 2, .allowSwitchOff = false, .maxTreeNodes = static_cast<int32_t>(tree.size())});
            GenerateRequest req;
            req.prompt = prompt_;
            req.maxTokens = 3;
            req.sampling = params();
            req.sampling.seed = static_cast<uint64_t>(i);
            req.spec = options;
            const std::vector<int32_t> got = run(requests, std::move(req), out.total);
            if (got.size() != 3) QTest::qFail("a run failed", __FILE__, __LINE__);
            if (got.size() != 3) return out;
            ++out.first[got[0]];
            ++out.second[got[1]];
        }
        return out;
    }

    Samples sampleSpeculative(bool wrongVerifier) {
        Samples out;
        const SpecOptions options = alwaysOn(specDraftModel(path_.toStdString(), 2));
        auto session =
            SpecSession::create(options, *target_.vocab, target_.model->config().nVocab, *target_.backend, kContext);
        if (!session) QTest::qFail(session.error().message.c_str(), __FILE__, __LINE__);
        if (!session) return out;
        std::vector<float> noise(static_cast<size_t>(target_.model->config().nVocab));
        std::mt19937 rng(7);
        std::normal_distribution<float> normal(0.0f, 2.0f);
        for (float& v : noise) v = normal(rng);
        static_cast<DraftModelDrafter&>(*(*session)->drafter).setLogitTransform([noise](std::span<float> logits) {
            for (size_t i = 0; i < logits.size(); ++i) logits[i] += noise[i];
        });
        if (wrongVerifier) (*session)->verify = acceptAll;
        SpecSession* const shared = session->get();  // idle in the pool between requests
        EngineRequests requests(*target_.model, *target_.backend, *target_.cache, *target_.vocab, kContext, {});
        requests.specSessions().put(std::move(*session));
        for (int i = 0; i < kTrials; ++i) {
            shared->policy = SpecPolicy({.maxDraft = 2, .allowSwitchOff = false});
            GenerateRequest req;
            req.prompt = prompt_;
            req.maxTokens = 3;  // two drafted tokens ride on the prompt's last chunk
            req.sampling = params();
            req.sampling.seed = static_cast<uint64_t>(i);
            req.spec = options;
            const std::vector<int32_t> got = run(requests, std::move(req), out.total);
            if (got.size() != 3) QTest::qFail("a run failed", __FILE__, __LINE__);
            if (got.size() != 3) return out;
            ++out.first[got[0]];
            ++out.second[got[1]];
        }
        return out;
    }

    // Steps one request to its end: its tokens, its counters added to total.
    static std::vector<int32_t> run(EngineRequests& requests, GenerateRequest req, SpecStats& total) {
        auto id = requests.submit(std::move(req));
        if (!id) return {};
        std::vector<int32_t> got;
        while (!requests.idle()) {
            for (const EngineEvent& e : requests.step()) {
                if (e.kind == EngineEvent::Kind::Token) got.push_back(e.token);
                if (e.kind != EngineEvent::Kind::Finish) continue;
                if (e.error) return {};
                total.drafted += e.spec.drafted;
                total.accepted += e.spec.accepted;
                total.rejected += e.spec.rejected;
            }
        }
        return got;
    }

    QString path_;
    Stories target_;
    std::vector<int32_t> prompt_;
    std::map<int32_t, double> p1_, p2_;
};

QTEST_GUILESS_MAIN(TestSpecDistribution)
#include "test_spec_distribution.moc"
