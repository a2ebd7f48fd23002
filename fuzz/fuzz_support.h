// Shared by the fuzz targets and make_seeds: a byte reader/writer for structured inputs, the
// tiny synthetic Llama the KV and store targets run (1 layer, KV blocks of 256 bytes) and the
// encoding of KV block records as fuzz input.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "engine/snapshot/kv_snapshot.h"
#include "tests/support/tiny_llama.h"

namespace hearth::fuzz {

// Reads little-endian values; past the end everything reads as zero (never out of bounds).
class ByteReader {
public:
    explicit ByteReader(std::span<const uint8_t> data) : data_(data) {}
    bool done() const { return at_ >= data_.size(); }
    template <class T>
    T get() {
        T v{};
        const size_t n = std::min(sizeof(T), data_.size() - std::min(at_, data_.size()));
        if (n) std::memcpy(&v, data_.data() + at_, n);
        at_ += sizeof(T);
        return v;
    }
    std::span<const uint8_t> bytes(size_t n) {
        const size_t start = std::min(at_, data_.size());
        const size_t take = std::min(n, data_.size() - start);
        at_ += n;
        return data_.subspan(start, take);
    }

private:
    std::span<const uint8_t> data_;
    size_t at_ = 0;
};

class ByteWriter {
public:
    template <class T>
    ByteWriter& put(T v) {
        const auto* p = reinterpret_cast<const uint8_t*>(&v);
        out.insert(out.end(), p, p + sizeof(T));
        return *this;
    }
    ByteWriter& bytes(std::span<const uint8_t> b) {
        out.insert(out.end(), b.begin(), b.end());
        return *this;
    }
    std::vector<uint8_t> out;
};

// The model: KV blocks of 4 tokens x 1 layer x K and V x 16 dims x F16 = 256 bytes.
inline constexpr int32_t kFuzzBlockSize = 4;

inline std::vector<uint8_t> fuzzModelBytes() {
    test::TinyLlamaShape shape;
    shape.nLayers = 1, shape.nEmbd = 32, shape.nHeads = 2, shape.nKvHeads = 1, shape.nFf = 32, shape.context = 64;
    shape.seed = 7;
    return test::tinyLlama(shape).toBytes().bytes;
}

// Writes the model once per process to a temporary file (removed at exit) and returns its path.
inline const std::string& fuzzModelPath() {
    static const std::string path = [] {
        char name[] = "/tmp/hearth-fuzz-model-XXXXXX";
        const int fd = mkstemp(name);
        const std::vector<uint8_t> bytes = fuzzModelBytes();
        if (fd < 0 || write(fd, bytes.data(), bytes.size()) != static_cast<ssize_t>(bytes.size())) std::abort();
        close(fd);
        static std::string keep = name;
        std::atexit([] { unlink(keep.c_str()); });
        return std::string(name);
    }();
    return path;
}

inline std::unique_ptr<Engine> loadFuzzEngine() {
    static const ModelFingerprint fp = fingerprintBytes(fuzzModelBytes());
    EngineOptions o;
    o.contextLength = 64, o.kvBlockSize = kFuzzBlockSize, o.nThreads = 1, o.modelFingerprint = fp;
    auto engine = Engine::load(fuzzModelPath(), o);
    if (!engine) {
        std::fprintf(stderr, "fuzz: cannot load the tiny model: %s\n", engine.error().message.c_str());
        std::abort();
    }
    return std::move(*engine);
}

// KV import input. flags: kFixKeys recomputes every record's parent and key from the chain
// (so that mutated tokens, positions and data reach the later checks), kFixChecksums recomputes
// checksums, kEngineRoot uses the engine's own root as the saved one, kGenerate continues the
// conversation after the import. Then the conversation's tokens, then the records.
enum KvInputFlags : uint8_t { kFixKeys = 1, kFixChecksums = 2, kEngineRoot = 4, kGenerate = 8 };

struct KvImportInput {
    uint8_t flags = 0;
    BlockKey savedRootKey{};
    uint32_t numericsVersion = 0;
    std::vector<int32_t> conversation;
    std::vector<KvBlockRecord> records;
};

inline std::vector<uint8_t> encodeKvInput(const KvImportInput& in) {
    ByteWriter w;
    w.put(in.flags).bytes(in.savedRootKey).put(in.numericsVersion);
    w.put(static_cast<uint8_t>(in.conversation.size()));
    for (int32_t t : in.conversation) w.put(t);
    w.put(static_cast<uint8_t>(in.records.size()));
    for (const KvBlockRecord& r : in.records) {
        w.put(r.position).put(static_cast<uint8_t>(r.tokens.size()));
        for (int32_t t : r.tokens) w.put(t);
        w.put(static_cast<uint16_t>(r.data.size())).bytes(r.data).put(r.checksum).bytes(r.key).bytes(r.parent);
    }
    return w.out;
}

inline KvImportInput decodeKvInput(std::span<const uint8_t> data) {
    ByteReader r(data);
    KvImportInput in;
    in.flags = r.get<uint8_t>();
    for (uint8_t& b : in.savedRootKey) b = r.get<uint8_t>();
    in.numericsVersion = r.get<uint32_t>();
    in.conversation.resize(r.get<uint8_t>());
    for (int32_t& t : in.conversation) t = r.get<int32_t>();
    const uint8_t n = r.get<uint8_t>();
    for (uint8_t i = 0; i < n && !r.done(); ++i) {
        KvBlockRecord rec;
        rec.position = r.get<int32_t>();
        rec.tokens.resize(r.get<uint8_t>());
        for (int32_t& t : rec.tokens) t = r.get<int32_t>();
        const std::span<const uint8_t> bytes = r.bytes(r.get<uint16_t>());
        rec.data.assign(bytes.begin(), bytes.end());
        rec.checksum = r.get<uint64_t>();
        for (uint8_t& b : rec.key) b = r.get<uint8_t>();
        for (uint8_t& b : rec.parent) b = r.get<uint8_t>();
        in.records.push_back(std::move(rec));
    }
    return in;
}

// The conversation make_seeds and the store target save: a prompt of 9 tokens and 7 generated
// by greedy decoding, 16 tokens = 4 whole blocks.
inline std::vector<int32_t> fuzzConversation(Engine& engine) {
    GenerateRequest req;
    req.prompt = {1, 60, 70, 80, 90, 100, 110, 120, 130};
    req.maxTokens = 7;
    req.sampling.temperature = 0;
    auto result = engine.generate(req, [](TokenId, std::string_view) { return true; });
    std::vector<int32_t> tokens = req.prompt;
    if (result) tokens.insert(tokens.end(), result->tokens.begin(), result->tokens.end());
    tokens.resize(16, 3);  // an early end of generation: pad, those blocks are simply not cached
    return tokens;
}

}  // namespace hearth::fuzz
