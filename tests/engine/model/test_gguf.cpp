// The GGUF reader and writer on files this test writes: round trips of every value type, nested
// arrays and tensors; and hostile files (truncations at every byte, huge counts and lengths,
// overflowing sizes, bad types, offsets, alignments, repeats, deep nesting), each of which must
// give a single-line error naming the field, never a crash, hang or huge allocation.
#include <QTemporaryDir>
#include <QTest>

#include <cstring>
#include <functional>
#include <limits>
#include <random>

#include "engine/model/gguf.h"
#include "engine/model/gguf_writer.h"
#include "kernels/dtype.h"

using namespace hearth;

namespace {

constexpr uint64_t k2p63 = uint64_t{1} << 63;
constexpr uint64_t kU64Max = std::numeric_limits<uint64_t>::max();

std::vector<uint8_t> pattern(size_t n, uint8_t seed) {
    std::vector<uint8_t> out(n);
    for (size_t i = 0; i < n; ++i) out[i] = static_cast<uint8_t>(seed + i * 31 + (i >> 7));
    return out;
}

// A small valid model-like file: metadata of several types, three tensors.
GgufWriter smallWriter() {
    GgufWriter w;
    w.set("general.architecture", "llama");
    w.set("general.name", std::string("tiny"));
    w.set("llama.block_count", uint32_t{2});
    w.set("llama.rope.freq_base", 10000.0f);
    w.set("tokenizer.ggml.add_bos_token", true);
    w.set("tokenizer.ggml.tokens", std::vector<std::string>{"<unk>", "<s>", "a", "bc"});
    w.set("tokenizer.ggml.scores", std::vector<float>{0.f, -1.f, -2.5f, -3.f});
    w.set("test.nested", std::vector<std::vector<int32_t>>{{1, 2}, {}, {-3}});
    w.addTensor("token_embd.weight", {64, 4}, DType::F32, pattern(64 * 4 * 4, 1));
    w.addTensor("blk.0.attn_q.weight", {64, 2}, DType::Q8_0, pattern(2 * 2 * 34, 2));
    w.addTensor("output_norm.weight", {64}, DType::F16, pattern(128, 3));
    return w;
}

Result<std::unique_ptr<GgufFile>> parse(const std::vector<uint8_t>& bytes) { return GgufFile::fromBytes(bytes); }

void putU32(std::vector<uint8_t>& b, uint64_t at, uint32_t v) {
    for (int i = 0; i < 4; ++i) b.at(at + i) = static_cast<uint8_t>(v >> (8 * i));
}
void putU64(std::vector<uint8_t>& b, uint64_t at, uint64_t v) {
    for (int i = 0; i < 8; ++i) b.at(at + i) = static_cast<uint8_t>(v >> (8 * i));
}

// The parse fails with `code` and a one-line message holding every fragment.
bool failsWith(const std::vector<uint8_t>& bytes, std::initializer_list<std::string> fragments,
               ErrorCode code = ErrorCode::InvalidFormat) {
    const auto file = parse(bytes);
    if (file) {
        qWarning("parsed, but an error was expected");
        return false;
    }
    const std::string& msg = file.error().message;
    bool ok = msg.rfind("GGUF: ", 0) == 0 && msg.find('\n') == std::string::npos && file.error().code == code;
    for (const std::string& f : fragments) ok = ok && msg.find(f) != std::string::npos;
    if (!ok) qWarning("unexpected error (code %d): %s", int(file.error().code), msg.c_str());
    if (qEnvironmentVariableIsSet("HEARTH_SHOW_ERRORS")) qInfo("%s", msg.c_str());
    return ok;
}

// Writes w, lets patch change the bytes, expects the failure.
bool patchedFails(const GgufWriter& w, const std::function<void(GgufImage&)>& patch,
                  std::initializer_list<std::string> fragments, ErrorCode code = ErrorCode::InvalidFormat) {
    GgufImage image = w.toBytes();
    if (!parse(image.bytes)) {
        qWarning("the unpatched file does not parse");
        return false;
    }
    patch(image);
    return failsWith(image.bytes, fragments, code);
}

GgufValue nestedArray(int depth) {  // depth 1: [1]; depth 2: [[1]]; ...
    GgufValue v = ggufValue(std::vector<int32_t>{1});
    for (int d = 1; d < depth; ++d) v = ggufArray(GgufType::ARRAY, {v});
    return v;
}

}  // namespace

class TestGguf : public QObject {
    Q_OBJECT

private slots:
    void roundTripsEveryValueType();
    void roundTripsArrays();
    void roundTripsTensors();
    void roundTripsThroughAFile();
    void valueAccessorsConvertOnlyWhatFits();
    void readsAFileWithoutTensors();
    void failsCleanlyAtEveryTruncation();
    void namesTheSectionWhereTheFileEnds();
    void rejectsBadHeaders();
    void rejectsHugeCountsAndLengths();
    void rejectsBadMetadata();
    void rejectsBadAlignment();
    void rejectsBadTensorInfos();
    void rejectsTensorDataOutsideTheFile();
    void survivesRandomCorruption();
    void reportsOpenErrors();
};

void TestGguf::roundTripsEveryValueType() {
    GgufWriter w;
    w.set("t.u8", uint8_t{255});
    w.set("t.i8", int8_t{-128});
    w.set("t.u16", uint16_t{65535});
    w.set("t.i16", int16_t{-32768});
    w.set("t.u32", uint32_t{4294967295u});
    w.set("t.i32", int32_t{std::numeric_limits<int32_t>::min()});
    w.set("t.f32", 0.1f);
    w.set("t.bool", false);
    w.set("t.string", std::string("h\xc3\xa9llo\0x", 8));  // UTF-8 and an embedded NUL
    w.set("t.u64", kU64Max);
    w.set("t.i64", std::numeric_limits<int64_t>::min());
    w.set("t.f64", 3.141592653589793);
    w.set("t.empty_string", std::string());
    const auto file = parse(w.toBytes().bytes);
    QVERIFY2(file, file ? "" : file.error().message.c_str());
    const GgufFile& f = **file;
    QCOMPARE(f.version(), 3u);
    QCOMPARE(f.metadata().size(), size_t{13});
    QCOMPARE(f.find("t.u8")->type, GgufType::U8);
    QCOMPARE(*f.find("t.u8")->asUInt(), uint64_t{255});
    QCOMPARE(*f.find("t.i8")->asInt(), int64_t{-128});
    QCOMPARE(f.find("t.i8")->type, GgufType::I8);
    QCOMPARE(*f.find("t.u16")->asUInt(), uint64_t{65535});
    QCOMPARE(*f.find("t.i16")->asInt(), int64_t{-32768});
    QCOMPARE(*f.find("t.u32")->asUInt(), uint64_t{4294967295u});
    QCOMPARE(*f.find("t.i32")->asInt(), int64_t{std::numeric_limits<int32_t>::min()});
    QCOMPARE(f.find("t.f32")->type, GgufType::F32);
    QCOMPARE(*f.find("t.f32")->asFloat(), double(0.1f));
    QCOMPARE(*f.find("t.bool")->asBool(), false);
    QCOMPARE(*f.find("t.string")->asString(), std::string("h\xc3\xa9llo\0x", 8));
    QCOMPARE(*f.find("t.u64")->asUInt(), kU64Max);
    QCOMPARE(f.find("t.u64")->type, GgufType::U64);
    QCOMPARE(*f.find("t.i64")->asInt(), std::numeric_limits<int64_t>::min());
    QCOMPARE(*f.find("t.f64")->asFloat(), 3.141592653589793);
    QCOMPARE(f.find("t.f64")->type, GgufType::F64);
    QCOMPARE(*f.find("t.empty_string")->asString(), std::string());
    QVERIFY(f.find("t.absent") == nullptr);
    QVERIFY(f.tensors().empty());
}

void TestGguf::roundTripsArrays() {
    GgufWriter w;
    w.set("a.strings", std::vector<std::string>{"", "x", std::string(300, 'y')});
    w.set("a.floats", std::vector<float>{1.5f, -0.f, 1e-30f});
    w.set("a.ints", std::vector<int32_t>{-1, 0, 2147483647});
    w.set("a.u8", std::vector<uint8_t>{0, 255});
    w.set("a.bools", std::vector<bool>{true, false, true});
    w.set("a.f64", std::vector<double>{2.5});
    w.set("a.u64", std::vector<uint64_t>{kU64Max});
    w.set("a.empty", std::vector<int16_t>{});
    w.set("a.nested", std::vector<std::vector<std::string>>{{"p", "q"}, {}, {"r"}});
    w.setValue("a.deep", nestedArray(GgufLimits::kMaxArrayDepth));  // the deepest allowed
    const auto file = parse(w.toBytes().bytes);
    QVERIFY2(file, file ? "" : file.error().message.c_str());
    const GgufFile& f = **file;
    const GgufArray* strings = f.find("a.strings")->asArray();
    QVERIFY(strings);
    QCOMPARE(strings->elemType, GgufType::STRING);
    QCOMPARE(strings->items.size(), size_t{3});
    QCOMPARE(*strings->items[2].asString(), std::string(300, 'y'));
    const GgufArray* floats = f.find("a.floats")->asArray();
    QCOMPARE(floats->elemType, GgufType::F32);
    QCOMPARE(*floats->items[0].asFloat(), 1.5);
    QCOMPARE(*floats->items[2].asFloat(), double(1e-30f));
    QVERIFY(std::signbit(*floats->items[1].asFloat()));
    const GgufArray* ints = f.find("a.ints")->asArray();
    QCOMPARE(ints->elemType, GgufType::I32);
    QCOMPARE(*ints->items[0].asInt(), int64_t{-1});
    QCOMPARE(*ints->items[2].asInt(), int64_t{2147483647});
    QCOMPARE(*f.find("a.u8")->asArray()->items[1].asUInt(), uint64_t{255});
    QCOMPARE(*f.find("a.bools")->asArray()->items[2].asBool(), true);
    QCOMPARE(*f.find("a.f64")->asArray()->items[0].asFloat(), 2.5);
    QCOMPARE(*f.find("a.u64")->asArray()->items[0].asUInt(), kU64Max);
    QCOMPARE(f.find("a.empty")->asArray()->elemType, GgufType::I16);
    QVERIFY(f.find("a.empty")->asArray()->items.empty());
    const GgufArray* nested = f.find("a.nested")->asArray();
    QCOMPARE(nested->elemType, GgufType::ARRAY);
    QCOMPARE(nested->items.size(), size_t{3});
    QCOMPARE(nested->items[0].asArray()->elemType, GgufType::STRING);
    QCOMPARE(*nested->items[0].asArray()->items[1].asString(), std::string("q"));
    QVERIFY(nested->items[1].asArray()->items.empty());
    const GgufValue* deep = f.find("a.deep");
    for (int d = 1; d < GgufLimits::kMaxArrayDepth; ++d) deep = &deep->asArray()->items.at(0);
    QCOMPARE(*deep->asArray()->items.at(0).asInt(), int64_t{1});
}

void TestGguf::roundTripsTensors() {
    for (const uint32_t alignment : {0u, 64u, 1u}) {  // 0: general.alignment absent (32)
        for (const uint32_t version : {3u, 2u}) {
            GgufWriter w = smallWriter();
            w.setVersion(version);
            if (alignment) w.set("general.alignment", alignment);
            w.addTensor("q4k", {256, 1}, DType::Q4_K, pattern(144, 4));
            w.addTensor("bf16", {2, 3, 4, 5}, DType::BF16, pattern(2 * 3 * 4 * 5 * 2, 5));
            const GgufImage image = w.toBytes();
            const auto file = parse(image.bytes);
            QVERIFY2(file, file ? "" : file.error().message.c_str());
            const GgufFile& f = **file;
            const uint64_t expectAlign = alignment ? alignment : 32;
            QCOMPARE(f.version(), version);
            QCOMPARE(f.alignment(), expectAlign);
            QCOMPARE(f.dataOffset(), image.layout.dataStart);
            QCOMPARE(f.dataOffset() % expectAlign, uint64_t{0});
            QCOMPARE(f.fileSize(), uint64_t(image.bytes.size()));
            QCOMPARE(f.tensors().size(), size_t{5});
            const GgufTensorInfo* bf16 = f.findTensor("bf16");
            QVERIFY(bf16);
            QCOMPARE(bf16->dims, (std::vector<int64_t>{2, 3, 4, 5}));
            QCOMPARE(bf16->type, DType::BF16);
            QCOMPARE(bf16->nElements(), int64_t{120});
            QCOMPARE(bf16->nBytes, uint64_t{240});
            QCOMPARE(f.findTensor("q4k")->nBytes, uint64_t{144});
            QCOMPARE(f.findTensor("blk.0.attn_q.weight")->type, DType::Q8_0);
            QCOMPARE(f.findTensor("blk.0.attn_q.weight")->nBytes, uint64_t{136});
            QVERIFY(f.findTensor("absent") == nullptr);
            for (size_t i = 0; i < f.tensors().size(); ++i) {
                const GgufTensorInfo& t = f.tensors()[i];
                QCOMPARE(t.offset % expectAlign, uint64_t{0});
                QCOMPARE(f.dataOffset() + t.offset, image.layout.tensorDataAt[i]);
                const auto data = f.tensorData(t);
                QCOMPARE(data.size(), t.nBytes);
                QVERIFY(std::equal(data.begin(), data.end(), image.bytes.begin() + image.layout.tensorDataAt[i]));
            }
            const auto q8 = f.tensorData(*f.findTensor("blk.0.attn_q.weight"));
            const auto expect = pattern(136, 2);
            QVERIFY(std::equal(q8.begin(), q8.end(), expect.begin(), expect.end()));
        }
    }
}

void TestGguf::roundTripsThroughAFile() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string path = dir.filePath("tiny.gguf").toStdString();
    const GgufWriter w = smallWriter();
    const auto written = w.writeFile(path);
    QVERIFY2(written, written ? "" : written.error().message.c_str());
    const auto file = GgufFile::open(path);
    QVERIFY2(file, file ? "" : file.error().message.c_str());
    QCOMPARE((*file)->path(), path);
    QCOMPARE(*(*file)->find("general.architecture")->asString(), std::string("llama"));
    const auto data = (*file)->tensorData(*(*file)->findTensor("token_embd.weight"));
    const auto expect = pattern(64 * 4 * 4, 1);
    QVERIFY(std::equal(data.begin(), data.end(), expect.begin(), expect.end()));
    QVERIFY(!w.writeFile(dir.filePath("no/such/dir/x.gguf").toStdString()));
}

void TestGguf::valueAccessorsConvertOnlyWhatFits() {
    const GgufValue negative = ggufValue(int32_t{-5});
    QVERIFY(!negative.asUInt());
    QCOMPARE(*negative.asInt(), int64_t{-5});
    QCOMPARE(*negative.asFloat(), -5.0);
    QVERIFY(!negative.asBool());
    QVERIFY(negative.asString() == nullptr);
    QVERIFY(negative.asArray() == nullptr);
    QCOMPARE(*ggufValue(int64_t{7}).asUInt(), uint64_t{7});
    QVERIFY(!ggufValue(kU64Max).asInt());
    QCOMPARE(*ggufValue(uint64_t{1} << 62).asInt(), int64_t{1} << 62);
    QVERIFY(!ggufValue(1.5f).asInt());
    QVERIFY(!ggufValue(true).asUInt());
    QVERIFY(!ggufValue("x").asFloat());
    QCOMPARE(*ggufValue("x").asString(), std::string("x"));
}

void TestGguf::readsAFileWithoutTensors() {
    GgufWriter w;
    w.set("general.architecture", "llama");
    const GgufImage image = w.toBytes();
    const auto file = parse(image.bytes);
    QVERIFY2(file, file ? "" : file.error().message.c_str());
    QVERIFY((*file)->tensors().empty());
    QCOMPARE((*file)->dataOffset(), uint64_t(image.bytes.size()));
    GgufWriter empty;  // header only
    QVERIFY(parse(empty.toBytes().bytes));
}

void TestGguf::failsCleanlyAtEveryTruncation() {
    const std::vector<uint8_t> full = smallWriter().toBytes().bytes;
    QVERIFY(parse(full));
    for (size_t n = 0; n < full.size(); ++n) {
        // An exact-size heap copy, so that ASan sees any read past the end.
        const std::vector<uint8_t> prefix(full.begin(), full.begin() + n);
        const auto file = parse(prefix);
        QVERIFY2(!file, qPrintable(QString("prefix of %1 bytes parsed").arg(n)));
        const std::string& msg = file.error().message;
        QVERIFY2(msg.rfind("GGUF: ", 0) == 0 && msg.find('\n') == std::string::npos &&
                     msg.find(" at offset ") != std::string::npos,
                 msg.c_str());
    }
}

void TestGguf::namesTheSectionWhereTheFileEnds() {
    const GgufImage image = smallWriter().toBytes();
    const GgufLayout& l = image.layout;
    const auto cut = [&](uint64_t n) { return std::vector<uint8_t>(image.bytes.begin(), image.bytes.begin() + n); };
    QVERIFY(failsWith(cut(0), {"header magic at offset 0 is cut off"}));
    QVERIFY(failsWith(cut(6), {"header version at offset 4 is cut off"}));
    QVERIFY(failsWith(cut(12), {"header tensor_count at offset 8"}));
    QVERIFY(failsWith(cut(l.headerEnd - 1), {"header metadata_kv_count at offset 16"}));
    // The counts are checked against the bytes left before any entry is read.
    QVERIFY(failsWith(cut(l.headerEnd), {"header metadata_kv_count 8 at offset 16 exceeds the file"}));
    QVERIFY(failsWith(cut(l.kvs[1].keyAt + 9), {"header metadata_kv_count 8", "exceeds the file"}));
    // With counts that fit what is left, the cut is found inside the entry.
    const auto cutKv = [&](uint64_t n, uint64_t nKv) {
        auto bytes = cut(n);
        putU64(bytes, 8, 0);
        putU64(bytes, 16, nKv);
        return bytes;
    };
    QVERIFY(failsWith(cutKv(l.kvs[1].keyAt + 9, 2), {"metadata key #1 string length 12", "exceeds"}));
    QVERIFY(failsWith(cutKv(l.kvs[1].typeAt + 1, 2), {"metadata 'general.name' value type at"}));
    QVERIFY(failsWith(cutKv(l.kvs[2].valueAt + 3, 3), {"metadata 'llama.block_count' at offset"}));
    QVERIFY(failsWith(cutKv(l.kvs[5].valueAt + 2, 6), {"'tokenizer.ggml.tokens' array element type"}));
    // Array counts are checked the same way (fixed-size elements can never be found cut).
    auto bytes = cutKv(l.kvs[5].valueAt + 13, 6);
    QVERIFY(failsWith(bytes, {"'tokenizer.ggml.tokens' array count 4", "exceeds the file"}));
    bytes = cutKv(l.kvs[5].valueAt + 12 + 8 + 2, 6);  // in the first token, "<unk>"
    putU64(bytes, l.kvs[5].valueAt + 4, 1);
    QVERIFY(failsWith(bytes, {"'tokenizer.ggml.tokens'[0] string length 5", "2 left"}));
    bytes = cutKv(l.kvs[7].valueAt + 12 + 12 + 4 + 2, 8);  // in [[1, 2], [], [-3]]
    putU64(bytes, l.kvs[7].valueAt + 4, 1);
    QVERIFY(failsWith(bytes, {"'test.nested'[0] array count 2", "6 left"}));
    QVERIFY(failsWith(cut(l.metadataEnd), {"tensor #0 name string length at offset"}));
    QVERIFY(failsWith(cut(l.tensorInfos[1].dimsAt + 9), {"tensor #1 'blk.0.attn_q.weight' dims[1]"}));
    QVERIFY(failsWith(cut(l.tensorInfos[2].typeAt), {"tensor #2 'output_norm.weight' type at"}));
    QVERIFY(failsWith(cut(l.tensorInfos[2].offsetAt + 7), {"'output_norm.weight' offset at"}));
    QVERIFY(failsWith(cut(l.tensorInfoEnd), {"data section", "past the end of the file"}));
    QVERIFY(failsWith(cut(l.dataStart), {"tensor #0 'token_embd.weight' offset 0", "past the end"}));
    QVERIFY(failsWith(cut(l.size - 1), {"tensor #2 'output_norm.weight'", "puts its 128 bytes"}));
}

void TestGguf::rejectsBadHeaders() {
    const std::vector<uint8_t> good = smallWriter().toBytes().bytes;
    auto bytes = good;
    bytes[0] = 'X';
    QVERIFY(failsWith(bytes, {"header magic at offset 0 is 'XGUF', not 'GGUF'"}));
    for (const uint32_t version : {0u, 1u, 4u, 0xffffffffu}) {
        bytes = good;
        putU32(bytes, 4, version);
        QVERIFY(
            failsWith(bytes, {"header version " + std::to_string(version) + " at offset 4"}, ErrorCode::Unsupported));
    }
    bytes = good;
    putU32(bytes, 4, 0x03000000u);
    QVERIFY(failsWith(bytes, {"big-endian"}, ErrorCode::Unsupported));
}

void TestGguf::rejectsHugeCountsAndLengths() {
    const GgufWriter w = smallWriter();
    for (const uint64_t huge : {k2p63, kU64Max, uint64_t{1} << 40}) {
        const std::string n = std::to_string(huge);
        QVERIFY(patchedFails(w, [&](GgufImage& i) { putU64(i.bytes, 8, huge); },
                             {"header tensor_count " + n + " at offset 8 exceeds the file"}));
        QVERIFY(patchedFails(w, [&](GgufImage& i) { putU64(i.bytes, 16, huge); },
                             {"header metadata_kv_count " + n + " at offset 16 exceeds the file"}));
        QVERIFY(patchedFails(w, [&](GgufImage& i) { putU64(i.bytes, i.layout.kvs[3].keyAt, huge); },
                             {"metadata key #3 string length " + n, "exceeds the file ("}));
        QVERIFY(patchedFails(w, [&](GgufImage& i) { putU64(i.bytes, i.layout.kvs[1].valueAt, huge); },
                             {"metadata 'general.name' string length " + n, "exceeds the file"}));
        QVERIFY(patchedFails(w, [&](GgufImage& i) { putU64(i.bytes, i.layout.kvs[5].valueAt + 4, huge); },
                             {"metadata 'tokenizer.ggml.tokens' array count " + n, "exceeds the file"}));
        QVERIFY(patchedFails(w, [&](GgufImage& i) { putU64(i.bytes, i.layout.kvs[5].valueAt + 12, huge); },
                             {"metadata 'tokenizer.ggml.tokens'[0] string length " + n}));
        QVERIFY(patchedFails(w, [&](GgufImage& i) { putU64(i.bytes, i.layout.kvs[7].valueAt + 16, huge); },
                             {"metadata 'test.nested'[0] array count " + n}));
        QVERIFY(patchedFails(w, [&](GgufImage& i) { putU64(i.bytes, i.layout.tensorInfos[1].nameAt, huge); },
                             {"tensor #1 name string length " + n, "exceeds the file"}));
    }
    // A count the file could hold but Hearth's total of array elements cannot: refused before
    // anything is allocated for it.
    GgufWriter big;
    big.set("big", std::vector<uint8_t>{});
    GgufImage image = big.toBytes();
    putU64(image.bytes, image.layout.kvs[0].valueAt + 4, GgufLimits::kMaxArrayElements + 1);
    image.bytes.resize(image.bytes.size() + GgufLimits::kMaxArrayElements + 1);
    QVERIFY(failsWith(image.bytes, {"metadata 'big' array count 8388609", "limit of 8388608"}, ErrorCode::OutOfMemory));
}

void TestGguf::rejectsBadMetadata() {
    const GgufWriter w = smallWriter();
    const auto valueType = [](size_t kv, uint32_t type) {
        return [=](GgufImage& i) { putU32(i.bytes, i.layout.kvs[kv].typeAt, type); };
    };
    QVERIFY(
        patchedFails(w, valueType(2, 13), {"metadata 'llama.block_count' value type 13", "is not a GGUF value type"}));
    QVERIFY(patchedFails(w, valueType(2, 0xffffffffu), {"value type 4294967295"}));
    QVERIFY(patchedFails(w, [](GgufImage& i) { putU32(i.bytes, i.layout.kvs[6].valueAt, 99); },
                         {"metadata 'tokenizer.ggml.scores' array element type 99"}));
    QVERIFY(patchedFails(w, [](GgufImage& i) { i.bytes[i.layout.kvs[4].valueAt] = 2; },
                         {"metadata 'tokenizer.ggml.add_bos_token' bool 2", "neither 0 nor 1"}));
    GgufWriter twice;  // "k.ab" patched into a second "k.aa"
    twice.set("k.aa", 1);
    twice.set("k.ab", 2);
    GgufImage image = twice.toBytes();
    image.bytes[image.layout.kvs[1].keyAt + 8 + 3] = 'a';
    QVERIFY(failsWith(image.bytes, {"metadata key #1 'k.aa'", "repeats an earlier key"}));
    GgufWriter bad;
    bad.set("", 1);
    QVERIFY(failsWith(bad.toBytes().bytes, {"metadata key #0 ''", "is empty"}));
    GgufWriter control;
    control.set("a\nb", 1);
    QVERIFY(failsWith(control.toBytes().bytes, {"metadata key #0 'a\\nb'", "not printable ASCII"}));
    GgufWriter longKey;
    longKey.set(std::string(GgufLimits::kMaxKeyBytes + 1, 'k'), 1);
    QVERIFY(failsWith(longKey.toBytes().bytes, {"string length 65536", "limit of 65535 bytes"}));
    GgufWriter deep;
    deep.setValue("deep", nestedArray(GgufLimits::kMaxArrayDepth + 1));
    QVERIFY(failsWith(deep.toBytes().bytes,
                      {"metadata 'deep'[0][0][0][0][0][0][0] array element type", "deeper than 8 levels"}));
}

void TestGguf::rejectsBadAlignment() {
    const auto withAlignment = [](GgufValue alignment) {
        GgufWriter w = smallWriter();
        w.setValue("general.alignment", std::move(alignment));
        return w.toBytes().bytes;
    };
    QVERIFY(failsWith(withAlignment(ggufValue(uint32_t{0})), {"metadata 'general.alignment' 0", "not a power of two"}));
    QVERIFY(failsWith(withAlignment(ggufValue(uint32_t{48})), {"alignment' 48", "power of two"}));
    QVERIFY(failsWith(withAlignment(ggufValue(uint32_t{1u << 31})),
                      {"alignment' 2147483648", "exceeds the limit of 1048576"}));
    QVERIFY(
        failsWith(withAlignment(ggufValue(uint64_t{32})), {"metadata 'general.alignment'", "value type 10, not u32"}));
    QVERIFY(parse(withAlignment(ggufValue(uint32_t{1u << 20}))));
}

void TestGguf::rejectsBadTensorInfos() {
    const auto withTensor = [](GgufTensorSpec spec) {
        GgufWriter w = smallWriter();
        w.addTensor(std::move(spec));
        return w.toBytes().bytes;
    };
    const auto f32 = [](std::vector<uint64_t> dims) {
        return GgufTensorSpec{"t", std::move(dims), 0, pattern(16, 0), std::nullopt};
    };
    QVERIFY(failsWith(withTensor(f32({})), {"tensor #3 't' n_dims 0", "outside 1..4"}));
    QVERIFY(failsWith(withTensor(f32({1, 1, 1, 1, 4})), {"tensor #3 't' n_dims 5"}));
    QVERIFY(failsWith(withTensor(f32({4, 0})), {"tensor #3 't' dims[1] 0", "must be at least 1"}));
    QVERIFY(failsWith(withTensor(f32({uint64_t{1} << 32, uint64_t{1} << 32})),
                      {"dims[1] 4294967296", "element count overflow"}));
    QVERIFY(failsWith(withTensor(f32({k2p63})), {"dims[0] 9223372036854775808", "overflow"}));
    QVERIFY(failsWith(withTensor(f32({uint64_t{1} << 62})), {"type F32", "byte size overflow"}));
    QVERIFY(failsWith(withTensor(f32({uint64_t{1} << 40})), {"tensor #3 't' offset", "past the end"}));
    for (const uint32_t type : {9u, 15u, 16u, 28u, 1000u, 0xffffffffu}) {
        auto spec = f32({32});
        spec.typeId = type;
        QVERIFY(
            failsWith(withTensor(spec),
                      {"tensor #3 't' type " + std::to_string(type), "not a weight type Hearth reads (F32, F16, Q4_0"},
                      ErrorCode::Unsupported));
    }
    auto q4k = f32({128});
    q4k.typeId = static_cast<uint32_t>(DType::Q4_K);
    QVERIFY(failsWith(withTensor(q4k), {"dims[0] 128", "not a multiple of the Q4_K block size 256"}));
    auto misaligned = f32({4});
    misaligned.offset = 16;
    QVERIFY(failsWith(withTensor(misaligned), {"tensor #3 't' offset 16", "not a multiple of the alignment 32"}));
    QVERIFY(failsWith(withTensor({"", {4}, 0, pattern(16, 0), std::nullopt}), {"tensor #3 name", "is empty"}));
    const std::string longName(GgufLimits::kMaxTensorNameBytes + 1, 'n');
    QVERIFY(failsWith(withTensor({longName, {4}, 0, pattern(16, 0), std::nullopt}),
                      {"tensor #3 name string length 65", "limit of 64 bytes"}));
    QVERIFY(parse(withTensor({longName.substr(1), {4}, 0, pattern(16, 0), std::nullopt})));
    QVERIFY(failsWith(withTensor({"output_norm.weight", {4}, 0, pattern(16, 0), std::nullopt}),
                      {"tensor #3 'output_norm.weight'", "repeats an earlier tensor name"}));
}

void TestGguf::rejectsTensorDataOutsideTheFile() {
    const GgufWriter w = smallWriter();
    for (const uint64_t offset : {uint64_t{1} << 20, kU64Max - 31, k2p63}) {
        QVERIFY(patchedFails(
            w, [&](GgufImage& i) { putU64(i.bytes, i.layout.tensorInfos[2].offsetAt, offset); },
            {"tensor #2 'output_norm.weight' offset " + std::to_string(offset), "past the end of the file"}));
    }
    // Dims whose bytes exceed the file though the offset is fine.
    QVERIFY(patchedFails(w, [](GgufImage& i) { putU64(i.bytes, i.layout.tensorInfos[2].dimsAt, 64 * 1024); },
                         {"tensor #2 'output_norm.weight' offset", "puts its 131072 bytes past"}));
}

// Random byte and u64 overwrites in the header, metadata and tensor infos: each file either
// parses (its tensors then lie inside it) or fails with a one-line message.
void TestGguf::survivesRandomCorruption() {
    const GgufImage image = smallWriter().toBytes();
    std::mt19937_64 random(20251129);
    const uint64_t extremes[] = {0, 1, 0xff, k2p63, kU64Max, uint64_t{1} << 32, 33, 64};
    int nParsed = 0;
    for (int iteration = 0; iteration < 4000; ++iteration) {
        std::vector<uint8_t> bytes = image.bytes;
        const int nEdits = 1 + int(random() % 3);
        for (int e = 0; e < nEdits; ++e) {
            const uint64_t at = random() % (image.layout.dataStart - 8);
            if (random() % 2) bytes[at] = static_cast<uint8_t>(random());
            else putU64(bytes, at, extremes[random() % std::size(extremes)]);
        }
        const auto file = parse(bytes);
        if (file) {
            ++nParsed;
            for (const GgufTensorInfo& t : (*file)->tensors()) {
                QCOMPARE((*file)->tensorData(t).size(), t.nBytes);
            }
            continue;
        }
        const std::string& msg = file.error().message;
        QVERIFY2(msg.rfind("GGUF: ", 0) == 0 && msg.find('\n') == std::string::npos, msg.c_str());
    }
    QVERIFY(nParsed < 4000);
}

void TestGguf::reportsOpenErrors() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    auto missing = GgufFile::open(dir.filePath("absent.gguf").toStdString());
    QVERIFY(!missing);
    QCOMPARE(missing.error().code, ErrorCode::Io);
    QVERIFY(missing.error().message.find("cannot open") != std::string::npos);
    auto directory = GgufFile::open(dir.path().toStdString());
    QVERIFY(!directory);
    QCOMPARE(directory.error().code, ErrorCode::Io);
    const std::string emptyPath = dir.filePath("empty.gguf").toStdString();
    std::FILE* f = std::fopen(emptyPath.c_str(), "wb");
    QVERIFY(f);
    std::fclose(f);
    auto empty = GgufFile::open(emptyPath);
    QVERIFY(!empty);
    QCOMPARE(empty.error().code, ErrorCode::InvalidFormat);
    QVERIFY(empty.error().message.find("header magic at offset 0 is cut off") != std::string::npos);
}

QTEST_GUILESS_MAIN(TestGguf)
#include "test_gguf.moc"
