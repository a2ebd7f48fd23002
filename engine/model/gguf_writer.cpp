// GgufWriter: serialises metadata and tensors in the GGUF layout (GGUF spec, docs/gguf.md in
// ggml): header, key/value pairs, tensor infos, padding to the alignment, tensor data with each
// tensor at an aligned offset. Little-endian throughout.
#include "engine/model/gguf_writer.h"

#include <bit>
#include <cstdio>
#include <cstring>

#include "engine/util/file_path.h"

namespace hearth {
namespace {

class ByteSink {
public:
    explicit ByteSink(std::vector<uint8_t>& out) : out_(out) {}
    uint64_t pos() const { return out_.size(); }

    template <class T>
    void put(T value) {  // little-endian, whatever the host
        const auto bits = static_cast<uint64_t>(value);
        for (size_t i = 0; i < sizeof(T); ++i) {
            out_.push_back(static_cast<uint8_t>(bits >> (8 * i)));
        }
    }
    void putString(const std::string& s) {
        put<uint64_t>(s.size());
        out_.insert(out_.end(), s.begin(), s.end());
    }
    void putBytes(const std::vector<uint8_t>& bytes) { out_.insert(out_.end(), bytes.begin(), bytes.end()); }
    void padTo(uint64_t alignment) {  // spec: padding bytes are 0x00
        while (out_.size() % alignment != 0) out_.push_back(0);
    }

private:
    std::vector<uint8_t>& out_;
};

void putValue(ByteSink& sink, const GgufValue& value) {
    switch (value.type) {
    case GgufType::U8: sink.put<uint8_t>(value.asUInt().value_or(0)); break;
    case GgufType::I8: sink.put<int8_t>(value.asInt().value_or(0)); break;
    case GgufType::U16: sink.put<uint16_t>(value.asUInt().value_or(0)); break;
    case GgufType::I16: sink.put<int16_t>(value.asInt().value_or(0)); break;
    case GgufType::U32: sink.put<uint32_t>(value.asUInt().value_or(0)); break;
    case GgufType::I32: sink.put<int32_t>(value.asInt().value_or(0)); break;
    case GgufType::U64: sink.put<uint64_t>(value.asUInt().value_or(0)); break;
    case GgufType::I64: sink.put<int64_t>(value.asInt().value_or(0)); break;
    case GgufType::F32: sink.put(std::bit_cast<uint32_t>(static_cast<float>(value.asFloat().value_or(0)))); break;
    case GgufType::F64: sink.put(std::bit_cast<uint64_t>(value.asFloat().value_or(0))); break;
    case GgufType::BOOL: sink.put<uint8_t>(value.asBool().value_or(false) ? 1 : 0); break;
    case GgufType::STRING: {
        const std::string* text = value.asString();
        sink.putString(text ? *text : std::string());
        break;
    }
    case GgufType::ARRAY: {  // spec: u32 element type, u64 count, the elements
        const GgufArray* array = value.asArray();
        sink.put(static_cast<uint32_t>(array ? array->elemType : GgufType::U8));
        sink.put<uint64_t>(array ? array->size() : 0);
        for (uint64_t i = 0; array && i < array->size(); ++i) putValue(sink, array->item(i));
        break;
    }
    default:  // an out-of-range type id (a hostile test): the id, no value
        break;
    }
}

}  // namespace

GgufValue ggufValue(uint8_t v) { return {GgufType::U8, uint64_t{v}}; }
GgufValue ggufValue(int8_t v) { return {GgufType::I8, int64_t{v}}; }
GgufValue ggufValue(uint16_t v) { return {GgufType::U16, uint64_t{v}}; }
GgufValue ggufValue(int16_t v) { return {GgufType::I16, int64_t{v}}; }
GgufValue ggufValue(uint32_t v) { return {GgufType::U32, uint64_t{v}}; }
GgufValue ggufValue(int32_t v) { return {GgufType::I32, int64_t{v}}; }
GgufValue ggufValue(uint64_t v) { return {GgufType::U64, v}; }
GgufValue ggufValue(int64_t v) { return {GgufType::I64, v}; }
GgufValue ggufValue(float v) { return {GgufType::F32, static_cast<double>(v)}; }
GgufValue ggufValue(double v) { return {GgufType::F64, v}; }
GgufValue ggufValue(bool v) { return {GgufType::BOOL, v}; }
GgufValue ggufValue(std::string v) { return {GgufType::STRING, std::move(v)}; }
GgufValue ggufValue(const char* v) { return {GgufType::STRING, std::string(v)}; }

GgufValue ggufArray(GgufType elemType, std::vector<GgufValue> items) {
    auto array = std::make_shared<GgufArray>();
    array->elemType = elemType;
    array->items = std::move(items);
    return {GgufType::ARRAY, std::move(array)};
}

void GgufWriter::setValue(const std::string& key, GgufValue value) {
    for (auto& [k, v] : kvs_) {
        if (k == key) {
            v = std::move(value);
            return;
        }
    }
    kvs_.emplace_back(key, std::move(value));
}

void GgufWriter::remove(const std::string& key) {
    std::erase_if(kvs_, [&](const auto& kv) { return kv.first == key; });
}

void GgufWriter::addTensor(std::string name, const std::vector<int64_t>& dims, DType type, std::vector<uint8_t> bytes) {
    GgufTensorSpec spec;
    spec.name = std::move(name);
    for (const int64_t d : dims) spec.dims.push_back(static_cast<uint64_t>(d));
    spec.typeId = static_cast<uint32_t>(type);
    spec.data = std::move(bytes);
    addTensor(std::move(spec));
}

void GgufWriter::addTensor(GgufTensorSpec spec) { tensors_.push_back(std::move(spec)); }

uint64_t GgufWriter::alignment() const {
    for (const auto& [key, value] : kvs_) {
        if (key != "general.alignment" || value.type != GgufType::U32) continue;
        const uint64_t a = value.asUInt().value_or(0);
        if (std::has_single_bit(a) && a <= GgufLimits::kMaxAlignment) return a;
    }
    return GgufLimits::kDefaultAlignment;
}

GgufImage GgufWriter::toBytes() const {
    GgufImage image;
    GgufLayout& layout = image.layout;
    ByteSink sink(image.bytes);
    const uint64_t align = alignment();
    sink.put<uint32_t>(0x46554747u);  // "GGUF" read as a little-endian u32
    sink.put<uint32_t>(version_);
    sink.put<uint64_t>(tensors_.size());
    sink.put<uint64_t>(kvs_.size());
    layout.headerEnd = sink.pos();
    for (const auto& [key, value] : kvs_) {
        GgufLayout::Kv at{sink.pos(), 0, 0};
        sink.putString(key);
        at.typeAt = sink.pos();
        sink.put(static_cast<uint32_t>(value.type));
        at.valueAt = sink.pos();
        putValue(sink, value);
        layout.kvs.push_back(at);
    }
    layout.metadataEnd = sink.pos();
    // Data offsets are relative to the data section; each tensor starts aligned (spec).
    std::vector<uint64_t> dataOffsets;
    uint64_t next = 0;
    for (const GgufTensorSpec& t : tensors_) {
        dataOffsets.push_back(next);
        next = (next + t.data.size() + align - 1) / align * align;
    }
    for (size_t i = 0; i < tensors_.size(); ++i) {
        const GgufTensorSpec& t = tensors_[i];
        GgufLayout::TensorInfo at{sink.pos(), 0, 0, 0, 0};
        sink.putString(t.name);
        at.nDimsAt = sink.pos();
        sink.put<uint32_t>(static_cast<uint32_t>(t.dims.size()));
        at.dimsAt = sink.pos();
        for (const uint64_t d : t.dims) sink.put<uint64_t>(d);
        at.typeAt = sink.pos();
        sink.put<uint32_t>(t.typeId);
        at.offsetAt = sink.pos();
        sink.put<uint64_t>(t.offset.value_or(dataOffsets[i]));
        layout.tensorInfos.push_back(at);
    }
    layout.tensorInfoEnd = sink.pos();
    sink.padTo(align);
    layout.dataStart = sink.pos();
    for (size_t i = 0; i < tensors_.size(); ++i) {
        sink.padTo(align);
        layout.tensorDataAt.push_back(sink.pos());
        sink.putBytes(tensors_[i].data);
    }
    layout.size = sink.pos();
    return image;
}

Result<void> GgufWriter::writeFile(const std::string& path) const {
    const GgufImage image = toBytes();
    std::FILE* out = openFile(path, "wb");
    if (out == nullptr) {
        return fail(ErrorCode::Io, "GGUF: cannot create '" + path + "': " + std::strerror(errno));
    }
    const bool written = std::fwrite(image.bytes.data(), 1, image.bytes.size(), out) == image.bytes.size();
    const bool closed = std::fclose(out) == 0;
    if (!written || !closed) return fail(ErrorCode::Io, "GGUF: cannot write '" + path + "'");
    return {};
}

}  // namespace hearth
