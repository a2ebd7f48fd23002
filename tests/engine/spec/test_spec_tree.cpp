// Tree speculation's pieces (engine/spec DraftTree, ForwardItem::parents, engine/kv kv_rows):
// the tree type and its merge of candidates, the n-gram drafter's ranked continuations, and
// tree verification's forward pass — every node's logits bitwise those of decoding its path one
// token at a time, on the reference backend and the best CPU one (AVX2, or its AVX-512 build;
// the cpu-levels stage reruns it capped), with one thread and two, over F16 K in both orders and
// Q8_0, short prefixes and ones past the first 256-position attention piece, a Llama and a
// Gemma 3 with a sliding window; then the accepted path moved into place (keepKvPath) decodes
// on exactly as the linear path would. Also the greedy tree verifier's choices, and the fallback
// to chains on a backend that is not a CPU one.
#include <QTemporaryDir>
#include <QtTest>

#include <cstring>
#include <random>

#include "engine/engine_requests.h"
#include "engine/kv/kv_cache.h"
#include "engine/kv/kv_rows.h"
#include "engine/model/gguf.h"
#include "engine/model/model.h"
#include "engine/model/synth.h"
#include "engine/spec/ngram_drafter.h"
#include "engine/spec/verifier.h"
#include "engine/tokenizer/tokenizer.h"
#include "tests/support/test_env.h"
#include "tests/support/tiny_llama.h"

using namespace hearth;

namespace {

// A random tree of n nodes at most maxDepth deep, siblings distinct, tokens in [lo, hi).
DraftTree randomTree(std::mt19937& rng, int n, int maxDepth, int lo, int hi) {
    DraftTree t;
    std::uniform_int_distribution<int> token(lo, hi - 1);
    while (std::ssize(t.tokens) < n) {
        const int i = static_cast<int>(t.tokens.size());
        const int parent = std::uniform_int_distribution<int>(-1, i - 1)(rng);
        const int depth = parent < 0 ? 1 : t.depth(static_cast<size_t>(parent)) + 1;
        const int tok = token(rng);
        if (depth > maxDepth || t.child(parent, tok) >= 0) continue;
        t.tokens.push_back(tok);
        t.parents.push_back(parent);
    }
    return t;
}

struct Loaded {
    std::unique_ptr<GgufFile> file;
    std::unique_ptr<Model> model;
};

Loaded load(const QString& path) {
    Loaded l;
    auto f = GgufFile::open(path.toStdString());
    if (!f) return l;
    l.file = std::move(*f);
    auto m = Model::load(*l.file);
    if (m) l.model = std::move(*m);
    return l;
}

// Forwards the tree after prefix on backend b over layout; compares each node's row with a
// linear decode of its path; then keeps a random deepest path in place and decodes one more
// token after it. Returns the number of rows compared (0 on a failure already reported).
int checkTree(Model& m, Backend& b, const KvLayout& layout, int prefixLen, std::mt19937& rng, const char* what) {
    const int nVocab = m.config().nVocab;
    const auto nV = static_cast<size_t>(nVocab);
    auto cache = KvCache::create(layout, 2048);
    if (!cache) {
        QTest::qFail(cache.error().message.c_str(), __FILE__, __LINE__);
        return 0;
    }
    KvCache& c = **cache;
    std::uniform_int_distribution<int> token(3, nVocab - 1);
    std::vector<int32_t> prefix(static_cast<size_t>(prefixLen));
    for (int32_t& t : prefix) t = token(rng);
    KvSequence base;
    if (!m.forward(b, c, base, prefix, {})) return 0;
    const DraftTree tree = randomTree(rng, 14, 6, 3, nVocab);
    const int32_t last = token(rng);
    std::vector<int32_t> tokens{last}, parents{-1};
    for (size_t i = 0; i < tree.size(); ++i) {
        tokens.push_back(tree.tokens[i]);
        parents.push_back(tree.parents[i] < 0 ? 0 : tree.parents[i] + 1);
    }
    KvSequence ts = c.fork(base);
    if (!c.reserve(ts, base.nTokens + static_cast<int32_t>(tokens.size()))) return 0;
    std::vector<float> rows(tokens.size() * nV);
    const ForwardItem item{&ts, tokens, rows, 0, parents};
    if (auto r = m.forwardBatch(b, c, std::span(&item, 1)); !r) {
        QTest::qFail(r.error().message.c_str(), __FILE__, __LINE__);
        return 0;
    }
    ts.nTokens += static_cast<int32_t>(tokens.size());
    int compared = 0;
    std::vector<float> one(nV);
    for (int node = -1; node < static_cast<int>(tree.size()); ++node) {
        std::vector<int32_t> path{last};
        for (int32_t k : node < 0 ? std::vector<int32_t>() : tree.pathTo(node))
            path.push_back(tree.tokens[static_cast<size_t>(k)]);
        KvSequence s = c.fork(base);
        if (!m.forward(b, c, s, path, one)) return 0;
        c.release(s);
        if (std::memcmp(one.data(), rows.data() + static_cast<size_t>(node + 1) * nV, nV * sizeof(float)) != 0) {
            QTest::qFail(QByteArray(what) + ": node " + QByteArray::number(node) + " differs from its path decoded",
                         __FILE__, __LINE__);
            return 0;
        }
        ++compared;
    }
    // Keep the deepest node's path, then decode one more token on it and on the linear path.
    int deepest = 0;
    for (size_t i = 0; i < tree.size(); ++i)
        if (tree.depth(i) > tree.depth(static_cast<size_t>(deepest))) deepest = static_cast<int>(i);
    const std::vector<int32_t> nodes = tree.pathTo(deepest);
    keepKvPath(c, ts, base.nTokens + 1, nodes);
    c.rollback(ts, base.nTokens + 1 + static_cast<int32_t>(nodes.size()));
    const int32_t next = token(rng);
    std::vector<float> kept(nV), linear(nV);
    if (!m.forward(b, c, ts, std::span(&next, 1), kept)) return 0;
    std::vector<int32_t> path{last};
    for (int32_t k : nodes) path.push_back(tree.tokens[static_cast<size_t>(k)]);
    path.push_back(next);
    KvSequence s = c.fork(base);
    if (!m.forward(b, c, s, path, linear)) return 0;
    if (std::memcmp(kept.data(), linear.data(), nV * sizeof(float)) != 0) {
        QTest::qFail(QByteArray(what) + ": the kept path decodes on differently", __FILE__, __LINE__);
        return 0;
    }
    c.release(s);
    c.release(ts);
    c.release(base);
    return compared + 1;
}

// A CPU backend under another name: what the engine sees of a backend that is not a CPU one
// (the CUDA plugin), for the fallback to chains.
class RenamedBackend final : public Backend {
public:
    explicit RenamedBackend(std::unique_ptr<Backend> b) : b_(std::move(b)) {}
    std::string name() const override { return "CUDA (test: a CPU backend renamed)"; }
    void matmul(const WeightView& w, const float* x, int64_t n, float* y) override { b_->matmul(w, x, n, y); }
    void embeddingRows(const WeightView& t, const int32_t* ids, int64_t n, float* out) override {
        b_->embeddingRows(t, ids, n, out);
    }
    void rmsNorm(const float* x, const float* w, int64_t nRows, int64_t n, float eps, float* y) override {
        b_->rmsNorm(x, w, nRows, n, eps, y);
    }
    void rope(float* x, int64_t nTokens, int nHeads, int headDim, int nRot, const int32_t* positions, float freqBase,
              RopeStyle style, const float* freqFactors) override {
        b_->rope(x, nTokens, nHeads, headDim, nRot, positions, freqBase, style, freqFactors);
    }
    void kvWrite(const PagedKvLayer& layer, const float* k, const float* v, const int32_t* positions,
                 int64_t nTokens) override {
        b_->kvWrite(layer, k, v, positions, nTokens);
    }
    void attention(const PagedKvLayer& layer, const AttentionShape& shape, const float* q, const int32_t* positions,
                   int64_t nTokens, float* out) override {
        b_->attention(layer, shape, q, positions, nTokens, out);
    }
    void swiglu(const float* gate, const float* up, int64_t n, float* out) override { b_->swiglu(gate, up, n, out); }
    void geglu(const float* gate, const float* up, int64_t n, float* out) override { b_->geglu(gate, up, n, out); }
    void add(float* x, const float* y, int64_t n) override { b_->add(x, y, n); }

private:
    std::unique_ptr<Backend> b_;
};

// Greedy tokens of a repetitive prompt through EngineRequests, and the run's counters.
std::vector<int32_t> generate(Model& m, Backend& b, const Tokenizer& vocab, std::span<const int32_t> prompt,
                              const SpecOptions& spec, SpecStats& stats) {
    auto cache = KvCache::create(m.kvLayout(), 512);
    if (!cache) return {};
    EngineRequests requests(m, b, **cache, vocab, 512, {});
    GenerateRequest req;
    req.prompt.assign(prompt.begin(), prompt.end());
    req.maxTokens = 40;
    req.sampling.temperature = 0.0f;
    req.spec = spec;
    if (!requests.submit(std::move(req))) return {};
    std::vector<int32_t> got;
    while (!requests.idle())
        for (const EngineEvent& e : requests.step()) {
            if (e.kind == EngineEvent::Kind::Token) got.push_back(e.token);
            if (e.kind == EngineEvent::Kind::Finish) stats = e.spec;
        }
    return got;
}

}  // namespace

class TestSpecTree : public QObject {
    Q_OBJECT
private slots:
    void mergeSharesPrefixes() {
        const std::vector<DraftCandidate> c{{{1, 2, 3, 4}, 5.0}, {{1, 2, 7}, 3.0}, {{9, 8}, 4.0}, {{1, 5}, 1.0}};
        const DraftTree t = DraftTree::merge(c, 32, 8);
        QVERIFY(t.valid());
        QVERIFY(!t.isChain());
        // Best first: 1 2 3 4, then 9 8, then 7 under 1 2, then 5 under 1.
        QCOMPARE(t.tokens, (std::vector<int32_t>{1, 2, 3, 4, 9, 8, 7, 5}));
        QCOMPARE(t.parents, (std::vector<int32_t>{-1, 0, 1, 2, -1, 4, 1, 0}));
        QCOMPARE(t.score, (std::vector<double>{9.0, 8.0, 5.0, 5.0, 4.0, 4.0, 3.0, 1.0}));
        QCOMPARE(t.maxDepth(), 4);
        QCOMPARE(t.depth(6), 3);
        QCOMPARE(t.pathTo(6), (std::vector<int32_t>{0, 1, 6}));
        QCOMPARE(t.firstPath().tokens, (std::vector<int32_t>{1, 2, 3, 4}));
        // Bounds: 5 nodes, depth 2.
        const DraftTree small = DraftTree::merge(c, 5, 2);
        QCOMPARE(small.tokens, (std::vector<int32_t>{1, 2, 9, 8, 5}));
        QCOMPARE(small.parents, (std::vector<int32_t>{-1, 0, -1, 2, 0}));
        // A chain round-trips; a bad parent or twin siblings are not a tree.
        Draft d;
        d.tokens = {4, 5, 6};
        QVERIFY(DraftTree::fromChain(d).isChain());
        QCOMPARE(DraftTree::fromChain(d).firstPath().tokens, d.tokens);
        DraftTree bad = t;
        bad.parents[2] = 5;
        QVERIFY(!bad.valid());
        bad = t;
        bad.tokens[4] = 1;  // a second root child "1"
        QVERIFY(!bad.valid());
    }

    void ngramCandidates() {
        NGramDrafter d(1, 3);
        // "5 6" is followed by 7 twice and by 9 once (most recent): 7 ranks first by count.
        const std::vector<int32_t> ctx{5, 6, 7, 1, 5, 6, 7, 2, 5, 6, 9, 3, 5, 6};
        const std::vector<DraftCandidate> c = d.candidates(ctx, 3, 16);
        QVERIFY(c.size() >= 3);
        const SpecSampler sampler(SamplingParams{});
        auto t = d.proposeTree(ctx, 8, 3, sampler);
        QVERIFY(t.has_value());
        QVERIFY(t->valid());
        QCOMPARE(t->tokens[0], 7);  // two occurrences continue with 7
        QVERIFY(t->child(-1, 9) >= 0);  // and the most recent continuation is a branch
        QVERIFY(std::ssize(t->tokens) <= 8 && t->maxDepth() <= 3);
        // The linear lookup still gives the most recent continuation.
        QCOMPARE(d.lookup(ctx, 2), (std::vector<int32_t>{9, 3}));
    }

    // Greedy: the longest path of argmax tokens, then the argmax at its end (with the row it
    // came from); a leaf reached is a bonus.
    void greedyTreeVerify() {
        const int32_t nVocab = 8;
        DraftTree t;
        t.tokens = {1, 2, 3, 4};
        t.parents = {-1, -1, 1, 1};  // 1 | 2 -> {3, 4}
        std::vector<float> rows(5 * nVocab, 0.0f);
        const auto argmax = [&](int row, int token) { rows[static_cast<size_t>(row * nVocab + token)] = 5.0f; };
        argmax(0, 2);  // root picks 2 (node 1)
        argmax(2, 4);  // node 1's row picks 4 (node 3)
        argmax(4, 6);  // node 3 is a leaf: bonus 6
        argmax(1, 5), argmax(3, 5);
        SpecSampler s(SamplingParams{});
        VerifyOutcome o = verifyTree({rows, nVocab}, t, s);
        QCOMPARE(o.tokens, (std::vector<int32_t>{2, 4, 6}));
        QCOMPARE(o.nodes, (std::vector<int32_t>{1, 3}));
        QCOMPARE(o.rows, (std::vector<int32_t>{0, 2, 4}));
        QCOMPARE(o.nAccepted, 2);
        QVERIFY(o.bonus);
        rows[static_cast<size_t>(2 * nVocab + 4)] = 0.0f;
        argmax(2, 7);  // node 1's row picks 7: no such child, a correction
        SpecSampler s2(SamplingParams{});
        o = verifyTree({rows, nVocab}, t, s2);
        QCOMPARE(o.tokens, (std::vector<int32_t>{2, 7}));
        QVERIFY(!o.bonus);
    }

    // Trees on a CPU backend; on another backend (a renamed CPU one here) the same options draft
    // chains only; greedy output is plain decoding's either way.
    void nonCpuBackendFallsBackToChains() {
        const QString path = test::testDataFile("stories260K.gguf");
        HEARTH_REQUIRE_FILE(path);
        Loaded l = load(path);
        QVERIFY(l.model);
        auto vocab = Tokenizer::fromGguf(*l.file);
        QVERIFY(vocab.has_value());
        const std::vector<int32_t> prompt =
            (*vocab)->encode("The cat sat on the mat. The cat ran to the park. The dog sat on the", true, false);
        auto cpu = makeBestCpuBackend(1);
        RenamedBackend renamed(makeBestCpuBackend(1));
        SpecOptions tree = alwaysOn(specNGramTree(4, 12));
        tree.ngramMin = 1;
        SpecStats plainStats, cpuStats, renamedStats;
        const std::vector<int32_t> plain = generate(*l.model, *cpu, **vocab, prompt, SpecOptions{}, plainStats);
        QCOMPARE(plain.size(), size_t{40});
        QCOMPARE(generate(*l.model, *cpu, **vocab, prompt, tree, cpuStats), plain);
        QCOMPARE(generate(*l.model, renamed, **vocab, prompt, tree, renamedStats), plain);
        std::printf("cpu: %d tree steps of %d; renamed: %d tree steps of %d, %d drafted\n", cpuStats.treeSteps,
                    cpuStats.targetForwards, renamedStats.treeSteps, renamedStats.targetForwards, renamedStats.drafted);
        QVERIFY(cpuStats.treeSteps > 0);
        QCOMPARE(renamedStats.treeSteps, 0);
        QVERIFY(renamedStats.drafted > 0);
    }

    void treeForwardMatchesPaths_data() {
        QTest::addColumn<QString>("arch");
        QTest::newRow("llama") << "llama";
        QTest::newRow("gemma3-window") << "gemma3";
    }
    void treeForwardMatchesPaths() {
        QFETCH(QString, arch);
        QTemporaryDir dir;
        const QString path = dir.filePath("m.gguf");
        if (arch == "llama") {
            test::TinyLlamaShape shape;
            shape.weightType = DType::Q8_0;
            shape.context = 1024;
            QVERIFY(test::tinyLlama(shape).writeFile(path.toStdString()));
        } else {
            auto shape = findSynthShape("tiny-gemma3");
            QVERIFY(shape.has_value());
            shape->nLayers = 3;
            SynthOptions o;
            o.type = DType::Q8_0;
            QVERIFY(writeSynthModel(*shape, o, path.toStdString()).has_value());
        }
        Loaded l = load(path);
        QVERIFY(l.model);
        std::vector<std::pair<const char*, std::unique_ptr<Backend>>> backends;
        backends.emplace_back("reference", makeCpuReferenceBackend());
        backends.emplace_back("best-1", makeBestCpuBackend(1));
        backends.emplace_back("best-2", makeBestCpuBackend(2));
        std::mt19937 rng(7);
        int compared = 0;
        for (auto& [name, b] : backends)
            for (int kind = 0; kind < 3; ++kind)
                for (int prefix : {21, 300}) {
                    KvLayout layout = l.model->kvLayout();
                    layout.elementType = kind == 2 ? KvElementType::Q8_0 : KvElementType::F16;
                    layout.kDimMajor = kind == 1;
                    layout.vHeadDim = kind == 1 ? l.model->config().headDim : 0;
                    const QByteArray what =
                        QByteArray(name) + " kv " + QByteArray::number(kind) + " prefix " + QByteArray::number(prefix);
                    const int n = checkTree(*l.model, *b, layout, prefix, rng, what.constData());
                    QVERIFY2(n > 0, what.constData());
                    compared += n;
                }
        std::printf("%s: %d tree rows bitwise equal to their paths decoded linearly\n", qPrintable(arch), compared);
    }
};

QTEST_GUILESS_MAIN(TestSpecTree)
#include "test_spec_tree.moc"
