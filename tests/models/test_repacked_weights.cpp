// The CPU backend's repacked weights (Backend::packWeight, Model::packWeights) through a whole
// K-quant model: Gemma 3 270M Q4_K_M (Q4_K, Q6_K and Q8_0 matrices: Q/K/V, gate/up, the
// output matrix tied to the token embedding). Its logits with every matrix repacked are bitwise
// those with the file's layout (HEARTH_REPACK=0's), after a prefill (the panels built from the
// packed copy), token-by-token decode (the packed matrix-vector tiles, Q/K/V and gate/up through
// matmulMany) and chunks of 2 and 3 tokens (small batches); the tied table's embedding rows come
// back from the packed copy. For the AVX2 sums and, where the CPU has them, the AVX-VNNI ones.
#include <QtTest>

#include <cstring>
#include <optional>
#include <random>
#include <set>

#include "engine/model/gguf.h"
#include "engine/model/model.h"
#include "kernels/cpu/avx2/backend_avx2.h"
#include "kernels/cpu/cpu_features.h"
#include "tests/support/scoped_env.h"
#include "tests/support/test_env.h"

using namespace hearth;
using namespace hearth::test;

namespace {

constexpr int kPromptTokens = 40;

bool repackable(DType t) {
    switch (t) {
    case DType::Q4_0:
    case DType::Q4_1:
    case DType::Q5_0:
    case DType::Q5_1:
    case DType::Q8_0:
    case DType::Q4_K:
    case DType::Q5_K:
    case DType::Q6_K: return true;
    default: return false;
    }
}

}  // namespace

class TestRepackedWeights : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void logitsAreBitwiseFileLayout_data();
    void logitsAreBitwiseFileLayout();

private:
    // The logits after each step of one fixed schedule: a prefill, 4 decode steps, a chunk of
    // 2, a chunk of 3 and a last decode step, concatenated.
    std::vector<float> stepLogits(Model& model, Backend& backend);

    std::unique_ptr<GgufFile> file_;
    std::unique_ptr<Model> plain_, packed_;
    size_t packedBytes_ = 0;
    std::vector<int32_t> tokens_;
};

void TestRepackedWeights::initTestCase() {
    if (!cpuFeatures().canRunAvx2()) QSKIP("this CPU (or OS) lacks AVX2, FMA or F16C");
    if (qEnvironmentVariable("HEARTH_REPACK") == QLatin1String("0")) QSKIP("HEARTH_REPACK=0: nothing is repacked");
    const QString path = modelFile("gemma-3-270m-q4_k_m.gguf");
    HEARTH_REQUIRE_FILE(path);
    auto file = GgufFile::open(path.toStdString());
    QVERIFY2(file, file ? "" : file.error().message.c_str());
    file_ = std::move(*file);
    auto plain = Model::load(*file_);
    QVERIFY2(plain, plain ? "" : plain.error().message.c_str());
    plain_ = std::move(*plain);
    auto packed = Model::load(*file_);
    QVERIFY2(packed, packed ? "" : packed.error().message.c_str());
    packed_ = std::move(*packed);
    // The second model's matrices repacked (the file's pages of each released: the first model
    // reads them back from the file).
    auto packer = makeCpuAvx2Backend(2);
    packedBytes_ = packed_->packWeights(*packer);
    std::set<std::string> types;
    size_t want = 0;  // every quantized matrix (the token embedding as the tied output)
    for (const GgufTensorInfo& t : file_->tensors())
        if (repackable(t.type)) {
            want += t.nBytes;
            types.insert(dtypeInfo(t.type).name);
        }
    QString names;
    for (const std::string& n : types) names += QString::fromStdString(n) + ' ';
    qInfo("repacked %zu bytes of matrices of types %s", packedBytes_, qPrintable(names));
    QVERIFY(types.count("Q4_K") && types.count("Q6_K"));
    QCOMPARE(packedBytes_, want);
    std::mt19937 rng(23);
    std::uniform_int_distribution<int32_t> id(3, plain_->config().nVocab - 1);
    tokens_.push_back(2);  // BOS
    while (tokens_.size() < kPromptTokens + 4 + 2 + 3 + 1) tokens_.push_back(id(rng));
}

std::vector<float> TestRepackedWeights::stepLogits(Model& model, Backend& backend) {
    KvCache cache(model.kvLayout(16), 256);
    KvSequence seq;
    const size_t nVocab = static_cast<size_t>(model.config().nVocab);
    std::vector<float> all;
    std::vector<float> logits(nVocab);
    size_t begin = 0;
    for (size_t n :
         {size_t{kPromptTokens}, size_t{1}, size_t{1}, size_t{1}, size_t{1}, size_t{2}, size_t{3}, size_t{1}}) {
        auto r = model.forward(backend, cache, seq, std::span(tokens_).subspan(begin, n), logits);
        if (!r) {
            qWarning("forward failed: %s", r.error().message.c_str());
            return {};
        }
        all.insert(all.end(), logits.begin(), logits.end());
        begin += n;
    }
    return all;
}

void TestRepackedWeights::logitsAreBitwiseFileLayout_data() {
    QTest::addColumn<bool>("avxVnni");
    QTest::newRow("avx2") << false;
    QTest::newRow("avx-vnni") << true;
}

void TestRepackedWeights::logitsAreBitwiseFileLayout() {
    QFETCH(bool, avxVnni);
    if (avxVnni && !cpuFeatures().canRunVnni()) QSKIP("this CPU lacks AVX-VNNI and AVX512_VNNI");
    // The backend reads HEARTH_CPU when it is made: avx2 keeps the AVX-VNNI sums off.
    std::unique_ptr<Backend> backend;
    {
        const ScopedEnv cpu("HEARTH_CPU", avxVnni ? std::optional<QByteArray>() : QByteArray("avx2"));
        backend = makeCpuAvx2Backend(2);
    }
    const std::vector<float> want = stepLogits(*plain_, *backend);
    const std::vector<float> got = stepLogits(*packed_, *backend);
    QVERIFY(!want.empty());
    QCOMPARE(got.size(), want.size());
    const size_t nVocab = static_cast<size_t>(plain_->config().nVocab);
    for (size_t i = 0; i < want.size(); ++i)
        if (std::memcmp(&got[i], &want[i], sizeof(float)) != 0)
            QFAIL(qPrintable(QStringLiteral("step %1, logit %2: %3 repacked, %4 in the file's layout")
                                 .arg(i / nVocab)
                                 .arg(i % nVocab)
                                 .arg(double(got[i]), 0, 'g', 9)
                                 .arg(double(want[i]), 0, 'g', 9)));
}

QTEST_APPLESS_MAIN(TestRepackedWeights)
#include "test_repacked_weights.moc"
