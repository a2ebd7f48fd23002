// Beam search: the selection step on fixed log-probabilities; on a tiny random Llama with a
// vocabulary of 8 tokens (one of them the end token), the result against an exhaustive search
// of the same depth whose log-probabilities come from a fresh forward of each whole sequence
// (no forked KV), also with a logit bias and a presence penalty; one forwardBatch per step;
// stop strings, the time limit; prefix blocks shared by the beams; and Engine::beamSearch on the
// tiny Llama (the context limit).
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <limits>
#include <random>

#include "engine/engine.h"
#include "engine/model/gguf.h"
#include "engine/runner/beam_runner.h"
#include "tests/support/counting_model.h"
#include "tests/support/tiny_llama.h"

using namespace hearth;
using Tokens = std::vector<int32_t>;

namespace {

constexpr int kVocab = 8;
constexpr int32_t kEnd = 2;

// A Llama whose vocabulary has only kVocab entries (Model::load needs no tokenizer).
GgufWriter smallVocabLlama() {
    const int nEmbd = 64, nFf = 96, nHeads = 4, nKvHeads = 2, nLayers = 2;
    GgufWriter w;
    w.set("general.architecture", "llama");
    w.set("llama.block_count", uint32_t{nLayers});
    w.set("llama.context_length", uint32_t{256});
    w.set("llama.embedding_length", uint32_t{nEmbd});
    w.set("llama.feed_forward_length", uint32_t{nFf});
    w.set("llama.attention.head_count", uint32_t{nHeads});
    w.set("llama.attention.head_count_kv", uint32_t{nKvHeads});
    w.set("llama.attention.layer_norm_rms_epsilon", 1e-5f);
    w.set("llama.rope.freq_base", 10000.0f);
    std::mt19937 rng(3);
    const int64_t kvDim = nEmbd / nHeads * nKvHeads;
    w.addTensor("token_embd.weight", {nEmbd, kVocab}, DType::F32,
                test::tinyTensorBytes(DType::F32, nEmbd, kVocab, rng, 1.0f));
    w.addTensor("output_norm.weight", {nEmbd}, DType::F32, test::onesF32(nEmbd));
    for (int il = 0; il < nLayers; ++il) {
        const std::string p = "blk." + std::to_string(il) + ".";
        const auto add = [&](const char* n, int64_t cols, int64_t rows) {
            w.addTensor(p + n, {cols, rows}, DType::F32, test::tinyTensorBytes(DType::F32, cols, rows, rng, 0.4f));
        };
        w.addTensor(p + "attn_norm.weight", {nEmbd}, DType::F32, test::onesF32(nEmbd));
        w.addTensor(p + "ffn_norm.weight", {nEmbd}, DType::F32, test::onesF32(nEmbd));
        add("attn_q.weight", nEmbd, nEmbd);
        add("attn_k.weight", nEmbd, kvDim);
        add("attn_v.weight", nEmbd, kvDim);
        add("attn_output.weight", nEmbd, nEmbd);
        add("ffn_gate.weight", nEmbd, nFf);
        add("ffn_up.weight", nEmbd, nFf);
        add("ffn_down.weight", nFf, nEmbd);
    }
    return w;
}

BeamSearchParams bp(int32_t nBeams, int32_t maxTokens, float alpha, std::vector<int32_t> endTokens) {
    BeamSearchParams p;
    p.nBeams = nBeams;
    p.maxTokens = maxTokens;
    p.lengthNormAlpha = alpha;
    p.endTokens = std::move(endTokens);
    return p;
}

struct Best {
    Tokens tokens;
    double logProb = -INFINITY, score = -INFINITY;
};

// Every continuation of up to depth tokens (ending early at kEnd), each prefix's next-token
// log-probabilities from one forward of prompt + prefix on a fresh sequence.
class Exhaustive {
public:
    Exhaustive(Model& model, Backend& backend, KvCache& cache) : model_(model), backend_(backend), cache_(cache) {}

    std::vector<double> nextLogProbs(const Tokens& prompt, const Tokens& prefix) {
        Tokens all = prompt;
        all.insert(all.end(), prefix.begin(), prefix.end());
        KvSequence seq;
        if (!cache_.reserve(seq, static_cast<int32_t>(all.size()))) qFatal("reserve");
        std::vector<float> logits(kVocab);
        if (!model_.forward(backend_, cache_, seq, all, logits)) qFatal("forward");
        cache_.release(seq);
        for (const LogitBias& b : bias) logits[static_cast<size_t>(b.id)] += b.bias;
        for (int32_t t = 0; t < kVocab; ++t)  // presence penalty over the whole history
            if (std::find(all.begin(), all.end(), t) != all.end()) logits[static_cast<size_t>(t)] -= presence;
        std::vector<double> lp;
        logSoftmax(logits, lp);
        return lp;
    }

    void search(const Tokens& prompt, Tokens& prefix, double logProb, int depth, float alpha, Best& best) {
        const std::vector<double> lp = nextLogProbs(prompt, prefix);
        for (int32_t t = 0; t < kVocab; ++t) {
            prefix.push_back(t);
            const double sum = logProb + lp[static_cast<size_t>(t)];
            if (t == kEnd || std::ssize(prefix) == depth) {
                const double score = beamScore(sum, prefix.size(), alpha);
                if (score > best.score) best = {prefix, sum, score};
            } else {
                search(prompt, prefix, sum, depth, alpha, best);
            }
            prefix.pop_back();
        }
    }

    double logProbOf(const Tokens& prompt, const Tokens& tokens) {
        double sum = 0;
        Tokens prefix;
        for (int32_t t : tokens) {
            sum += nextLogProbs(prompt, prefix)[static_cast<size_t>(t)];
            prefix.push_back(t);
        }
        return sum;
    }

    // What beam search applies before each log-softmax (BeamSearchParams' logitBias and
    // presencePenalty with repeatLastN -1), applied here by hand.
    std::vector<LogitBias> bias;
    float presence = 0;

private:
    Model& model_;
    Backend& backend_;
    KvCache& cache_;
};

using test::CountingModel;

// Token t decodes to the letter 'a' + t.
std::string letters(std::span<const int32_t> ids) {
    std::string s;
    for (int32_t t : ids) s += static_cast<char>('a' + t);
    return s;
}

}  // namespace

class TestBeamSearch : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        path_ = dir_.filePath("vocab8.gguf").toStdString();
        QVERIFY(smallVocabLlama().writeFile(path_));
        auto file = GgufFile::open(path_);
        QVERIFY2(file, file ? "" : file.error().message.c_str());
        file_ = std::move(*file);
        auto model = Model::load(*file_);
        QVERIFY2(model, model ? "" : model.error().message.c_str());
        model_ = std::move(*model);
        QCOMPARE(model_->config().nVocab, kVocab);
        backend_ = makeBestCpuBackend(1);
        auto cache = KvCache::create(model_->kvLayout(16), 2048 * 16);  // 512 beams at depth 4
        QVERIFY(cache);
        cache_ = std::move(*cache);
    }

    // Beam 0 (log p -1) offers tokens 0 and 1 (end), beam 1 (log p -2) offers 0 and 1.
    void chooseBeamsRanksAllExtensions() {
        const std::vector<double> beams{-1.0, -2.0};
        const std::vector<std::vector<double>> lp{{std::log(0.6), std::log(0.4)}, {std::log(0.9), std::log(0.1)}};
        const std::vector<int32_t> end{1};
        const BeamChoice c = chooseBeams(beams, lp, 2, end, false);
        // Ranked: (0,0) -1.51, (1,0) -2.105, (0,1) -1.92 -> order (0,0), (0,1 end), (1,0).
        QCOMPARE(c.live.size(), size_t{2});
        QCOMPARE(c.live[0].parent, 0);
        QCOMPARE(c.live[0].token, 0);
        QCOMPARE(c.live[1].parent, 1);
        QCOMPARE(c.live[1].token, 0);
        QCOMPARE(c.ended.size(), size_t{1});
        QCOMPARE(c.ended[0].token, 1);
        QCOMPARE(c.ended[0].logProb, -1.0 + std::log(0.4));
        const BeamChoice last = chooseBeams(beams, lp, 2, end, true);
        QVERIFY(last.live.empty());
        QCOMPARE(last.ended.size(), size_t{2});  // the two best extensions, whatever their token
        QCOMPARE(last.ended[1].token, 1);
        QCOMPARE(beamScore(-6.0, 4, 0.5f), -3.0);
    }

    // A beam as wide as the tree's widest level keeps every hypothesis: it must find the
    // exhaustive optimum, by the plain sum and length-normalised. Depths 3 and 4.
    void wideBeamEqualsExhaustive() {
        Exhaustive ex(*model_, *backend_, *cache_);
        const Tokens prompt{1, 5, 3, 7, 4};
        for (int depth : {3, 4})
            for (float alpha : {0.0f, 1.0f}) {
                Best best;
                Tokens prefix;
                ex.search(prompt, prefix, 0.0, depth, alpha, best);
                const int32_t width = static_cast<int32_t>(std::pow(kVocab, depth - 1));
                auto r = runBeamSearch(*model_, *backend_, *cache_, prompt, bp(width, depth, alpha, {kEnd}));
                QVERIFY2(r, r ? "" : r.error().message.c_str());
                const BeamHypothesis& got = r->hypotheses.front();
                const QString what = QStringLiteral("depth %1 alpha %2").arg(depth).arg(alpha);
                QVERIFY2(got.tokens == best.tokens, qPrintable(what));
                QVERIFY2(std::abs(got.logProb - best.logProb) < 1e-9, qPrintable(what));
                QVERIFY2(std::abs(got.score - best.score) < 1e-9, qPrintable(what));
                QCOMPARE(got.ended, best.tokens.back() == kEnd);
                QCOMPARE(cache_->pool().nUsed(), 0);  // every block released
            }
    }

    // Narrower beams: a real hypothesis scored right, never above the optimum; 1 beam = greedy.
    void narrowBeamsAreConsistent() {
        Exhaustive ex(*model_, *backend_, *cache_);
        const Tokens prompt{1, 6, 6, 3};
        Best best;
        Tokens prefix;
        ex.search(prompt, prefix, 0.0, 4, 0.0f, best);
        for (int32_t width : {1, 2, 3}) {
            auto r = runBeamSearch(*model_, *backend_, *cache_, prompt, bp(width, 4, 0.0f, {kEnd}));
            QVERIFY(r);
            const BeamHypothesis& got = r->hypotheses.front();
            QVERIFY(std::abs(ex.logProbOf(prompt, got.tokens) - got.logProb) < 1e-9);
            QVERIFY(got.logProb <= best.logProb + 1e-12);
            if (width > 1) continue;
            Tokens greedy;  // argmax chain, stopping at the end token
            while (std::ssize(greedy) < 4 && (greedy.empty() || greedy.back() != kEnd)) {
                const std::vector<double> lp = ex.nextLogProbs(prompt, greedy);
                greedy.push_back(static_cast<int32_t>(std::max_element(lp.begin(), lp.end()) - lp.begin()));
            }
            QCOMPARE(got.tokens, greedy);
        }
    }

    // A 70-token prompt (5 blocks of 16): 4 beams share its 4 full blocks, each copying only
    // the partly filled fifth one.
    void beamsSharePrefixBlocks() {
        Tokens prompt{1};
        for (int i = 0; i < 69; ++i) prompt.push_back(3 + i % 5);
        auto r = runBeamSearch(*model_, *backend_, *cache_, prompt, bp(4, 6, 0.0f, {}));
        QVERIFY(r);
        QCOMPARE(r->blocksPerBeam, 5);
        // Old and new beams side by side at a step: 4 shared + 4 old + 4 new partial blocks.
        QVERIFY2(r->peakBlocksUsed <= 4 + 2 * 4, qPrintable(QString::number(r->peakBlocksUsed)));
        QVERIFY(r->peakBlocksUsed < 4 * r->blocksPerBeam);
        QCOMPARE(r->nForwardTokens, 70 + 4 * 5);  // the prompt once, then one token per beam per step
        QCOMPARE(cache_->pool().nUsed(), 0);
    }

    // Every step's live beams go through one forwardBatch; the result is the same as through
    // the model directly.
    void oneForwardBatchPerStep() {
        CountingModel counting(*model_);
        const Tokens prompt{1, 5, 3, 7, 4};
        auto r = runBeamSearch(counting, *backend_, *cache_, prompt, bp(4, 6, 0.0f, {}));
        QVERIFY(r);
        // The prompt, then 4 beams at each of steps 1..5 (step 6 only finishes hypotheses).
        QCOMPARE(counting.itemsPerCall, (std::vector<int>{1, 4, 4, 4, 4, 4}));
        QCOMPARE(r->nForwardPasses, 6);
        auto direct = runBeamSearch(*model_, *backend_, *cache_, prompt, bp(4, 6, 0.0f, {}));
        QVERIFY(direct);
        QCOMPARE(direct->hypotheses.front().tokens, r->hypotheses.front().tokens);
        QCOMPARE(direct->hypotheses.front().logProb, r->hypotheses.front().logProb);
        QCOMPARE(cache_->pool().nUsed(), 0);
    }

    // Banning the optimum's first token (and a presence penalty) changes the result exactly as
    // the exhaustive search with the same bias says.
    void logitBiasAndPenaltyMatchExhaustive() {
        Exhaustive ex(*model_, *backend_, *cache_);
        const Tokens prompt{1, 5, 3, 7, 4};
        const int depth = 3;
        Best plain;
        Tokens prefix;
        ex.search(prompt, prefix, 0.0, depth, 0.0f, plain);
        for (float presence : {0.0f, 1.5f}) {
            ex.bias = {{plain.tokens.front(), -INFINITY}, {6, 2.0f}};
            ex.presence = presence;
            Best best;
            ex.search(prompt, prefix, 0.0, depth, 0.0f, best);
            QVERIFY(best.tokens.front() != plain.tokens.front());
            BeamSearchParams p = bp(kVocab * kVocab, depth, 0.0f, {kEnd});
            p.logitBias = ex.bias;
            p.presencePenalty = presence;
            p.repeatLastN = -1;
            auto r = runBeamSearch(*model_, *backend_, *cache_, prompt, p);
            QVERIFY(r);
            QCOMPARE(r->hypotheses.front().tokens, best.tokens);
            QVERIFY(std::abs(r->hypotheses.front().logProb - best.logProb) < 1e-9);
        }
    }

    // A stop string (here across a token boundary) ends a hypothesis: reason Stop, its text cut
    // before the stop string, its tokens up to the one that completed it.
    void stopStringEndsHypothesis() {
        const Tokens prompt{1, 6, 6, 3};
        BeamSearchParams p = bp(1, 6, 0.0f, {});
        p.decode = letters;
        auto greedy = runBeamSearch(*model_, *backend_, *cache_, prompt, p);
        QVERIFY(greedy);
        const Tokens g = greedy->hypotheses.front().tokens;
        QCOMPARE(greedy->hypotheses.front().end, BeamEnd::Length);
        QCOMPARE(greedy->hypotheses.front().text, letters(g));
        const std::string stop = letters(g).substr(2, 2);
        size_t n = 1;  // the first prefix of the greedy tokens whose text contains the stop string
        while (letters(std::span(g).first(n)).find(stop) == std::string::npos) ++n;
        p.stop = {"zz", stop};
        auto r = runBeamSearch(*model_, *backend_, *cache_, prompt, p);
        QVERIFY(r);
        const BeamHypothesis& best = r->hypotheses.front();
        QCOMPARE(best.end, BeamEnd::Stop);
        QCOMPARE(best.tokens, Tokens(g.begin(), g.begin() + static_cast<std::ptrdiff_t>(n)));
        QCOMPARE(best.text, letters(g).substr(0, letters(g).find(stop)));
        QCOMPARE(std::string(beamEndName(best.end)), std::string("stop"));
        QCOMPARE(cache_->pool().nUsed(), 0);
    }

    // A 1 ms limit on a long search returns the best hypotheses so far, reason Timeout.
    void timeoutReturnsBestSoFar() {
        BeamSearchParams p = bp(16, 200, 0.0f, {});
        p.timeoutMs = 1;
        auto r = runBeamSearch(*model_, *backend_, *cache_, Tokens{1, 2, 3}, p);
        QVERIFY(r);
        QVERIFY(!r->hypotheses.empty());
        for (const BeamHypothesis& h : r->hypotheses) {
            QCOMPARE(h.end, BeamEnd::Timeout);
            QVERIFY(!h.tokens.empty() && h.tokens.size() < 200);
        }
        QCOMPARE(cache_->pool().nUsed(), 0);
    }

    void badParametersAreErrors() {
        const Tokens prompt{1, 2};
        QVERIFY(!runBeamSearch(*model_, *backend_, *cache_, prompt, bp(0, 4, 0.0f, {})));
        QVERIFY(!runBeamSearch(*model_, *backend_, *cache_, prompt, bp(2, 0, 0.0f, {})));
        QVERIFY(!runBeamSearch(*model_, *backend_, *cache_, Tokens{}, bp(2, 4, 0.0f, {})));
        auto small = KvCache::create(model_->kvLayout(16), 32);  // 2 blocks: 4 beams cannot fit
        QVERIFY(small);
        auto r = runBeamSearch(*model_, *backend_, **small, Tokens(20, 3), bp(4, 4, 0.0f, {}));
        QVERIFY(!r);
        QCOMPARE(r.error().code, ErrorCode::OutOfMemory);
        QCOMPARE((*small)->pool().nUsed(), 0);
    }

    // Through the engine: end tokens from the vocabulary; 1 beam equals greedy generation.
    void engineBeamSearch() {
        const std::string path = dir_.filePath("tiny.gguf").toStdString();
        QVERIFY(test::tinyLlama().writeFile(path));
        auto engine = Engine::load(path, {});
        QVERIFY(engine);
        Engine& e = **engine;
        const std::vector<TokenId> prompt{1, 40, 50, 60, 70};
        GenerateRequest req;
        req.prompt = prompt;
        req.maxTokens = 12;
        req.sampling.temperature = 0;
        auto greedy = e.generate(req, [](TokenId, std::string_view) { return true; });
        QVERIFY(greedy);
        const int32_t usedBefore = e.metrics().blocksUsed;  // the finished request's parked blocks
        auto one = e.beamSearch(prompt, bp(1, 12, 0.0f, {}));
        QVERIFY(one);
        QCOMPARE(one->hypotheses.front().tokens, greedy->tokens);
        auto four = e.beamSearch(prompt, bp(4, 12, 1.0f, {}));
        QVERIFY(four);
        for (const BeamHypothesis& h : four->hypotheses) {
            QVERIFY(!h.tokens.empty() && h.tokens.size() <= 12);
            QCOMPARE(h.ended, e.tokenizer().isEndOfGeneration(h.tokens.back()));
            QCOMPARE(h.score, h.logProb / double(h.tokens.size()));
        }
        QCOMPARE(e.metrics().blocksUsed, usedBefore);
        QVERIFY(!e.beamSearch({}, bp(4, 12, 0.0f, {})));
        // A stop string from the greedy text (bytes 1..2): the tokenizer's text, cut before it.
        const std::string greedyText = e.tokenizer().decode(one->hypotheses.front().tokens);
        QVERIFY(greedyText.size() >= 3);
        BeamSearchParams withStop = bp(1, 12, 0.0f, {});
        withStop.stop = {greedyText.substr(1, 2)};
        auto stopped = e.beamSearch(prompt, withStop);
        QVERIFY(stopped);
        const BeamHypothesis& s = stopped->hypotheses.front();
        QCOMPARE(s.end, BeamEnd::Stop);
        QCOMPARE(s.text, greedyText.substr(0, greedyText.find(withStop.stop[0])));
        QVERIFY(e.tokenizer().decode(s.tokens).find(withStop.stop[0]) != std::string::npos);
        BeamSearchParams badBias = bp(2, 4, 0.0f, {});
        badBias.logitBias = {{e.tokenizer().nVocab(), 1.0f}};
        QVERIFY(!e.beamSearch(prompt, badBias));
    }

    // maxTokens beyond the context: hypotheses cut there end with reason Context.
    void engineContextLimit() {
        const std::string path = dir_.filePath("tiny.gguf").toStdString();
        QVERIFY(test::tinyLlama().writeFile(path));
        EngineOptions options;
        options.contextLength = 64;
        auto engine = Engine::load(path, options);
        QVERIFY(engine);
        Engine& e = **engine;
        std::vector<TokenId> prompt{1};
        for (int i = 0; i < 59; ++i) prompt.push_back(40 + i % 7);
        BeamSearchParams p = bp(1, 32, 0.0f, {});
        for (TokenId id = 0; id < e.tokenizer().nVocab(); ++id)  // no end token: run to the limit
            if (e.tokenizer().isEndOfGeneration(id)) p.logitBias.push_back({id, -INFINITY});
        auto r = e.beamSearch(prompt, p);
        QVERIFY2(r, r ? "" : r.error().message.c_str());
        QCOMPARE(r->hypotheses.front().end, BeamEnd::Context);
        QCOMPARE(r->hypotheses.front().tokens.size(), size_t{4});
        // 2 beams from a 40-token prompt: the 4-block cache (the context's memory) holds 2 full
        // shared blocks and each beam's third, not a fourth each; the beams end with reason Context.
        prompt.resize(40);
        p.nBeams = 2;
        auto wide = e.beamSearch(prompt, p);
        QVERIFY2(wide, wide ? "" : wide.error().message.c_str());
        for (const BeamHypothesis& h : wide->hypotheses) {
            QCOMPARE(h.end, BeamEnd::Context);
            QCOMPARE(h.tokens.size(), size_t{8});  // positions 40..47: the third block is full
        }
        QCOMPARE(e.metrics().blocksUsed, 0);
    }

private:
    QTemporaryDir dir_;
    std::string path_;
    std::unique_ptr<GgufFile> file_;
    std::unique_ptr<Model> model_;
    std::unique_ptr<Backend> backend_;
    std::unique_ptr<KvCache> cache_;
};

QTEST_GUILESS_MAIN(TestBeamSearch)
#include "test_beam_search.moc"
