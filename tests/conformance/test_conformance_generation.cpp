// Conformance: greedy continuations and logits of Hearth against the oracle (llama.cpp via
// llama-cpp-python) on stories260K, SmolLM2 and Gemma 3, chat-formatted and raw. Tolerances
// come from tolerances.json (one place, with reasons); a table is printed per model.
#include <QFile>
#include <QJsonArray>
#include <QtTest>
#include <cmath>

#include "engine/engine.h"
#include "engine/model/gguf.h"
#include "tests/support/python_json.h"
#include "tests/support/test_env.h"

using namespace hearth;
using namespace hearth::test;

namespace {

struct GreedyRun {
    std::vector<int32_t> tokens;
    std::vector<std::vector<float>> logits;  // the first nLogitPositions positions
    std::vector<float> gaps;  // oracle only: top-1 minus top-2 logit
};

QJsonObject readJson(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? QJsonDocument::fromJson(f.readAll()).object() : QJsonObject{};
}

// Hearth's greedy run straight through the model (full logits kept for the first positions).
GreedyRun hearthGreedy(Model& model, Backend& backend, const Tokenizer& tok, const std::vector<int32_t>& prompt, int n,
                       int nLogitPositions) {
    KvCache cache(model.kvLayout(), static_cast<int32_t>(prompt.size()) + n + 1);
    KvSequence seq;
    std::vector<float> logits(static_cast<size_t>(model.config().nVocab));
    GreedyRun run;
    if (!model.forward(backend, cache, seq, prompt, logits)) return run;
    for (int i = 0; i < n; ++i) {
        const int32_t id = argmax(logits);
        run.tokens.push_back(id);
        if (i < nLogitPositions) run.logits.push_back(logits);
        if (tok.isEndOfGeneration(id)) break;
        if (!model.forward(backend, cache, seq, std::span(&id, 1), logits)) break;
    }
    return run;
}

struct LogitStats {
    double maxAbs = 0.0, minCosine = 1.0;
    int nPositions = 0;
};

void compareLogits(const std::vector<float>& a, const std::vector<float>& b, LogitStats& s) {
    double dot = 0, na = 0, nb = 0;
    for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
        s.maxAbs = std::max(s.maxAbs, std::abs(double(a[i]) - b[i]));
        dot += double(a[i]) * b[i];
        na += double(a[i]) * a[i];
        nb += double(b[i]) * b[i];
    }
    s.minCosine = std::min(s.minCosine, dot / std::sqrt(na * nb));
    ++s.nPositions;
}

// One oracle run; its logit rows come from the oracle's float32 file, read in order.
GreedyRun fromJson(const QJsonObject& run, QFile& logitsFile, qint64 nVocab) {
    GreedyRun o;
    for (const QJsonValue& t : run["tokens"].toArray()) o.tokens.push_back(t.toInt());
    for (const QJsonValue& g : run["gaps"].toArray()) o.gaps.push_back(static_cast<float>(g.toDouble()));
    for (int i = 0; i < run["n_logits"].toInt(); ++i) {
        std::vector<float> v(static_cast<size_t>(nVocab));
        const qint64 want = nVocab * static_cast<qint64>(sizeof(float));
        if (logitsFile.read(reinterpret_cast<char*>(v.data()), want) != want) break;
        o.logits.push_back(std::move(v));
    }
    return o;
}

struct RunComparison {
    LogitStats logits;
    size_t nIdentical = 0;
    QStringList nearTies, failures;  // divergences where the reference's gap was below / above the limit
};

// Compares candidate runs with the reference runs: logits while both followed the same tokens,
// then each divergence judged by the reference's own top-1/top-2 gap there.
RunComparison compareRuns(const std::vector<GreedyRun>& cand, const std::vector<GreedyRun>& ref, double gapFloor) {
    RunComparison c;
    for (size_t r = 0; r < cand.size() && r < ref.size(); ++r)
        for (size_t j = 0; j < cand[r].logits.size() && j < ref[r].logits.size(); ++j) {
            compareLogits(cand[r].logits[j], ref[r].logits[j], c.logits);
            if (j >= cand[r].tokens.size() || j >= ref[r].tokens.size() || cand[r].tokens[j] != ref[r].tokens[j]) break;
        }
    const double gapLimit = std::max(gapFloor, 2.0 * c.logits.maxAbs);
    for (size_t r = 0; r < cand.size() && r < ref.size(); ++r) {
        const GreedyRun& h = cand[r];
        const GreedyRun& t = ref[r];
        size_t i = 0;
        while (i < h.tokens.size() && i < t.tokens.size() && h.tokens[i] == t.tokens[i]) ++i;
        if (i == h.tokens.size() && i == t.tokens.size()) {
            ++c.nIdentical;
            continue;
        }
        const float gap = i < t.gaps.size() ? t.gaps[i] : 0.0f;
        const QString where = QString("run %1 diverges at token %2 (oracle gap %3)").arg(r).arg(i).arg(gap);
        (gap < gapLimit ? c.nearTies : c.failures) << where;
    }
    return c;
}

}  // namespace

class TestConformanceGeneration : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void greedyAndLogits_data();
    void greedyAndLogits();

private:
    QJsonObject tolerances_;
    QJsonArray prompts_;
};

void TestConformanceGeneration::initTestCase() {
    HEARTH_REQUIRE_FILE(oraclePython());
    tolerances_ = readJson(sourceDir() + "/tests/conformance/tolerances.json");
    prompts_ = readJson(sourceDir() + "/tests/conformance/prompts.json")["prompts"].toArray();
    QVERIFY(!tolerances_.isEmpty());
    QVERIFY(prompts_.size() >= 20);
}

void TestConformanceGeneration::greedyAndLogits_data() {
    QTest::addColumn<QString>("model");
    QTest::addColumn<QString>("type");
    QTest::addColumn<bool>("chat");
    QTest::newRow("stories260K F32") << testDataFile("stories260K.gguf") << "F32" << false;
    QTest::newRow("SmolLM2-135M Q4_1") << modelFile("SmolLM2-135M-Instruct.Q4_1.gguf") << "quantized" << true;
    QTest::newRow("gemma-3-270m Q4_K_M") << modelFile("gemma-3-270m-q4_k_m.gguf") << "quantized" << true;
}

void TestConformanceGeneration::greedyAndLogits() {
    QFETCH(QString, model);
    QFETCH(QString, type);
    QFETCH(bool, chat);
    HEARTH_REQUIRE_FILE(model);
    const int nGenerate = qEnvironmentVariableIntValue("HEARTH_CONFORMANCE_TOKENS") > 0
        ? qEnvironmentVariableIntValue("HEARTH_CONFORMANCE_TOKENS")
        : 64;
    const int nLogitPositions = 9;  // the prompt's last position + 8 generated positions
    const int nLogitRuns = 8;  // full logit vectors kept for the first runs (Gemma: 262k each)
    auto engine = Engine::load(model.toStdString(), {});
    QVERIFY2(engine, engine ? "" : engine.error().message.c_str());
    auto loaded = Model::load((*engine)->file());
    QVERIFY(loaded);
    auto backend = makeBestCpuBackend();

    // Prompts: raw for every model; chat-formatted too where the model has a chat format.
    QJsonArray promptIds;
    std::vector<std::vector<int32_t>> prompts;
    for (const QJsonValue& p : prompts_) {
        const std::string text = p.toString().toStdString();
        prompts.push_back((*engine)->rawPrompt(text));
        if (chat) prompts.push_back((*engine)->chatPrompt({{ChatRole::User, text}}));
    }
    QJsonArray stopIds;
    for (int32_t id = 0; id < (*engine)->tokenizer().nVocab(); ++id)
        if ((*engine)->tokenizer().isEndOfGeneration(id)) stopIds.append(id);
    for (const auto& p : prompts) {
        QJsonArray ids;
        for (int32_t id : p) ids.append(id);
        promptIds.append(ids);
    }
    QString oracleError;
    const auto oracleRuns = [&](bool flashAttention) {
        const QJsonObject answer = askPython(oraclePython(), sourceDir() + "/tests/conformance/oracle.py",
                                             {{"op", "greedy"},
                                              {"model", model},
                                              {"prompts", promptIds},
                                              {"n", nGenerate},
                                              {"logit_positions", nLogitPositions},
                                              {"logit_runs", nLogitRuns},
                                              {"stop_ids", stopIds},
                                              {"flash_attn", flashAttention}});
        std::vector<GreedyRun> runs;
        if (answer.contains("error")) {
            oracleError = answer["error"].toString();
            return runs;
        }
        QFile logitsFile(answer["logits_file"].toString());
        if (!logitsFile.open(QIODevice::ReadOnly)) qWarning("oracle: no logits file");
        for (const QJsonValue& rv : answer["runs"].toArray())
            runs.push_back(fromJson(rv.toObject(), logitsFile, answer["n_vocab"].toInteger()));
        return runs;
    };
    const std::vector<GreedyRun> reference = oracleRuns(true);
    QVERIFY2(oracleError.isEmpty(), qPrintable("oracle: " + oracleError));
    const std::vector<GreedyRun> control = oracleRuns(false);  // llama.cpp against itself
    QVERIFY2(oracleError.isEmpty(), qPrintable("oracle: " + oracleError));
    QCOMPARE(reference.size(), prompts.size());
    QCOMPARE(control.size(), prompts.size());
    std::vector<GreedyRun> ours;
    for (size_t r = 0; r < prompts.size(); ++r)
        ours.push_back(hearthGreedy(**loaded, *backend, (*engine)->tokenizer(), prompts[r], nGenerate,
                                    r < static_cast<size_t>(nLogitRuns) ? nLogitPositions : 0));

    const double gapFloor = tolerances_["greedy_gap_floor"].toObject()["value"].toDouble();
    const RunComparison hearth = compareRuns(ours, reference, gapFloor);
    const RunComparison self = compareRuns(control, reference, gapFloor);
    const QByteArray tag = QTest::currentDataTag();
    const size_t n = prompts.size();
    qInfo("| model, type | metric | hearth vs oracle | oracle FA off vs on | limit |");
    const double absLimit = std::max(tolerances_["logits_max_abs"].toObject()[type].toObject()["value"].toDouble(),
                                     tolerances_["control_factor"].toObject()["value"].toDouble() * self.logits.maxAbs);
    const double cosLimit = std::min(
        tolerances_["logits_min_cosine"].toObject()["value"].toDouble(),
        1.0 - tolerances_["cosine_control_factor"].toObject()["value"].toDouble() * (1.0 - self.logits.minCosine));
    const double nearTieFactor = tolerances_["near_tie_control_factor"].toObject()["value"].toDouble();
    const size_t allowedNearTies =
        std::max<size_t>(static_cast<size_t>(tolerances_["max_divergent_prompts"].toObject()["value"].toInt()) * n / 20,
                         static_cast<size_t>(std::ceil(nearTieFactor * static_cast<double>(self.nearTies.size()))));
    qInfo("| %s | greedy runs identical (%d tokens) | %zu of %zu | %zu of %zu | |", tag.constData(), nGenerate,
          hearth.nIdentical, n, self.nIdentical, n);
    qInfo("| %s | near-tie divergences | %zu | %zu | <= %zu |", tag.constData(),
          static_cast<size_t>(hearth.nearTies.size()), static_cast<size_t>(self.nearTies.size()), allowedNearTies);
    qInfo("| %s | logits max abs difference | %.4f (%d positions) | %.4f | <= %.4f |", tag.constData(),
          hearth.logits.maxAbs, hearth.logits.nPositions, self.logits.maxAbs, absLimit);
    qInfo("| %s | logits min cosine similarity | %.6f | %.6f | >= %.6f |", tag.constData(), hearth.logits.minCosine,
          self.logits.minCosine, cosLimit);
    for (const QString& d : hearth.nearTies) qInfo("  hearth near tie: %s", qPrintable(d));
    QVERIFY2(hearth.logits.maxAbs <= absLimit, "logits differ more than the tolerance");
    QVERIFY2(hearth.logits.minCosine >= cosLimit, "logits cosine below the tolerance");
    QVERIFY2(hearth.failures.isEmpty(), qPrintable(hearth.failures.join("\n")));
    QVERIFY2(static_cast<size_t>(hearth.nearTies.size()) <= allowedNearTies, qPrintable(hearth.nearTies.join("\n")));
}

QTEST_GUILESS_MAIN(TestConformanceGeneration)
#include "test_conformance_generation.moc"
