// Resource limits: a GGUF asking for a context of 2^31, a vocabulary of 2^32, a tensor of 2^60 or an
// array of 2^40 elements is refused with a clear error before allocating (trying would abort the
// test: bad_alloc or an ASan report); the engine's KV memory follows the configured context.
#include <QTemporaryDir>
#include <QTest>

#include <functional>
#include <limits>

#include "engine/engine.h"
#include "engine/model/gguf.h"
#include "engine/model/model.h"
#include "engine/tokenizer/tokenizer.h"
#include "tests/support/tiny_llama.h"

using namespace hearth;

namespace {

constexpr uint64_t k2p31 = uint64_t{1} << 31;
constexpr uint64_t k2p32 = uint64_t{1} << 32;
constexpr uint64_t k2p40 = uint64_t{1} << 40;

void putU64(std::vector<uint8_t>& b, uint64_t at, uint64_t v) {
    for (int i = 0; i < 8; ++i) b.at(at + i) = static_cast<uint8_t>(v >> (8 * i));
}

// The position of key among the written key/value pairs (the writer keeps first-set order).
size_t keyIndex(const GgufWriter& w, const std::string& key) {
    const GgufImage image = w.toBytes();
    size_t i = 0;
    for (const auto& kv : image.layout.kvs) {
        const uint64_t len = image.bytes[kv.keyAt] | uint64_t{image.bytes[kv.keyAt + 1]} << 8;
        if (std::string(reinterpret_cast<const char*>(&image.bytes[kv.keyAt + 8]), len) == key) return i;
        ++i;
    }
    return SIZE_MAX;
}

// The error of reading the image and loading a model (and its tokenizer) from it; nullopt if
// everything loaded.
std::optional<Error> loadError(const std::vector<uint8_t>& bytes) {
    auto file = GgufFile::fromBytes(bytes);
    if (!file) return file.error();
    auto model = Model::load(**file);
    if (!model) return model.error();
    auto tokenizer = Tokenizer::fromGguf(**file);
    if (!tokenizer) return tokenizer.error();
    return std::nullopt;
}

bool refused(const std::vector<uint8_t>& bytes, std::initializer_list<std::string> fragments,
             ErrorCode code = ErrorCode::InvalidFormat) {
    const std::optional<Error> e = loadError(bytes);
    if (!e) {
        qWarning("loaded, but a refusal was expected");
        return false;
    }
    bool ok = e->code == code && e->message.find('\n') == std::string::npos;
    for (const std::string& f : fragments) ok = ok && e->message.find(f) != std::string::npos;
    if (!ok) qWarning("unexpected error (code %d): %s", static_cast<int>(e->code), e->message.c_str());
    return ok;
}

}  // namespace

class TestResourceLimits : public QObject {
    Q_OBJECT
private slots:
    void theTinyModelLoads() { QVERIFY(!loadError(test::tinyLlama().toBytes().bytes).has_value()); }

    void refusesAContextOf2p31() {
        GgufWriter w = test::tinyLlama();
        w.set("llama.context_length", k2p31);
        QVERIFY(refused(w.toBytes().bytes, {"llama.context_length = 2147483648 is out of range"}));
        w.set("llama.context_length", uint32_t{0});
        QVERIFY(refused(w.toBytes().bytes, {"llama.context_length = 0 is out of range"}));
    }

    void refusesAVocabularyOf2p32() {
        // As a hyperparameter...
        GgufWriter w = test::tinyLlama();
        w.set("llama.vocab_size", k2p32);
        QVERIFY(refused(w.toBytes().bytes, {"llama.vocab_size = 4294967296 is out of range"}));
        // ... as the count of the token array (the reader bounds it by the bytes left) ...
        const GgufWriter tiny = test::tinyLlama();
        GgufImage image = tiny.toBytes();
        const size_t tokens = keyIndex(tiny, "tokenizer.ggml.tokens");
        QVERIFY(tokens != SIZE_MAX);
        putU64(image.bytes, image.layout.kvs[tokens].valueAt + 4, k2p32);
        QVERIFY(refused(image.bytes, {"'tokenizer.ggml.tokens' array count 4294967296", "exceeds the file"}));
        // ... and as the embedding's row count (its bytes cannot be in the file).
        image = tiny.toBytes();
        putU64(image.bytes, image.layout.tensorInfos[0].dimsAt + 8, k2p32);
        QVERIFY(refused(image.bytes, {"tensor #0 'token_embd.weight'", "past the end of the file"}));
    }

    void refusesATensorOf2p60Elements() {
        for (const std::vector<uint64_t>& dims : std::vector<std::vector<uint64_t>>{
                 {uint64_t{1} << 60}, {uint64_t{1} << 30, uint64_t{1} << 30}, {1 << 20, 1 << 20, 1 << 20}}) {
            GgufWriter w = test::tinyLlama();
            w.addTensor(GgufTensorSpec{"huge", dims, static_cast<uint32_t>(DType::Q4_0), std::vector<uint8_t>(18), {}});
            QVERIFY(refused(w.toBytes().bytes, {"tensor #", "'huge'", "past the end of the file"}));
        }
        // 2^60 F32 elements: 2^62 bytes; 2^64 and more overflow and are refused as such.
        GgufWriter w = test::tinyLlama();
        w.addTensor(GgufTensorSpec{"huge", {uint64_t{1} << 62}, static_cast<uint32_t>(DType::F32), {}, {}});
        QVERIFY(refused(w.toBytes().bytes, {"'huge' type F32", "overflow"}));
    }

    void refusesAnArrayOf2p40Elements() {
        const GgufWriter tiny = test::tinyLlama();
        for (const char* key : {"tokenizer.ggml.scores", "tokenizer.ggml.token_type"}) {
            GgufImage image = tiny.toBytes();
            const size_t index = keyIndex(tiny, key);
            QVERIFY(index != SIZE_MAX);
            putU64(image.bytes, image.layout.kvs[index].valueAt + 4, k2p40);
            QVERIFY(refused(image.bytes, {std::string("'") + key + "' array count 1099511627776", "exceeds the file"}));
        }
    }

    void refusesAbsurdLayerAndHeadCounts() {
        for (const char* key : {"llama.block_count", "llama.attention.head_count", "llama.embedding_length",
                                "llama.feed_forward_length"}) {
            GgufWriter w = test::tinyLlama();
            w.set(key, k2p31);
            QVERIFY(refused(w.toBytes().bytes, {std::string(key) + " = 2147483648 is out of range"}));
        }
    }

    // A model that claims the largest context Hearth reads (2^24): the engine's KV cache holds
    // only the context the user asked for, and a reply ends when that is full.
    void kvMemoryIsBoundedByTheConfiguredContext() {
        QTemporaryDir dir;
        test::TinyLlamaShape shape;
        shape.context = 1 << 24;
        const std::string path = dir.filePath("tiny.gguf").toStdString();
        QVERIFY(test::tinyLlama(shape).writeFile(path).has_value());
        EngineOptions options;
        options.contextLength = 64;
        auto engine = Engine::load(path, options);
        QVERIFY2(engine.has_value(), engine ? "" : engine.error().message.c_str());
        Engine& e = **engine;
        QCOMPARE(e.contextLength(), 64);
        QCOMPARE(e.metrics().blocksTotal, 64 / options.kvBlockSize);
        GenerateRequest request;
        request.prompt = e.rawPrompt("the cat");
        request.maxTokens = 1000;
        request.sampling.logitBias = {{2, -std::numeric_limits<float>::infinity()}};  // no </s>
        auto result = e.generate(request, [](TokenId, std::string_view) { return true; });
        QVERIFY(result.has_value());
        QCOMPARE(result->finishReason, FinishReason::Context);
        QVERIFY(request.prompt.size() + result->tokens.size() <= 64);
        QCOMPARE(e.metrics().blocksTotal, 4);
        // A prompt longer than the configured context is refused, not grown into.
        request.prompt.assign(64, 3);
        QCOMPARE(e.submit(request).error().code, ErrorCode::InvalidArgument);
        // Asking for more than the model's context gives the model's.
        options.contextLength = std::numeric_limits<int32_t>::max();
        shape.context = 256;
        QVERIFY(test::tinyLlama(shape).writeFile(path).has_value());
        auto capped = Engine::load(path, options);
        QVERIFY(capped.has_value());
        QCOMPARE((*capped)->contextLength(), 256);
    }
};

QTEST_APPLESS_MAIN(TestResourceLimits)
#include "test_resource_limits.moc"
