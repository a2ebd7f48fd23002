// Split GGUF models (engine/model/gguf_split.h): a tiny Llama written by the test and split at
// tensor boundaries as llama.cpp's gguf-split does loads as one model and gives the same greedy
// tokens as the unsplit file; its fingerprint covers every part; a missing, truncated, renamed or
// misplaced part is a clear error naming the part. Built a second time with
// HEARTH_SPLIT_REAL_MODELS (test_gguf_split_models): the fetched SmolLM2 and Gemma 3 files split
// in four give the whole files' greedy tokens.
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>
#include <filesystem>
#include <limits>
#include <set>

#include "engine/engine.h"
#include "engine/model/gguf_split.h"
#include "tests/support/split_gguf.h"
#include "tests/support/test_env.h"
#include "tests/support/tiny_llama.h"

using namespace hearth;

namespace {

std::vector<TokenId> greedyTokens(const std::string& path, std::string* fingerprint = nullptr) {
    auto engine = Engine::load(path, {});
    if (!engine) {
        qWarning("%s", engine.error().message.c_str());
        return {};
    }
    if (fingerprint) *fingerprint = (*engine)->kvRoot().fingerprint;
    GenerateRequest req;
    req.prompt = (*engine)->rawPrompt("the cat sat on a mat at the");
    req.maxTokens = 24;
    req.sampling.temperature = 0;
    req.sampling.logitBias.push_back({2, -std::numeric_limits<float>::infinity()});  // no </s>: full length
    auto result = (*engine)->generate(req, [](TokenId, std::string_view) { return true; });
    return result ? result->tokens : std::vector<TokenId>{};
}

bool copyBytes(const std::string& from, const std::string& to, qint64 keep = -1) {
    QFile in(QString::fromStdString(from));
    if (!in.open(QIODevice::ReadOnly)) return false;
    QByteArray bytes = in.readAll();
    if (keep >= 0) bytes.truncate(keep);
    QFile out(QString::fromStdString(to));
    return out.open(QIODevice::WriteOnly | QIODevice::Truncate) && out.write(bytes) == bytes.size();
}

}  // namespace

class TestGgufSplit : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        test::TinyLlamaShape shape;
        shape.weightType = DType::Q8_0;
        whole_ = dir_.filePath("tiny.gguf").toStdString();
        QVERIFY(test::tinyLlama(shape).writeFile(whole_));
        auto file = GgufFile::open(whole_);
        QVERIFY(file);
        parts_ = test::writeSplit(**file, dir_.filePath("tiny").toStdString(), 3);
        QCOMPARE(parts_.size(), size_t{3});
    }

    void namesTheParts() {
        const auto name = parseGgufSplitName("/m/Qwen3-8B-Q4_K_M-00002-of-00003.gguf");
        QVERIFY(name);
        QCOMPARE(name->prefix, std::string("/m/Qwen3-8B-Q4_K_M"));
        QCOMPARE(name->index, 2);
        QCOMPARE(name->count, 3);
        QCOMPARE(ggufSplitPath(name->prefix, 3, 3), std::string("/m/Qwen3-8B-Q4_K_M-00003-of-00003.gguf"));
        for (const char* notSplit : {"/m/model.gguf", "/m/x-00004-of-00003.gguf", "/m/x-00000-of-00003.gguf",
                                     "/m/x-0001-of-00003.gguf", "/m/x-00001-of-00003.bin", "-00001-of-00003.gguf"})
            QVERIFY2(!parseGgufSplitName(notSplit) || std::string_view(notSplit) == "-00001-of-00003.gguf", notSplit);
        QCOMPARE(ggufModelFiles("/m/model.gguf"), std::vector<std::string>{"/m/model.gguf"});
        QCOMPARE(ggufModelFiles(parts_[0]), parts_);
        QCOMPARE(ggufModelFiles(parts_[1]), std::vector<std::string>{parts_[1]});  // only the first names all
    }

    // Every tensor of the whole file is found, with the same bytes, in the part that holds it.
    void opensAsOneFile() {
        auto whole = GgufFile::open(whole_);
        auto split = GgufFile::open(parts_[0]);
        QVERIFY2(split, split ? "" : split.error().message.c_str());
        QCOMPARE((*split)->partPaths(), parts_);
        QCOMPARE((*split)->tensors().size(), (*whole)->tensors().size());
        std::set<uint32_t> partsUsed;
        for (const GgufTensorInfo& t : (*whole)->tensors()) {
            const GgufTensorInfo* s = (*split)->findTensor(t.name);
            QVERIFY2(s, t.name.c_str());
            partsUsed.insert(s->part);
            QCOMPARE(s->dims, t.dims);
            const auto a = (*whole)->tensorData(t), b = (*split)->tensorData(*s);
            QVERIFY(!b.empty());
            QVERIFY2(std::equal(a.begin(), a.end(), b.begin(), b.end()), t.name.c_str());
        }
        QCOMPARE(partsUsed, (std::set<uint32_t>{0, 1, 2}));
        uint64_t total = 0;
        for (const std::string& p : parts_) total += std::filesystem::file_size(p);
        QCOMPARE((*split)->modelBytes(), total);
        QCOMPARE((*whole)->partPaths(), std::vector<std::string>{whole_});
    }

    void sameGreedyTokensAsTheWholeFile() {
        std::string wholeFp, splitFp;
        const auto expected = greedyTokens(whole_, &wholeFp);
        const auto got = greedyTokens(parts_[0], &splitFp);
        QCOMPARE(expected.size(), size_t{24});
        QCOMPARE(got, expected);
        // KV identity: the split model is not the whole file's, and its fingerprint is of all parts.
        QVERIFY(splitFp != wholeFp);
        QCOMPARE(splitFp, fingerprintHex(*fingerprintModel(parts_[0])));
        QCOMPARE(wholeFp, fingerprintHex(*fingerprintFile(whole_)));
        QCOMPARE(fingerprintHex(*fingerprintModel(whole_)), wholeFp);  // one file: unchanged
    }

    // A change to the last part alone changes the model's fingerprint; a missing part fails.
    void fingerprintCoversEveryPart() {
        QTemporaryDir dir;
        const std::string prefix = dir.filePath("m").toStdString();
        std::vector<std::string> copy;
        for (int i = 1; i <= 3; ++i) {
            copy.push_back(ggufSplitPath(prefix, i, 3));
            QVERIFY(copyBytes(parts_[i - 1], copy.back()));
        }
        const auto before = fingerprintModel(copy[0]);
        QVERIFY(before);
        QCOMPARE(*before, *fingerprintModel(parts_[0]));
        const auto stamp = modelStamp(copy[0]);
        QVERIFY(stamp);
        QCOMPARE(stamp->size,
                 std::filesystem::file_size(copy[0]) + std::filesystem::file_size(copy[1]) +
                     std::filesystem::file_size(copy[2]));
        QFile last(QString::fromStdString(copy[2]));
        QVERIFY(last.open(QIODevice::ReadWrite));
        QVERIFY(last.seek(last.size() - 1));
        const char flipped = static_cast<char>(last.peek(1).at(0) ^ 1);
        QVERIFY(last.write(&flipped, 1) == 1);
        last.close();
        QVERIFY(*fingerprintModel(copy[0]) != *before);
        std::filesystem::remove(copy[1]);
        QVERIFY(!modelStamp(copy[0]));
        QVERIFY(!fingerprintModel(copy[0]));
    }

    void badPartsAreClearErrors_data() {
        QTest::addColumn<QString>("damage");
        QTest::addColumn<QString>("message");
        QTest::newRow("missing part") << "missing"
                                      << "GGUF: split model 'm-00001-of-00003.gguf': part 2 of 3 "
                                         "('m-00002-of-00003.gguf') is missing; every part must be in the same folder";
        QTest::newRow("truncated part") << "truncated"
                                        << "GGUF: split model 'm-00001-of-00003.gguf': part 3 of 3 "
                                           "('m-00003-of-00003.gguf'): GGUF: tensor";
        QTest::newRow("parts swapped") << "swapped"
                                       << "part 2 of 3 ('m-00002-of-00003.gguf') does not say it is that part";
        QTest::newRow("a later part opened") << "later"
                                             << "GGUF: 'm-00002-of-00003.gguf' is part 2 of 3 of a split model; "
                                                "open m-00001-of-00003.gguf";
        QTest::newRow("first part renamed") << "renamed"
                                            << "GGUF: 'm.gguf' is the first of 3 parts of a split model, but its name "
                                               "does not end in -00001-of-00003.gguf";
    }
    void badPartsAreClearErrors() {
        QFETCH(QString, damage);
        QFETCH(QString, message);
        QTemporaryDir dir;
        const std::string prefix = dir.filePath("m").toStdString();
        std::vector<std::string> copy;
        for (int i = 1; i <= 3; ++i) copy.push_back(ggufSplitPath(prefix, i, 3));
        QVERIFY(copyBytes(parts_[0], copy[0]));
        if (damage != "missing") QVERIFY(copyBytes(parts_[damage == "swapped" ? 2 : 1], copy[1]));
        const qint64 keep = damage == "truncated" ? static_cast<qint64>(std::filesystem::file_size(parts_[2])) - 7 : -1;
        QVERIFY(copyBytes(parts_[damage == "swapped" ? 1 : 2], copy[2], keep));
        std::string open = copy[0];
        if (damage == "later") open = copy[1];
        if (damage == "renamed") {
            open = dir.filePath("m.gguf").toStdString();
            std::filesystem::rename(copy[0], open);
        }
        auto file = GgufFile::open(open);
        QVERIFY(!file);
        QVERIFY2(QString::fromStdString(file.error().message).contains(message), file.error().message.c_str());
        auto engine = Engine::load(open, {});  // loading says the same, and nothing crashes
        QVERIFY(!engine);
        QCOMPARE(engine.error().message, file.error().message);
    }

    // split.tensors.count is checked against what the parts hold.
    void tensorCountMustAgree() {
        auto whole = GgufFile::open(whole_);
        QTemporaryDir dir;
        const auto paths = test::writeSplit(**whole, dir.filePath("c").toStdString(), 2);
        QCOMPARE(paths.size(), size_t{2});
        auto first = GgufFile::open(paths[0]);
        QVERIFY(first);
        GgufWriter w;
        for (const auto& [key, value] : (*first)->metadata()) w.setValue(key, value);
        w.set("split.tensors.count", int32_t{5});
        for (const GgufTensorInfo& t : (*first)->tensors())
            if (t.part == 0) {
                const auto bytes = (*first)->tensorData(t);
                w.addTensor(t.name, t.dims, t.type, std::vector<uint8_t>(bytes.begin(), bytes.end()));
            }
        QVERIFY(w.writeFile(paths[0]));
        auto reopened = GgufFile::open(paths[0]);
        QVERIFY(!reopened);
        QVERIFY2(
            reopened.error().message.find("split.tensors.count says 5 tensors, its parts hold 20") != std::string::npos,
            reopened.error().message.c_str());
    }

#ifdef HEARTH_SPLIT_REAL_MODELS
    void realModels_data() {
        QTest::addColumn<QString>("name");
        QTest::newRow("SmolLM2") << "SmolLM2-135M-Instruct.Q4_1.gguf";
        QTest::newRow("Gemma 3") << "gemma-3-270m-q4_k_m.gguf";
    }
    void realModels() {
        QFETCH(QString, name);
        const QString path = test::modelFile(name);
        HEARTH_REQUIRE_FILE(path);
        QTemporaryDir dir;
        auto whole = GgufFile::open(path.toStdString());
        QVERIFY(whole);
        const auto parts = test::writeSplit(**whole, dir.filePath("m").toStdString(), 4);
        QCOMPARE(parts.size(), size_t{4});
        const auto expected = greedyTokens(path.toStdString());
        QCOMPARE(expected.size(), size_t{24});
        QCOMPARE(greedyTokens(parts[0]), expected);
    }
#endif

private:
    QTemporaryDir dir_;
    std::string whole_;
    std::vector<std::string> parts_;
};

QTEST_GUILESS_MAIN(TestGgufSplit)
#include "test_gguf_split.moc"
