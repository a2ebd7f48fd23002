// The GGUF reader's long metadata arrays (GgufArray::inPlace): arrays of scalars or strings past
// GgufArray::kMaxItemsCopied elements stay in the file, are read back element for element as the
// copied ones are, are written back unchanged, and are validated as strictly (bad bools, string
// lengths past the end, truncation anywhere) with the same one-line errors.
#include <QTest>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "engine/model/gguf.h"
#include "engine/model/gguf_writer.h"
#include "engine/tokenizer/vocab_spec.h"

using namespace hearth;

namespace {

constexpr uint64_t kLong = GgufArray::kMaxItemsCopied + 1;

std::vector<std::string> pieceTexts(size_t n) {
    std::vector<std::string> out;
    for (size_t i = 0; i < n; ++i)
        out.push_back(i % 97 == 0 ? std::string()
                                  : std::string(i % 13 + (i == 5 ? 300 : 0), char('a' + i % 26)) + std::to_string(i));
    return out;
}

GgufWriter longArrays(size_t n) {
    GgufWriter w;
    w.set("general.architecture", "llama");
    w.set("tokenizer.ggml.model", "llama");
    w.set("tokenizer.ggml.tokens", pieceTexts(n));
    std::vector<float> scores(n);
    std::vector<int32_t> types(n);
    std::vector<bool> flags(n);
    std::vector<int16_t> shorts(n);
    for (size_t i = 0; i < n; ++i) {
        scores[i] = -0.25f * static_cast<float>(i) + (i == 7 ? -0.0f : 1e-30f);
        types[i] = static_cast<int32_t>(i % 6 + 1);
        flags[i] = i % 3 == 0;
        shorts[i] = static_cast<int16_t>(i * 977 - 32768);
    }
    w.set("tokenizer.ggml.scores", scores);
    w.set("tokenizer.ggml.token_type", types);
    w.set("test.flags", flags);
    w.set("test.shorts", shorts);
    w.set("test.u64", std::vector<uint64_t>(n, ~uint64_t{0}));
    return w;
}

// Offset of the first element of the array under `key` (after key, value type, element type, count).
size_t firstElementAt(const std::vector<uint8_t>& bytes, const std::string& key) {
    const auto it = std::search(bytes.begin(), bytes.end(), key.begin(), key.end());
    return static_cast<size_t>(it - bytes.begin()) + key.size() + 4 + 4 + 8;
}

bool failsWith(const std::vector<uint8_t>& bytes, std::initializer_list<std::string> fragments) {
    const auto file = GgufFile::fromBytes(bytes);
    if (file) return false;
    const std::string& msg = file.error().message;
    bool ok = msg.rfind("GGUF: ", 0) == 0 && msg.find('\n') == std::string::npos;
    for (const std::string& f : fragments) ok = ok && msg.find(f) != std::string::npos;
    if (!ok) qWarning("unexpected error: %s", msg.c_str());
    return ok;
}

}  // namespace

class TestGgufInPlace : public QObject {
    Q_OBJECT
private slots:
    void longArraysStayInTheFile();
    void theyReadAsCopiedArraysDo();
    void theyWriteBackUnchanged();
    void theVocabularyReadsFromThem();
    void rejectsABadBool();
    void rejectsAStringPastTheEnd();
    void failsCleanlyWhenCutAnywhere();
};

void TestGgufInPlace::longArraysStayInTheFile() {
    const GgufImage image = longArrays(kLong).toBytes();
    const auto file = GgufFile::fromBytes(image.bytes);
    QVERIFY2(file, file ? "" : file.error().message.c_str());
    for (const char* key : {"tokenizer.ggml.tokens", "tokenizer.ggml.scores", "test.flags", "test.shorts"}) {
        const GgufArray* a = (*file)->find(key)->asArray();
        QVERIFY(a);
        QVERIFY(a->items.empty());
        QCOMPARE(a->size(), kLong);
        QCOMPARE(a->inPlace.count, kLong);
        // The view lies inside the image: nothing was copied.
        QVERIFY(a->inPlace.bytes.data() >= image.bytes.data());
        QVERIFY(a->inPlace.bytes.data() + a->inPlace.bytes.size() <= image.bytes.data() + image.bytes.size());
    }
    // One element fewer: copied as before.
    const GgufImage shorter = longArrays(kLong - 1).toBytes();
    const auto copied = GgufFile::fromBytes(shorter.bytes);
    QVERIFY(copied);
    QCOMPARE((*copied)->find("tokenizer.ggml.tokens")->asArray()->items.size(), size_t{kLong - 1});
}

void TestGgufInPlace::theyReadAsCopiedArraysDo() {
    const size_t n = 3000;
    const GgufImage image = longArrays(n).toBytes();
    const auto file = GgufFile::fromBytes(image.bytes);
    QVERIFY(file);
    const GgufFile& f = **file;
    const std::vector<std::string> texts = pieceTexts(n);
    const GgufArray* tokens = f.find("tokenizer.ggml.tokens")->asArray();
    for (size_t i = 0; i < n; ++i) {
        QCOMPARE(tokens->stringAt(i), std::string_view(texts[i]));
        QCOMPARE(*tokens->item(i).asString(), texts[i]);
    }
    const GgufArray* scores = f.find("tokenizer.ggml.scores")->asArray();
    QCOMPARE(scores->elemType, GgufType::F32);
    QCOMPARE(*scores->item(4).asFloat(), double(-1.0f + 1e-30f));
    QVERIFY(std::signbit(*scores->item(7).asFloat()) == std::signbit(-1.75f));
    QCOMPARE(scores->stringAt(4), std::string_view());  // not a string array
    QCOMPARE(*f.find("tokenizer.ggml.token_type")->asArray()->item(2999).asInt(), int64_t{2999 % 6 + 1});
    QCOMPARE(*f.find("test.flags")->asArray()->item(2997).asBool(), true);
    QCOMPARE(*f.find("test.flags")->asArray()->item(2998).asBool(), false);
    QCOMPARE(*f.find("test.shorts")->asArray()->item(1).asInt(), int64_t{int16_t(977 - 32768)});
    QCOMPARE(f.find("test.shorts")->asArray()->item(0).type, GgufType::I16);
    QCOMPARE(*f.find("test.u64")->asArray()->item(2500).asUInt(), ~uint64_t{0});
}

void TestGgufInPlace::theyWriteBackUnchanged() {
    const GgufImage image = longArrays(2000).toBytes();
    const auto file = GgufFile::fromBytes(image.bytes);
    QVERIFY(file);
    GgufWriter copy;
    for (const char* key :
         {"general.architecture", "tokenizer.ggml.model", "tokenizer.ggml.tokens", "tokenizer.ggml.scores",
          "tokenizer.ggml.token_type", "test.flags", "test.shorts", "test.u64"})
        copy.setValue(key, *(*file)->find(key));
    QVERIFY(copy.toBytes().bytes == image.bytes);
}

void TestGgufInPlace::theVocabularyReadsFromThem() {
    const size_t n = 2000;
    const GgufImage image = longArrays(n).toBytes();
    const auto file = GgufFile::fromBytes(image.bytes);
    QVERIFY(file);
    const auto vocab = readVocabSpec(**file);
    QVERIFY2(vocab, vocab ? "" : vocab.error().message.c_str());
    QVERIFY(vocab->tokens == pieceTexts(n));
    QCOMPARE(vocab->scores.size(), n);
    QCOMPARE(vocab->scores[9], -0.25f * 9 + 1e-30f);
    QCOMPARE(vocab->tokenTypes[1999], int32_t{1999 % 6 + 1});
}

void TestGgufInPlace::rejectsABadBool() {
    std::vector<uint8_t> bytes = longArrays(2000).toBytes().bytes;
    bytes.at(firstElementAt(bytes, "test.flags") + 1500) = 2;
    QVERIFY(failsWith(bytes, {"metadata 'test.flags'[1500] bool 2", "is neither 0 nor 1"}));
}

void TestGgufInPlace::rejectsAStringPastTheEnd() {
    std::vector<uint8_t> bytes = longArrays(2000).toBytes().bytes;
    const size_t at = firstElementAt(bytes, "tokenizer.ggml.tokens");  // element 0's length
    const uint64_t huge = uint64_t{1} << 40;
    std::memcpy(bytes.data() + at, &huge, sizeof huge);
    QVERIFY(failsWith(bytes, {"metadata 'tokenizer.ggml.tokens'[0] string length 1099511627776", "exceeds the file"}));
}

void TestGgufInPlace::failsCleanlyWhenCutAnywhere() {
    const std::vector<uint8_t> bytes = longArrays(kLong).toBytes().bytes;
    const size_t tokens = firstElementAt(bytes, "tokenizer.ggml.tokens");
    const size_t flags = firstElementAt(bytes, "test.flags");
    const size_t lastEnd = firstElementAt(bytes, "test.u64") + kLong * 8;  // the last metadata byte + 1
    for (size_t cut : {tokens, tokens + 5, tokens + 9, tokens + 4000, flags, flags + 1000, lastEnd - 1}) {
        const std::vector<uint8_t> part(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(cut));
        const auto file = GgufFile::fromBytes(part);
        QVERIFY(!file);
        QVERIFY(file.error().message.rfind("GGUF: ", 0) == 0);
    }
}

QTEST_GUILESS_MAIN(TestGgufInPlace)
#include "test_gguf_in_place.moc"
