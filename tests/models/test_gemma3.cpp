// Gemma 3 270M (Q4_K_M) against an independent float64 numpy forward pass over the same GGUF
// weights (tests/models/numpy_reference.py): configuration from metadata, last-position logits
// of a chat prompt, a 64-token text and a text longer than the 512-token window, a tiny F32
// Gemma 3 where the two must agree closely, and a greedy chat reply.
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <cstring>

#include "engine/engine.h"
#include "engine/model/gguf.h"
#include "tests/support/test_env.h"
#include "tests/support/tiny_gemma3.h"

using namespace hearth;
using namespace hearth::test;

namespace {

// Longer than the 512-token window once tokenized (523 tokens with BOS), so that the last
// position's local layers no longer see the first positions (BOS among them).
const char* const kLongText =
    "The hearth was once the centre of every home. Before central heating, before electric light, the fire in "
    "the kitchen was where food was cooked, where water was boiled for washing, and where the family gathered in "
    "the long winter evenings. Children did their lessons by its glow; grandparents told stories of harder years; "
    "neighbours came in from the cold to share news of the village, the harvest and the weather.\n\n"
    "Building a good hearth was a skilled trade. The mason had to choose stones that would not crack in the heat, "
    "set them on a bed of lime mortar, and shape the chimney so that it drew the smoke upward instead of sending "
    "it back into the room. A badly built chimney could fill a cottage with soot in an afternoon. A well built one "
    "might last three hundred years, outliving the family who paid for it, the house around it, and sometimes even "
    "the village itself.\n\n"
    "Cooking on an open fire demanded patience. Bread was baked in a side oven heated with burning brushwood, which "
    "was raked out when the bricks were hot enough to bake a loaf in under an hour. Stews simmered all day in iron "
    "pots hung from a crane that could swing over the flames or away from them. Meat was roasted on a spit turned "
    "by hand, by a clockwork jack, or, in some large kitchens, by a small dog running inside a wheel. Every cook "
    "learned to read the fire: the colour of the embers, the sound of the wood, the smell of the smoke.\n\n"
    "The fire also shaped the rhythm of the day. Someone had to rise first to rake the ashes and coax the banked "
    "embers back to life. Wood had to be cut, split, stacked and dried a year ahead. In regions without forests, "
    "people burned peat cut from the bogs in spring and dried on the hillsides through the summer, or dung cakes, "
    "or coal carried on the backs of ponies from distant pits. A family that let its fire go out on a winter night "
    "might walk a mile to borrow a shovel of live coals from a neighbour.\n\n"
    "Today most homes have no open fire at all, yet the word survives. We still speak of hearth and home, and we "
    "still gather around a warm light at the end of the day, even if that light is now a screen. Historians who "
    "study domestic life argue that the fire taught people to cooperate: it needed constant care, it rewarded "
    "planning, and it punished carelessness. Whether that lesson has been lost or merely moved somewhere else is a "
    "question worth asking on a cold evening, with a cup of something hot in hand.";

// Tolerances against the float reference. Hearth rounds matmul inputs to Q8_0/Q8_K and keeps
// K/V and the attention sum in F16, as ggml does; Gemma's residual stream reaches |x| ~ 4e4 and
// its norm weights ~150, so these roundings (each op agrees with a ggml-rounding emulation to
// ~1e-7 relative, attention to ~1e-3) add up to about one logit after 18 layers. Measured:
// max |dlogit| 0.9-1.4, cosine 0.99896-0.99976; llama.cpp itself differs from the float
// reference by up to 2.2, and on text-long (523 tokens) its cosine is 0.999364 with flash
// attention and 0.998204 without: how far two correct reductions of attention move these
// logits. A structural error (rope half, a norm, the scale) gives tens.
constexpr double kMaxAbsDelta = 2.5;
constexpr double kMinCosine = 0.998;
// Hearth's top token must be the reference's, or within this of the reference's top logit.
constexpr double kArgmaxSlack = 0.25;
// The tiny F32 model has no activation quantization: only F16 K/V and attention sum remain.
// Measured 0.004; a window one position off gives 1.5.
constexpr double kTinyMaxAbsDelta = 0.02;

struct Agreement {
    double maxAbs = 0, cosine = 0;
    int hearthTop = -1, refTop = -1;
    double refMargin = 0;  // reference logit of its top token minus that of Hearth's top token
};

Agreement compare(std::span<const float> hearth, std::span<const float> ref) {
    Agreement a;
    double dot = 0, nh = 0, nr = 0;
    for (size_t i = 0; i < hearth.size(); ++i) {
        a.maxAbs = std::max(a.maxAbs, std::abs(double(hearth[i]) - ref[i]));
        dot += double(hearth[i]) * ref[i];
        nh += double(hearth[i]) * hearth[i];
        nr += double(ref[i]) * ref[i];
    }
    a.cosine = dot / std::sqrt(nh * nr);
    a.hearthTop = static_cast<int>(std::max_element(hearth.begin(), hearth.end()) - hearth.begin());
    a.refTop = static_cast<int>(std::max_element(ref.begin(), ref.end()) - ref.begin());
    a.refMargin = double(ref[static_cast<size_t>(a.refTop)]) - ref[static_cast<size_t>(a.hearthTop)];
    return a;
}

QString idList(std::span<const int32_t> ids) {
    QStringList parts;
    for (int32_t id : ids) parts << QString::number(id);
    return parts.join(',');
}

// Starts the numpy reference for several prompts; it writes [nPrompts, nVocab] float32 to out.
void startReference(QProcess& p, const QString& model, const std::vector<std::vector<int32_t>>& prompts,
                    const QString& out) {
    QStringList args{sourceDir() + "/tests/models/numpy_reference.py", model, "--logits", out, "--top", "3"};
    for (const auto& ids : prompts) args << idList(ids);
    p.setProcessChannelMode(QProcess::ForwardedErrorChannel);
    p.start(pythonExe(), args);
}

std::vector<float> readReference(QProcess& p, const QString& out, int msecs) {
    if (!p.waitForFinished(msecs) || p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0) return {};
    QFile f(out);
    if (!f.open(QIODevice::ReadOnly)) return {};
    const QByteArray bytes = f.readAll();
    std::vector<float> v(static_cast<size_t>(bytes.size()) / sizeof(float));
    std::memcpy(v.data(), bytes.constData(), v.size() * sizeof(float));
    return v;
}

}  // namespace

class TestGemma3 : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void configFromMetadata();
    void tinyModelMatchesReference();
    void logitsMatchReference();
    void chatReplyStops();

private:
    QString model_;
    QTemporaryDir dir_;
    std::unique_ptr<Engine> engine_;
};

void TestGemma3::initTestCase() {
    model_ = modelFile("gemma-3-270m-q4_k_m.gguf");
    HEARTH_REQUIRE_FILE(model_);
    HEARTH_REQUIRE_FILE(pythonExe());
    HEARTH_REQUIRE_FILE(sourceDir() + "/tests/models/numpy_reference.py");
    auto engine = Engine::load(model_.toStdString(), {});
    QVERIFY2(engine, engine ? "" : engine.error().message.c_str());
    engine_ = std::move(*engine);
}

void TestGemma3::configFromMetadata() {
    const ModelConfig& c = engine_->config();
    QCOMPARE(c.architecture, std::string("gemma3"));
    QCOMPARE(c.nLayers, 18);
    QCOMPARE(c.nEmbd, 640);
    QCOMPARE(c.nHeads, 4);
    QCOMPARE(c.nKvHeads, 1);
    QCOMPARE(c.headDim, 256);  // key_length, not nEmbd / nHeads = 160
    QCOMPARE(c.nRot, 256);
    QCOMPARE(c.nFf, 2048);
    QCOMPARE(c.nVocab, 262144);
    QCOMPARE(c.slidingWindow, 512);
    QCOMPARE(c.ropeFreqBase, 1000000.0f);
    QCOMPARE(c.ropeFreqBaseSwa, 10000.0f);
    QVERIFY(c.ropeStyle == RopeStyle::HalfSplit);
    QVERIFY(c.tiedOutput);
    QCOMPARE(static_cast<int>(c.slidingLayers.size()), 18);
    for (int il = 0; il < 18; ++il) QCOMPARE(bool(c.slidingLayers[static_cast<size_t>(il)]), il % 6 != 5);
    QCOMPARE(std::string(engine_->chatFormat().name()), std::string("gemma"));
    const GgufValue* name = engine_->file().find("general.name");
    qInfo("general.name: %s; chat template in file: %s", name && name->asString() ? name->asString()->c_str() : "?",
          engine_->file().find("tokenizer.chat_template") ? "yes" : "no");
}

void TestGemma3::tinyModelMatchesReference() {
    const QString path = dir_.filePath("tiny-gemma3.gguf");
    QVERIFY(tinyGemma3().writeFile(path.toStdString()));
    const std::vector<int32_t> ids{2, 262, 263, 264, 7, 265, 40, 41, 42, 200, 201, 202, 5, 6, 7, 8, 9, 10, 100, 101};
    QProcess ref;
    const QString out = dir_.filePath("tiny-ref.f32");
    startReference(ref, path, {ids}, out);
    auto file = GgufFile::open(path.toStdString());
    QVERIFY(file);
    auto model = Model::load(**file);
    QVERIFY2(model, model ? "" : model.error().message.c_str());
    auto backend = makeCpuReferenceBackend();
    KvCache cache((*model)->kvLayout(), 64);
    KvSequence seq;
    std::vector<float> logits(static_cast<size_t>((*model)->config().nVocab));
    QVERIFY((*model)->forward(*backend, cache, seq, ids, logits));
    const std::vector<float> expected = readReference(ref, out, 120000);
    QCOMPARE(expected.size(), logits.size());
    const Agreement a = compare(logits, expected);
    qInfo("tiny F32 gemma3, %zu tokens, window 5: max |dlogit| %.5f, cosine %.7f, argmax %d / %d", ids.size(), a.maxAbs,
          a.cosine, a.hearthTop, a.refTop);
    QVERIFY2(a.maxAbs < kTinyMaxAbsDelta, qPrintable(QString::number(a.maxAbs)));
    QCOMPARE(a.hearthTop, a.refTop);
}

void TestGemma3::logitsMatchReference() {
    // Three prompts, two of them one sequence: the 64-token prefix's logits come from the first
    // forward call, the whole text's from a second call that continues the same KV.
    const std::vector<TokenId> chat = engine_->chatPrompt({{ChatRole::User, "What is the capital of France?"}});
    const std::vector<TokenId> text = engine_->rawPrompt(kLongText);
    QVERIFY2(text.size() > 512, qPrintable(QString::number(text.size())));
    const size_t nPrefix = 64;
    const std::vector<TokenId> prefix(text.begin(), text.begin() + nPrefix);
    QProcess ref;
    const QString out = dir_.filePath("ref.f32");
    startReference(ref, model_, {chat, prefix, text}, out);  // runs while Hearth computes

    auto model = Model::load(engine_->file());
    QVERIFY(model);
    auto backend = makeBestCpuBackend();  // bitwise equal to the reference backend, faster
    const auto nVocab = static_cast<size_t>((*model)->config().nVocab);
    std::vector<float> hearth(3 * nVocab);
    QElapsedTimer timer;
    timer.start();
    KvCache cache((*model)->kvLayout(), 1024);
    KvSequence chatSeq, textSeq;
    QVERIFY((*model)->forward(*backend, cache, chatSeq, chat, std::span(hearth).subspan(0, nVocab)));
    QVERIFY((*model)->forward(*backend, cache, textSeq, prefix, std::span(hearth).subspan(nVocab, nVocab)));
    QVERIFY((*model)->forward(*backend, cache, textSeq, std::span(text).subspan(nPrefix),
                              std::span(hearth).subspan(2 * nVocab, nVocab)));
    const double hearthSeconds = timer.elapsed() / 1000.0;
    const std::vector<float> expected = readReference(ref, out, 900000);
    QCOMPARE(expected.size(), hearth.size());
    qInfo("Hearth: %zu tokens in %.1f s (%s)", chat.size() + text.size(), hearthSeconds, backend->name().c_str());
    qInfo("%-10s %8s %12s %10s %8s", "prompt", "tokens", "max|dlogit|", "cosine", "argmax");
    const char* names[] = {"chat", "text-64", "text-long"};
    const size_t sizes[] = {chat.size(), prefix.size(), text.size()};
    for (size_t i = 0; i < 3; ++i) {
        const Agreement a =
            compare(std::span(hearth).subspan(i * nVocab, nVocab), std::span(expected).subspan(i * nVocab, nVocab));
        qInfo("%-10s %8zu %12.4f %10.6f %8s (Hearth %d, reference %d, reference margin %.3f)", names[i], sizes[i],
              a.maxAbs, a.cosine, a.hearthTop == a.refTop ? "same" : "differs", a.hearthTop, a.refTop, a.refMargin);
        QVERIFY2(a.maxAbs < kMaxAbsDelta, names[i]);
        QVERIFY2(a.cosine > kMinCosine, names[i]);
        QVERIFY2(a.refMargin <= kArgmaxSlack, names[i]);
    }
}

void TestGemma3::chatReplyStops() {
    // The packaged file is Gemma 3 270m without a chat template (general.name has no "it"); it
    // answers this question by repeating it, which the float reference predicts too. What this
    // checks is that a greedy chat reply is produced and ends at an end-of-generation token
    // (<end_of_turn>, <eos>) or at the length.
    GenerateRequest req;
    req.prompt = engine_->chatPrompt({{ChatRole::User, "What is the capital of France?"}});
    req.sampling.temperature = 0;
    req.maxTokens = 24;
    std::string reply;
    auto r = engine_->generate(req, [&](TokenId, std::string_view piece) {
        reply += piece;
        return true;
    });
    QVERIFY2(r, r ? "" : r.error().message.c_str());
    qInfo("greedy reply: %s", reply.c_str());
    qInfo("finish: %s; prefill %.1f tokens/s, decode %.2f tokens/s", finishReasonName(r->finishReason),
          r->timings.prefillTokens / r->timings.prefillMs * 1000.0,
          r->timings.decodeTokens / std::max(1e-9, r->timings.decodeMs) * 1000.0);
    QVERIFY(!reply.empty());
    if (r->finishReason == FinishReason::Eos) {
        const TokenId last = r->tokens.back();
        qInfo("stopped at token %d (%s)", last, engine_->tokenizer().pieceText(last).c_str());
        QVERIFY(engine_->tokenizer().isEndOfGeneration(last));
    } else {
        QVERIFY(r->finishReason == FinishReason::Length);
        QCOMPARE(static_cast<int>(r->tokens.size()), req.maxTokens);
    }
}

QTEST_GUILESS_MAIN(TestGemma3)
#include "test_gemma3.moc"
