// GgufFile: maps a GGUF file read-only (or takes an in-memory image), has GgufParser validate it,
// and answers lookups; GgufValue's typed accessors; the reader's message helpers.
#include "engine/model/gguf.h"

#include <bit>
#include <limits>
#include <new>

#include "engine/model/gguf_cursor.h"
#include "engine/model/gguf_parser.h"
#include "engine/util/mapped_file.h"

namespace hearth {

namespace gguf_detail {

std::string quoted(std::string_view text) {
    constexpr size_t kMaxShown = 48;
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out = "'";
    for (size_t i = 0; i < text.size() && i < kMaxShown; ++i) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (c == '\n') out += "\\n";
        else if (c == '\\' || c == '\'') (out += '\\') += static_cast<char>(c);
        else if (c >= 0x20 && c < 0x7f) out += static_cast<char>(c);
        else ((out += "\\x") += kHex[c >> 4]) += kHex[c & 15];
    }
    if (text.size() > kMaxShown) out += "...";
    return out + "'";
}

std::unexpected<Error> fieldError(ErrorCode code, const std::string& field, uint64_t offset,
                                  const std::string& problem) {
    return fail(code, "GGUF: " + field + " at offset " + std::to_string(offset) + " " + problem);
}

std::unexpected<Error> cutOff(const std::string& field, uint64_t offset, uint64_t need, uint64_t fileSize) {
    auto e = fieldError(
        ErrorCode::InvalidFormat, field, offset,
        "is cut off: it needs " + std::to_string(need) + " bytes and the file ends at " + std::to_string(fileSize));
    e.error().cause = ErrorCause::FileCutOff;
    return e;
}

GgufValue decodeScalar(GgufType type, const uint8_t* p) {
    uint64_t v = 0;
    for (uint64_t i = 0; i < scalarBytes(type); ++i) v |= uint64_t{p[i]} << (8 * i);
    switch (type) {
    case GgufType::I8: return {type, int64_t{static_cast<int8_t>(v)}};
    case GgufType::I16: return {type, int64_t{static_cast<int16_t>(v)}};
    case GgufType::I32: return {type, int64_t{static_cast<int32_t>(v)}};
    case GgufType::I64: return {type, static_cast<int64_t>(v)};
    case GgufType::F32: return {type, static_cast<double>(std::bit_cast<float>(static_cast<uint32_t>(v)))};
    case GgufType::F64: return {type, std::bit_cast<double>(v)};
    case GgufType::BOOL: return {type, v == 1};
    default: return {type, v};  // U8, U16, U32, U64
    }
}

}  // namespace gguf_detail

uint64_t GgufArray::size() const { return items.empty() ? inPlace.count : items.size(); }

GgufValue GgufArray::item(uint64_t i) const {
    if (!items.empty()) return items[i];
    if (elemType == GgufType::STRING) return {elemType, std::string(stringAt(i))};
    return gguf_detail::decodeScalar(elemType, inPlace.bytes.data() + i * gguf_detail::scalarBytes(elemType));
}

std::string_view GgufArray::stringAt(uint64_t i) const {
    if (!items.empty()) {
        const std::string* text = i < items.size() ? items[i].asString() : nullptr;
        return text ? std::string_view(*text) : std::string_view();
    }
    if (elemType != GgufType::STRING || i >= inPlace.count) return {};
    const uint8_t* at = inPlace.bytes.data() + inPlace.starts[i];  // length, then the bytes
    uint64_t length = 0;
    for (int k = 0; k < 8; ++k) length |= uint64_t{at[k]} << (8 * k);
    return {reinterpret_cast<const char*>(at + 8), length};
}

namespace {

// Runs the parser; an allocation failure (bad_alloc) becomes an OutOfMemory error, so no
// exception leaves the reader.
Result<std::unique_ptr<GgufFile>> validated(std::unique_ptr<GgufFile> file) {
    try {
        if (auto ok = GgufParser::parse(*file); !ok) return std::unexpected(ok.error());
        return file;
    } catch (const std::bad_alloc&) {
        return fail(ErrorCode::OutOfMemory, "GGUF: out of memory while reading " + gguf_detail::quoted(file->path()));
    } catch (const std::exception& e) {
        return fail(ErrorCode::InvalidFormat, std::string("GGUF: unexpected error: ") + e.what());
    }
}

}  // namespace

Result<std::unique_ptr<GgufFile>> GgufFile::open(const std::string& path) {
    auto file = openOne(path);
    if (!file) return file;
    if (auto parts = (*file)->openOtherParts(); !parts) return std::unexpected(parts.error());
    return file;
}

Result<std::unique_ptr<GgufFile>> GgufFile::openOne(const std::string& path) {
    auto mapped = MappedFile::open(path);
    if (!mapped) return fail(mapped.error().code, "GGUF: " + mapped.error().message);
    std::unique_ptr<GgufFile> file(new (std::nothrow) GgufFile());
    if (!file) return fail(ErrorCode::OutOfMemory, "GGUF: out of memory");
    file->path_ = path;
    file->partPaths_ = {path};
    file->bytes_ = (*mapped)->bytes();  // an empty file fails in the parser
    file->mapping_ = std::move(*mapped);
    return validated(std::move(file));
}

Result<std::unique_ptr<GgufFile>> GgufFile::fromBytes(std::span<const uint8_t> bytes) {
    std::unique_ptr<GgufFile> file(new (std::nothrow) GgufFile());
    if (!file) return fail(ErrorCode::OutOfMemory, "GGUF: out of memory");
    file->bytes_ = bytes;
    return validated(std::move(file));
}

GgufFile::~GgufFile() = default;  // here, where MappedFile is complete

const GgufValue* GgufFile::find(std::string_view key) const {
    const auto it = metadata_.find(key);
    return it == metadata_.end() ? nullptr : &it->second;
}

const GgufTensorInfo* GgufFile::findTensor(std::string_view name) const {
    const auto it = tensorIndex_.find(name);
    return it == tensorIndex_.end() ? nullptr : &tensors_[it->second];
}

std::span<const uint8_t> GgufFile::tensorData(const GgufTensorInfo& t) const {
    // Validated at open for this file's tensors; a foreign info gets an empty span.
    if (t.part > otherParts_.size()) return {};
    const GgufFile& holder = t.part == 0 ? *this : *otherParts_[t.part - 1];
    const uint64_t dataBytes = holder.bytes_.size() - holder.dataOffset_;
    if (t.offset > dataBytes || t.nBytes > dataBytes - t.offset) return {};
    return holder.bytes_.subspan(holder.dataOffset_ + t.offset, t.nBytes);
}

void GgufFile::releasePages(std::span<const uint8_t> range) const {
    if (mapping_) mapping_->release(range);
    for (const auto& part : otherParts_) part->releasePages(range);
}

uint64_t GgufFile::modelBytes() const {
    uint64_t n = bytes_.size();
    for (const auto& part : otherParts_) n += part->bytes_.size();
    return n;
}

int64_t GgufTensorInfo::nElements() const {
    int64_t n = 1;
    for (const int64_t d : dims) n *= d;
    return n;
}

std::optional<uint64_t> GgufValue::asUInt() const {
    if (const auto* u = std::get_if<uint64_t>(&v)) return *u;
    if (const auto* i = std::get_if<int64_t>(&v); i && *i >= 0) return static_cast<uint64_t>(*i);
    return std::nullopt;
}

std::optional<int64_t> GgufValue::asInt() const {
    if (const auto* i = std::get_if<int64_t>(&v)) return *i;
    const auto* u = std::get_if<uint64_t>(&v);
    if (u && *u <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        return static_cast<int64_t>(*u);
    }
    return std::nullopt;
}

std::optional<double> GgufValue::asFloat() const {
    if (const auto* d = std::get_if<double>(&v)) return *d;
    if (const auto* u = std::get_if<uint64_t>(&v)) return static_cast<double>(*u);
    if (const auto* i = std::get_if<int64_t>(&v)) return static_cast<double>(*i);
    return std::nullopt;
}

std::optional<bool> GgufValue::asBool() const {
    if (const auto* b = std::get_if<bool>(&v)) return *b;
    return std::nullopt;
}

const std::string* GgufValue::asString() const { return std::get_if<std::string>(&v); }

const GgufArray* GgufValue::asArray() const {
    const auto* array = std::get_if<std::shared_ptr<GgufArray>>(&v);
    return array ? array->get() : nullptr;
}

}  // namespace hearth
