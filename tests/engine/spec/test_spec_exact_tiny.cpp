// Exactness of speculative decoding on small models (label tiny, so ASan+UBSan run the
// rollback paths): stories260K with the n-gram drafter, and a tiny random Llama drafted by
// another tiny random Llama with the same vocabulary (different weights: many rejections).
// Also the n-gram lookup itself and the refusal of a draft model with another vocabulary.
#include <QTemporaryDir>
#include <QtTest>

#include <cstring>

#include "engine/engine.h"
#include "engine/model/gguf.h"
#include "engine/spec/ngram_drafter.h"
#include "tests/engine/spec/spec_exactness.h"
#include "tests/support/test_env.h"
#include "tests/support/tiny_llama.h"

using namespace hearth;

namespace {

std::vector<std::vector<TokenId>> rawPrompts(const Engine& e) {
    const char* texts[] = {"Once upon a time",
                           "The cat sat on the mat. The cat sat on the",
                           "Lily and Tom went to the park. Lily and Tom",
                           "One day, a little bird",
                           "the cat the cat the cat",
                           "She was happy. She was",
                           "a cat at the",
                           "Tom had a big red ball",
                           "The sun was hot. The dog was",
                           "Once upon a time, there was a"};
    std::vector<std::vector<TokenId>> out;
    for (const char* t : texts) out.push_back(e.rawPrompt(t));
    return out;
}

}  // namespace

class TestSpecExactTiny : public QObject {
    Q_OBJECT
private slots:
    void ngramLookup() {
        NGramDrafter d(2, 3);
        const std::vector<int32_t> ctx{5, 6, 7, 8, 9, 1, 6, 7};  // suffix 6 7 seen at 1..2
        QCOMPARE(d.lookup(ctx, 3), (std::vector<int32_t>{8, 9, 1}));
        QCOMPARE(d.lookup(ctx, 1), (std::vector<int32_t>{8}));
        const std::vector<int32_t> none{1, 2, 3, 4};
        QVERIFY(d.lookup(none, 4).empty());
        // The longest suffix wins over a more recent shorter one: 2 3 4 -> 9, not 3 4 -> 7.
        const std::vector<int32_t> longest{2, 3, 4, 9, 3, 4, 7, 2, 3, 4};
        QCOMPARE(d.lookup(longest, 1), (std::vector<int32_t>{9}));
    }

    // Model::forward's rows for the last k tokens are bitwise the logits of decoding each token
    // alone (what makes greedy speculation exact); a buffer of a wrong size is refused.
    void multiRowLogitsMatchDecode() {
        QTemporaryDir dir;
        const QString path = dir.filePath("q8.gguf");
        test::TinyLlamaShape shape;
        shape.weightType = DType::Q8_0;
        QVERIFY(test::tinyLlama(shape).writeFile(path.toStdString()));
        auto file = GgufFile::open(path.toStdString());
        QVERIFY(file.has_value());
        auto model = Model::load(**file);
        QVERIFY(model.has_value());
        auto backend = makeBestCpuBackend(1);
        auto cache = KvCache::create((*model)->kvLayout(), 64);
        QVERIFY(cache.has_value());
        const size_t nVocab = static_cast<size_t>((*model)->config().nVocab);
        const std::vector<int32_t> tokens{1, 40, 41, 42, 260, 261, 43, 44, 45};
        std::vector<float> decoded(tokens.size() * nVocab), rows(5 * nVocab);
        KvSequence a, b;
        for (size_t i = 0; i < tokens.size(); ++i)
            QVERIFY((*model)->forward(*backend, **cache, a, std::span(&tokens[i], 1),
                                      std::span(decoded).subspan(i * nVocab, nVocab)));
        QVERIFY((*model)->forward(*backend, **cache, b, std::span(tokens).first(4), {}));
        QVERIFY((*model)->forward(*backend, **cache, b, std::span(tokens).subspan(4), rows));
        QVERIFY(std::memcmp(rows.data(), decoded.data() + 4 * nVocab, rows.size() * sizeof(float)) == 0);
        std::vector<float> odd(nVocab + 1);
        KvSequence c;
        QVERIFY(!(*model)->forward(*backend, **cache, c, std::span(tokens).first(2), odd));
        std::vector<float> tooMany(3 * nVocab);
        QVERIFY(!(*model)->forward(*backend, **cache, c, std::span(tokens).first(2), tooMany));
        for (KvSequence* s : {&a, &b, &c}) (*cache)->release(*s);
    }

    void stories260KNgram() {
        const QString path = test::testDataFile("stories260K.gguf");
        HEARTH_REQUIRE_FILE(path);
        auto e = Engine::load(path.toStdString(), {});
        QVERIFY(e.has_value());
        const SpecOptions ngram = alwaysOn(specNGram(5));
        SpecOptions tree = alwaysOn(specNGramTree(5, 12));
        tree.ngramMin = 1;  // more matches, more branches
        const test::ExactnessTally t = test::checkExactness(**e, rawPrompts(**e), {ngram, tree}, 48, "stories260K");
        QCOMPARE(t.mismatches, 0);
        QCOMPARE(t.withDrafts, t.prompts);
        QVERIFY(t.withRejections * 2 > t.prompts);
        QVERIFY(t.withTrees * 4 > t.prompts);  // the tree runs (half of them) branch
    }

    void tinyRandomDraftModel() {
        QTemporaryDir dir;
        const QString target = dir.filePath("target.gguf"), draft = dir.filePath("draft.gguf");
        test::TinyLlamaShape shape;
        QVERIFY(test::tinyLlama(shape).writeFile(target.toStdString()));
        shape.seed = 2;
        shape.nLayers = 1;
        QVERIFY(test::tinyLlama(shape).writeFile(draft.toStdString()));
        auto e = Engine::load(target.toStdString(), {});
        QVERIFY(e.has_value());
        const SpecOptions spec = alwaysOn(specDraftModel(draft.toStdString()));
        // The same model as its own draft: every drafted token is kept (batch invariance).
        const SpecOptions self = alwaysOn(specDraftModel(target.toStdString()));
        // The draft model branching at its runner-up where its probability is split.
        SpecOptions branching = spec;
        branching.tree = true;
        branching.maxTreeNodes = 12;
        const test::ExactnessTally t =
            test::checkExactness(**e, rawPrompts(**e), {spec, self, branching}, 40, "tiny-random");
        QCOMPARE(t.mismatches, 0);
        QCOMPARE(t.withDrafts, t.prompts);
        QVERIFY(t.withRejections * 4 > t.prompts);  // the other model's drafts (two thirds of the runs) get rejected
        QVERIFY(t.withTrees > 0);
    }

    void otherVocabularyRefused() {
        const QString target = test::testDataFile("stories260K.gguf"),
                      other = test::testDataFile("llama-2-tiny-random.gguf");
        HEARTH_REQUIRE_FILE(target);
        HEARTH_REQUIRE_FILE(other);
        auto e = Engine::load(target.toStdString(), {});
        QVERIFY(e.has_value());
        GenerateRequest req;
        req.prompt = (*e)->rawPrompt("Once");
        req.maxTokens = 4;
        req.spec = specDraftModel(other.toStdString());
        auto r = (*e)->generate(req, [](TokenId, std::string_view) { return true; });
        QVERIFY(!r.has_value());
        std::printf("refused: %s\n", r.error().message.c_str());
        QVERIFY(r.error().message.find("vocabulary") != std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestSpecExactTiny)
#include "test_spec_exact_tiny.moc"
