// Beam search: the selection step on fixed log-probabilities; on a tiny random Llama with a
// vocabulary of 8 tokens (one of them the end token), the result against an exhaustive search
// of the same depth whose log-probabilities come from a fresh forward of each whole sequence
// (no forked KV); prefix blocks shared by the beams; and Engine::beamSearch on the tiny Llama.
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <limits>
#include <random>

#include "engine/engine.h"
#include "engine/model/gguf.h"
#include "engine/runner/beam_runner.h"
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
    w.addTensor("token_embd.weight", {nEmbd, kVocab}, DType::F32, test::tinyTensorBytes(DType::F32, nEmbd, kVocab, rng, 1.0f));
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

private:
    Model& model_;
    Backend& backend_;
    KvCache& cache_;
};

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
                auto r = runBeamSearch(*model_, *backend_, *cache_, prompt, {width, depth, alpha, {kEnd}});
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
            auto r = runBeamSearch(*model_, *backend_, *cache_, prompt, {width, 4, 0.0f, {kEnd}});
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
        auto r = runBeamSearch(*model_, *backend_, *cache_, prompt, {4, 6, 0.0f, {}});
        QVERIFY(r);
        QCOMPARE(r->blocksPerBeam, 5);
        // Old and new beams side by side at a step: 4 shared + 4 old + 4 new partial blocks.
        QVERIFY2(r->peakBlocksUsed <= 4 + 2 * 4, qPrintable(QString::number(r->peakBlocksUsed)));
        QVERIFY(r->peakBlocksUsed < 4 * r->blocksPerBeam);
        QCOMPARE(r->nForwardTokens, 70 + 4 * 5);  // the prompt once, then one token per beam per step
        QCOMPARE(cache_->pool().nUsed(), 0);
    }

    void badParametersAreErrors() {
        const Tokens prompt{1, 2};
        QVERIFY(!runBeamSearch(*model_, *backend_, *cache_, prompt, {0, 4, 0.0f, {}}));
        QVERIFY(!runBeamSearch(*model_, *backend_, *cache_, prompt, {2, 0, 0.0f, {}}));
        QVERIFY(!runBeamSearch(*model_, *backend_, *cache_, Tokens{}, {2, 4, 0.0f, {}}));
        auto small = KvCache::create(model_->kvLayout(16), 32);  // 2 blocks: 4 beams cannot fit
        QVERIFY(small);
        auto r = runBeamSearch(*model_, *backend_, **small, Tokens(20, 3), {4, 4, 0.0f, {}});
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
        auto one = e.beamSearch(prompt, {1, 12, 0.0f, {}});
        QVERIFY(one);
        QCOMPARE(one->hypotheses.front().tokens, greedy->tokens);
        auto four = e.beamSearch(prompt, {4, 12, 1.0f, {}});
        QVERIFY(four);
        for (const BeamHypothesis& h : four->hypotheses) {
            QVERIFY(!h.tokens.empty() && h.tokens.size() <= 12);
            QCOMPARE(h.ended, e.tokenizer().isEndOfGeneration(h.tokens.back()));
            QCOMPARE(h.score, h.logProb / double(h.tokens.size()));
        }
        QCOMPARE(e.metrics().blocksUsed, usedBefore);
        QVERIFY(!e.beamSearch({}, {4, 12, 0.0f, {}}));
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
