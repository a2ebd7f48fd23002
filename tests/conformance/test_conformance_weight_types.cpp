// Conformance: every weight type Hearth reads, on a synthetic Llama-shaped model. Hearth writes
// an F32 GGUF with random weights (tests/support/synth_llama.h), the oracle's llama.cpp quantizes
// it (llama_model_quantize, pure) to each type, Hearth's GGUF reader checks every tensor has the
// type asked for, and Hearth's logits are compared with llama.cpp's on the same token ids.
// Also Llama 3.1's RoPE frequency factors (rope_freqs.weight) on the F32 model, with a feature-off control.
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QTemporaryDir>
#include <QtTest>
#include <algorithm>
#include <cmath>
#include <random>

#include "engine/model/gguf.h"
#include "engine/model/model.h"
#include "tests/support/python_json.h"
#include "tests/support/synth_llama.h"
#include "tests/support/test_env.h"

using namespace hearth;
using namespace hearth::test;

namespace {

QJsonObject readJson(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? QJsonDocument::fromJson(f.readAll()).object() : QJsonObject{};
}

// Prompts of token ids: BOS, then seeded random ids of the vocabulary.
std::vector<std::vector<int32_t>> makePrompts(int nVocab, int length) {
    std::mt19937 rng(11);
    std::uniform_int_distribution<int32_t> id(3, nVocab - 1);
    std::vector<std::vector<int32_t>> prompts(3);
    for (auto& p : prompts) {
        p.push_back(1);
        for (int i = 1; i < length; ++i) p.push_back(id(rng));
    }
    return prompts;
}

constexpr int kPrefill = 4;  // Hearth runs the first tokens as one batch, then one token at a time

// Hearth's logits at positions kPrefill - 1 ... end of the prompt, row after row.
std::vector<std::vector<float>> hearthLogits(Model& model, Backend& backend, const std::vector<int32_t>& prompt) {
    KvCache cache(model.kvLayout(), static_cast<int32_t>(prompt.size()) + 1);
    KvSequence seq;
    std::vector<std::vector<float>> rows;
    std::vector<float> logits(static_cast<size_t>(model.config().nVocab));
    if (!model.forward(backend, cache, seq, std::span(prompt).first(kPrefill), logits)) return rows;
    rows.push_back(logits);
    for (size_t i = kPrefill; i < prompt.size(); ++i) {
        if (!model.forward(backend, cache, seq, std::span(prompt).subspan(i, 1), logits)) return rows;
        rows.push_back(logits);
    }
    return rows;
}

struct Stats {
    double maxAbs = 0, minCosine = 1, maxLogit = 0;
    int n = 0;
};

// How a comparison runs: prompt length (a sliding window of 16 needs 64 and more) and the
// context Hearth loads the model at — the oracle's is its n_ctx rounded up to 256 by llama.cpp,
// which is what Phi-3's LongRoPE chooses its factors by.
struct CompareOptions {
    int promptLength = 24;
    int contextLength = 0;
};

size_t argmax(const float* x, size_t n) { return static_cast<size_t>(std::max_element(x, x + n) - x); }

void accumulate(const float* a, const float* b, size_t nVocab, Stats& s) {
    double dot = 0, na = 0, nb = 0;
    for (size_t i = 0; i < nVocab; ++i) {
        s.maxAbs = std::max(s.maxAbs, std::abs(double(a[i]) - b[i]));
        s.maxLogit = std::max(s.maxLogit, std::abs(double(b[i])));
        dot += double(a[i]) * b[i];
        na += double(a[i]) * a[i];
        nb += double(b[i]) * b[i];
    }
    s.minCosine = std::min(s.minCosine, dot / std::sqrt(na * nb));
    ++s.n;
}

}  // namespace

class TestConformanceWeightTypes : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void weightType_data();
    void weightType();
    void ropeFreqFactors();
    void qwen2_data();
    void qwen2();
    void qwen3_data();
    void qwen3();
    void phi3_data();
    void phi3();
    void gemma2_data();
    void gemma2();
    void gemma2QueryScale();

private:
    // Hearth's logits on hearthPath against the oracle's on oraclePath (the same file; for a
    // feature-off control, the file with the feature) at every position of the prompts, by the
    // limits of `type`: they must hold when expectAgreement, and must not otherwise.
    void compare(const QString& hearthPath, const QString& oraclePath, const QString& label, const QString& type,
                 bool expectAgreement, const CompareOptions& options = {});
    // Writes shape's F32 file as folder_/synth-<name>-F32.gguf and, for another type, has the
    // oracle quantize it to folder_/synth-<name>-<type>.gguf; returns the path ("" on failure).
    QString writeFamilyFile(const SynthLlamaShape& shape, const QString& name, const QString& type);

    QTemporaryDir dir_;
    QString folder_;
    QString f32Path_;
    QJsonObject tolerances_, weightTolerances_;
};

void TestConformanceWeightTypes::initTestCase() {
    HEARTH_REQUIRE_FILE(oraclePython());
    tolerances_ = readJson(sourceDir() + "/tests/conformance/tolerances.json");
    weightTolerances_ = tolerances_["weight_types"].toObject();
    QVERIFY(!weightTolerances_.isEmpty());
    QVERIFY(dir_.isValid());
    // HEARTH_CONFORMANCE_KEEP: a folder that keeps the synthetic files for a look afterwards.
    folder_ = qEnvironmentVariableIsEmpty("HEARTH_CONFORMANCE_KEEP") ? dir_.path()
                                                                     : qEnvironmentVariable("HEARTH_CONFORMANCE_KEEP");
    QVERIFY(QDir().mkpath(folder_));
    f32Path_ = folder_ + "/synth-f32.gguf";
    auto written = synthLlamaF32().writeFile(f32Path_.toStdString());
    QVERIFY2(written, written ? "" : written.error().message.c_str());
}

void TestConformanceWeightTypes::weightType_data() {
    QTest::addColumn<QString>("type");
    for (const char* t : {"F32", "F16", "BF16", "Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q4_K", "Q5_K", "Q6_K"})
        QTest::newRow(t) << QString(t);
}

void TestConformanceWeightTypes::weightType() {
    QFETCH(QString, type);
    const QString script = sourceDir() + "/tests/conformance/oracle.py";
    QString path = f32Path_;
    if (type != "F32") {
        path = folder_ + "/synth-" + type + ".gguf";
        const QJsonObject q = askPython(oraclePython(), script,
                                        {{"op", "quantize"}, {"model", f32Path_}, {"out", path}, {"ftype", type}});
        QVERIFY2(!q.contains("error"), qPrintable(q["error"].toString()));
    }
    auto file = GgufFile::open(path.toStdString());
    QVERIFY2(file, file ? "" : file.error().message.c_str());
    int nChecked = 0;
    for (const GgufTensorInfo& t : (*file)->tensors()) {
        const bool matrix = t.dims.size() >= 2 && t.dims[1] > 1;
        const QString want = matrix ? type : QString("F32");
        QVERIFY2(
            QString(dtypeInfo(t.type).name) == want,
            qPrintable(QString("%1 is %2, not %3").arg(QString::fromStdString(t.name), dtypeInfo(t.type).name, want)));
        nChecked += matrix;
    }
    QCOMPARE(nChecked, 2 + 7 * 2);  // token_embd, output, 7 matrices per layer

    compare(path, path, "synthetic llama", type, true);
}

// Llama 3.1's per-pair RoPE frequency factors (rope_freqs.weight) on the synthetic model, F32:
// factors between 1/4 and 4, so that every pair's angle changes. The feature-off control, Hearth
// reading the same weights without rope_freqs against the oracle reading them with it, must
// fail the same limits: the comparison sees the factors.
void TestConformanceWeightTypes::ropeFreqFactors() {
    SynthLlamaShape shape;
    const int64_t half = shape.nEmbd / shape.nHeads / 2;
    std::vector<float> factors(static_cast<size_t>(half));
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> logFactor(std::log(0.25f), std::log(4.0f));
    for (float& f : factors) f = std::exp(logFactor(rng));
    GgufWriter with = synthLlamaF32(shape);
    with.addTensor("rope_freqs.weight", {half}, DType::F32, f32Bytes(factors));
    const QString withPath = folder_ + "/synth-rope-freqs.gguf";
    auto written = with.writeFile(withPath.toStdString());
    QVERIFY2(written, written ? "" : written.error().message.c_str());
    compare(withPath, withPath, "synthetic llama, rope_freqs", "F32", true);
    if (QTest::currentTestFailed()) return;
    compare(f32Path_, withPath, "control: rope_freqs ignored", "F32", false);
}

// Qwen 2 (general.architecture qwen2): the synthetic model's weights under qwen2.* keys with
// Q/K/V biases ~ N(0, 0.5^2), RoPE on the halves of each head; F32 and as llama.cpp quantizes it
// to Q8_0 and Q4_K. The feature-off control: Hearth reading the same file without the biases,
// against the oracle reading it with them, must fail the limits.
void TestConformanceWeightTypes::qwen2_data() {
    QTest::addColumn<QString>("type");
    for (const char* t : {"F32", "F16", "Q8_0", "Q4_K", "Q4_0", "Q6_K"}) QTest::newRow(t) << QString(t);
}

void TestConformanceWeightTypes::qwen2() {
    QFETCH(QString, type);
    SynthLlamaShape shape;
    shape.arch = "qwen2";
    shape.qkvBias = true;
    const QString f32 = folder_ + "/synth-qwen2-F32.gguf";
    auto written = synthLlamaF32(shape).writeFile(f32.toStdString());
    QVERIFY2(written, written ? "" : written.error().message.c_str());
    QString path = f32;
    if (type != "F32") {
        path = folder_ + "/synth-qwen2-" + type + ".gguf";
        const QJsonObject q = askPython(oraclePython(), sourceDir() + "/tests/conformance/oracle.py",
                                        {{"op", "quantize"}, {"model", f32}, {"out", path}, {"ftype", type}});
        QVERIFY2(!q.contains("error"), qPrintable(q["error"].toString()));
    }
    compare(path, path, "synthetic qwen2", type, true);
    if (QTest::currentTestFailed() || type != "F32") return;
    // The control: the same weights and keys without the biases (drawn from their own generator).
    SynthLlamaShape plain = shape;
    plain.qkvBias = false;
    const QString plainPath = folder_ + "/synth-qwen2-no-bias.gguf";
    written = synthLlamaF32(plain).writeFile(plainPath.toStdString());
    QVERIFY2(written, written ? "" : written.error().message.c_str());
    compare(plainPath, f32, "control: qwen2 biases ignored", type, false);
}

QString TestConformanceWeightTypes::writeFamilyFile(const SynthLlamaShape& shape, const QString& name,
                                                    const QString& type) {
    const QString f32 = folder_ + "/synth-" + name + "-F32.gguf";
    auto written = synthLlamaF32(shape).writeFile(f32.toStdString());
    if (!written) {
        qWarning("%s", written.error().message.c_str());
        return {};
    }
    if (type == "F32") return f32;
    const QString path = folder_ + "/synth-" + name + "-" + type + ".gguf";
    const QJsonObject q = askPython(oraclePython(), sourceDir() + "/tests/conformance/oracle.py",
                                    {{"op", "quantize"}, {"model", f32}, {"out", path}, {"ftype", type}});
    if (q.contains("error")) {
        qWarning("%s", qPrintable(q["error"].toString()));
        return {};
    }
    return path;
}

// Qwen 3 (qwen3): no biases, RMSNorm of each Q and K head before RoPE with norm weights
// 1 + N(0, 0.3^2), NeoX RoPE. The control: the same weights without the QK norms, read by
// Hearth as qwen2 (Qwen 3 with its QK norm switched off), against the oracle on the qwen3 file.
void TestConformanceWeightTypes::qwen3_data() {
    QTest::addColumn<QString>("type");
    for (const char* t : {"F32", "F16", "Q8_0", "Q4_K", "Q4_0", "Q6_K"}) QTest::newRow(t) << QString(t);
}

void TestConformanceWeightTypes::qwen3() {
    QFETCH(QString, type);
    SynthLlamaShape shape;
    shape.arch = "qwen3";
    shape.qkNorm = true;
    const QString path = writeFamilyFile(shape, "qwen3", type);
    QVERIFY(!path.isEmpty());
    compare(path, path, "synthetic qwen3", type, true);
    if (QTest::currentTestFailed() || type != "F32") return;
    SynthLlamaShape plain = shape;
    plain.arch = "qwen2";
    plain.qkNorm = false;
    const QString plainPath = writeFamilyFile(plain, "qwen3-no-qk-norm", "F32");
    QVERIFY(!plainPath.isEmpty());
    compare(plainPath, path, "control: qwen3 QK norm off", type, false);
}

// Phi-3 (phi3): fused attn_qkv and gate/up ffn_up, NeoX RoPE over 48 of each head's 64
// dimensions (Phi-4-mini rotates 3/4), LongRoPE factors between 1/4 and 4 with attn_factor
// 1.19. The oracle runs at n_ctx 256 (llama.cpp's rounding), so an original context of 128
// makes both sides use the long factors and one of 256 the short ones; Hearth loads at 256.
// Controls: the same weights without the factors and attn_factor; and with the factors but
// without attn_factor.
void TestConformanceWeightTypes::phi3_data() {
    QTest::addColumn<QString>("type");
    QTest::addColumn<int>("originalContext");
    for (const char* t : {"F32", "F16", "Q8_0", "Q4_K"})
        QTest::newRow((QString(t) + " long").toUtf8()) << QString(t) << 128;
    QTest::newRow("F32 short") << QString("F32") << 256;
}

void TestConformanceWeightTypes::phi3() {
    QFETCH(QString, type);
    QFETCH(int, originalContext);
    SynthLlamaShape shape;
    shape.arch = "phi3";
    shape.fused = true;
    shape.nRot = 48;
    shape.context = 4096;
    shape.originalContext = originalContext;
    shape.ropeAttnFactor = 1.19f;
    std::mt19937 rng(13);
    std::uniform_real_distribution<float> logFactor(std::log(0.25f), std::log(4.0f));
    for (int i = 0; i < shape.nRot / 2; ++i) shape.ropeShort.push_back(std::exp(logFactor(rng)));
    for (int i = 0; i < shape.nRot / 2; ++i) shape.ropeLong.push_back(std::exp(logFactor(rng)));
    const QString which = originalContext < 256 ? "long" : "short";
    const QString path = writeFamilyFile(shape, "phi3-" + which, type);
    QVERIFY(!path.isEmpty());
    const CompareOptions at256{.contextLength = 256};
    compare(path, path, "synthetic phi3, LongRoPE " + which, type, true, at256);
    if (QTest::currentTestFailed() || type != "F32") return;
    SynthLlamaShape plain = shape;
    plain.ropeShort.clear(), plain.ropeLong.clear(), plain.ropeAttnFactor = 0.0f;
    const QString plainPath = writeFamilyFile(plain, "phi3-no-longrope", "F32");
    QVERIFY(!plainPath.isEmpty());
    compare(plainPath, path, "control: phi3 LongRoPE " + which + " off", type, false, at256);
    if (QTest::currentTestFailed() || which != "long") return;
    SynthLlamaShape noFactor = shape;
    noFactor.ropeAttnFactor = 0.0f;
    const QString noFactorPath = writeFamilyFile(noFactor, "phi3-no-attn-factor", "F32");
    QVERIFY(!noFactorPath.isEmpty());
    compare(noFactorPath, path, "control: phi3 attn_factor off", type, false, at256);
}

// Gemma 2 (gemma2): post norms, GeGLU, embeddings times sqrt(nEmbd), tied output, every other
// layer local with a window of 16 over prompts of 72 tokens, attention scores soft-capped at
// 1.0 (their own scale) and logits at 2.0 (below their size). Controls, each with one feature
// switched off in the file Hearth reads: the window (0), the attention cap (0), the final cap (0).
void TestConformanceWeightTypes::gemma2_data() {
    QTest::addColumn<QString>("type");
    for (const char* t : {"F32", "F16", "Q8_0", "Q4_K"}) QTest::newRow(t) << QString(t);
}

void TestConformanceWeightTypes::gemma2() {
    QFETCH(QString, type);
    SynthLlamaShape shape;
    shape.arch = "gemma2";
    shape.gemma = true;
    shape.nLayers = 4;
    shape.slidingWindow = 16;
    shape.attnSoftcap = 1.0f;
    shape.finalSoftcap = 2.0f;
    const QString path = writeFamilyFile(shape, "gemma2", type);
    QVERIFY(!path.isEmpty());
    const CompareOptions longPrompts{.promptLength = 72};
    compare(path, path, "synthetic gemma2", type, true, longPrompts);
    if (QTest::currentTestFailed() || type != "F32") return;
    const struct {
        const char* name;
        void (*off)(SynthLlamaShape&);
    } controls[] = {{"sliding window", [](SynthLlamaShape& s) { s.slidingWindow = 0; }},
                    {"attention soft-cap", [](SynthLlamaShape& s) { s.attnSoftcap = 0.0f; }},
                    {"final soft-cap", [](SynthLlamaShape& s) { s.finalSoftcap = 0.0f; }}};
    for (const auto& control : controls) {
        SynthLlamaShape off = shape;
        control.off(off);
        const QString offPath =
            writeFamilyFile(off, QString("gemma2-no-") + QString(control.name).replace(' ', '-'), "F32");
        QVERIFY(!offPath.isEmpty());
        compare(offPath, path, QString("control: gemma2 ") + control.name + " off", type, false, longPrompts);
        if (QTest::currentTestFailed()) return;
    }
}

// Gemma 2 27B's query scale: llama.cpp takes 1/sqrt(nEmbd / nHeads) instead of 1/sqrt(headDim)
// for a 46-layer file. A 46-layer file of width 256 with 4 heads of 128 (nEmbd / nHeads = 64)
// tells the two apart.
void TestConformanceWeightTypes::gemma2QueryScale() {
    SynthLlamaShape shape;
    shape.arch = "gemma2";
    shape.gemma = true;
    shape.nLayers = 46;
    shape.headDim = 128;
    shape.slidingWindow = 16;
    const QString path = writeFamilyFile(shape, "gemma2-46-layers", "F32");
    QVERIFY(!path.isEmpty());
    compare(path, path, "synthetic gemma2, 46 layers", "F32", true, {.promptLength = 72});
}

void TestConformanceWeightTypes::compare(const QString& hearthPath, const QString& oraclePath, const QString& label,
                                         const QString& type, bool expectAgreement, const CompareOptions& options) {
    const QString script = sourceDir() + "/tests/conformance/oracle.py";
    auto file = GgufFile::open(hearthPath.toStdString());
    QVERIFY2(file, file ? "" : file.error().message.c_str());
    auto model = Model::load(**file, {.contextLength = options.contextLength});
    QVERIFY2(model, model ? "" : model.error().message.c_str());
    auto backend = makeBestCpuBackend();
    const auto prompts = makePrompts((*model)->config().nVocab, options.promptLength);
    QJsonArray promptIds;
    for (const auto& p : prompts)
        promptIds.append(QJsonArray::fromVariantList([&] {
            QVariantList l;
            for (int32_t id : p) l << id;
            return l;
        }()));
    // The oracle's rows (every position of every prompt), with flash attention on (the
    // reference) and off (the control: llama.cpp against itself).
    QString oracleError;
    const auto oracleRows = [&](bool flashAttention) {
        const QJsonObject answer = askPython(
            oraclePython(), script,
            {{"op", "logits"}, {"model", oraclePath}, {"prompts", promptIds}, {"flash_attn", flashAttention}});
        if (answer.contains("error")) {
            oracleError = answer["error"].toString();
            return QByteArray();
        }
        QFile logitsFile(answer["logits_file"].toString());
        return logitsFile.open(QIODevice::ReadOnly) ? logitsFile.readAll() : QByteArray();
    };
    const QByteArray reference = oracleRows(true);
    QVERIFY2(oracleError.isEmpty(), qPrintable("oracle: " + oracleError));
    const QByteArray control = oracleRows(false);
    QVERIFY2(oracleError.isEmpty(), qPrintable("oracle: " + oracleError));
    const auto nVocab = static_cast<size_t>((*model)->config().nVocab);
    size_t nRows = 0;
    for (const auto& p : prompts) nRows += p.size();
    QCOMPARE(static_cast<size_t>(reference.size()), nRows * nVocab * sizeof(float));
    QCOMPARE(static_cast<size_t>(control.size()), nRows * nVocab * sizeof(float));
    const auto* ref = reinterpret_cast<const float*>(reference.constData());
    const auto* ctl = reinterpret_cast<const float*>(control.constData());

    Stats hearth, self;
    size_t row0 = 0;
    std::vector<std::pair<size_t, size_t>> argmaxes;  // (hearth's, the oracle's) per row
    for (const auto& p : prompts) {
        const auto ours = hearthLogits(**model, *backend, p);
        QCOMPARE(ours.size(), p.size() - kPrefill + 1);
        for (size_t j = 0; j < ours.size(); ++j) {
            const size_t row = (row0 + kPrefill - 1 + j) * nVocab;
            accumulate(ours[j].data(), ref + row, nVocab, hearth);
            accumulate(ctl + row, ref + row, nVocab, self);
            argmaxes.emplace_back(argmax(ours[j].data(), nVocab), (row0 + kPrefill - 1 + j) * nVocab);
        }
        row0 += p.size();
    }
    const QJsonObject tol =
        weightTolerances_["max_abs"].toObject()[type.startsWith("Q") ? "quantized" : type].toObject();
    QVERIFY2(!tol.isEmpty(), "no tolerance for this type in tolerances.json");
    const double absLimit =
        std::max(tol["value"].toDouble(), tolerances_["control_factor"].toObject()["value"].toDouble() * self.maxAbs);
    const double cosLimit =
        std::min(weightTolerances_["min_cosine"].toObject()["value"].toDouble(),
                 1.0 - tolerances_["cosine_control_factor"].toObject()["value"].toDouble() * (1.0 - self.minCosine));
    qInfo("| model | type | metric | hearth vs oracle | oracle FA off vs on | limit |");
    qInfo("| %s | %s | logits max abs difference (%d positions, max |logit| %.1f) | %.5f | %.5f | <= %.4f |",
          qPrintable(label), qPrintable(type), hearth.n, hearth.maxLogit, hearth.maxAbs, self.maxAbs, absLimit);
    qInfo("| %s | %s | logits min cosine similarity | %.7f | %.7f | >= %.6f |", qPrintable(label), qPrintable(type),
          hearth.minCosine, self.minCosine, cosLimit);
    // Greedy: Hearth's top token is the oracle's, or a near tie — the oracle's logit for it
    // within the max-abs limit of the oracle's own top.
    int same = 0, nearTies = 0;
    for (const auto& [ours, row] : argmaxes) {
        const size_t theirs = argmax(ref + row, nVocab);
        if (ours == theirs) ++same;
        else if (ref[row + theirs] - ref[row + ours] <= absLimit) ++nearTies;
    }
    const int differing = static_cast<int>(argmaxes.size()) - same - nearTies;
    qInfo("| %s | %s | greedy token | %d of %zu the oracle's, %d near ties | | 0 others |", qPrintable(label),
          qPrintable(type), same, argmaxes.size(), nearTies);
    if (expectAgreement) {
        QVERIFY2(hearth.maxAbs <= absLimit, "logits differ more than the tolerance");
        QVERIFY2(hearth.minCosine >= cosLimit, "logits cosine below the tolerance");
        QVERIFY2(differing == 0, "a greedy token differs from the oracle's beyond a near tie");
    } else {
        QVERIFY2(hearth.maxAbs > absLimit || hearth.minCosine < cosLimit,
                 "the feature-off control is within the tolerance: the comparison does not see the feature");
    }
}

QTEST_GUILESS_MAIN(TestConformanceWeightTypes)
#include "test_conformance_weight_types.moc"
