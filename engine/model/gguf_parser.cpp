// Parses and validates the header and metadata of a GGUF file (GGUF spec, docs/gguf.md in
// ggml): magic, version, counts, and key/value pairs of all 13 value types, arrays nested to a
// bounded depth. Every count and length is checked against the bytes left before anything is
// allocated. The tensor directory is in gguf_tensors.cpp.
#include "engine/model/gguf_parser.h"

#include <bit>
#include <limits>

namespace hearth {
namespace {

using gguf_detail::Cursor;
using gguf_detail::fieldError;
using gguf_detail::quoted;
using gguf_detail::readInt;
using gguf_detail::readString;
using namespace std::string_literals;

std::string num(uint64_t v) { return std::to_string(v); }

// Bytes of the smallest encoding of one value of a type (spec: strings are a u64 length plus
// bytes; arrays a u32 element type plus a u64 count). Bounds an array count by the bytes left.
uint64_t minEncodedBytes(GgufType type) {
    switch (type) {
    case GgufType::U8:
    case GgufType::I8:
    case GgufType::BOOL: return 1;
    case GgufType::U16:
    case GgufType::I16: return 2;
    case GgufType::U32:
    case GgufType::I32:
    case GgufType::F32: return 4;
    case GgufType::U64:
    case GgufType::I64:
    case GgufType::F64:
    case GgufType::STRING: return 8;
    case GgufType::ARRAY: return 12;
    }
    return 1;
}

// Smallest key/value pair: key length (8) + a 1-byte key + value type (4) + a 1-byte value.
constexpr uint64_t kMinKvBytes = 14;
// Smallest tensor info: name length (8) + 1-byte name + n_dims (4) + one dim (8) + type (4) +
// offset (8).
constexpr uint64_t kMinTensorInfoBytes = 33;

// Names the value being read in messages: "metadata 'tokenizer.ggml.tokens'[12]".
struct ValuePath {
    std::string base;
    std::vector<uint64_t> index;  // enclosing array indices, outermost first

    std::string str() const {
        std::string out = base;
        for (const uint64_t i : index) ((out += '[') += num(i)) += ']';
        return out;
    }
};

// Reads metadata values; counts every array element against GgufLimits::kMaxArrayElements so
// that a file cannot make the reader allocate far more than its own size.
class ValueReader {
public:
    explicit ValueReader(Cursor& cursor) : cursor_(cursor) {}

    template <class Field>
    Result<GgufType> readType(const Field& field) {
        const uint64_t at = cursor_.pos();
        const auto raw = readInt<uint32_t>(cursor_, field);
        if (!raw) return std::unexpected(raw.error());
        if (*raw > static_cast<uint32_t>(GgufType::F64)) {  // spec: value types 0..12
            return fieldError(ErrorCode::InvalidFormat, field() + " " + num(*raw), at,
                              "is not a GGUF value type (0..12)");
        }
        return static_cast<GgufType>(*raw);
    }

    // depth: the number of arrays that enclose this value (0 for a key's own value).
    Result<GgufValue> read(GgufType type, ValuePath& path, int depth);

private:
    template <class Raw, class Stored>
    Result<GgufValue> scalar(GgufType type, const ValuePath& path) {
        const auto raw = readInt<Raw>(cursor_, [&] { return path.str(); });
        if (!raw) return std::unexpected(raw.error());
        return GgufValue{type, static_cast<Stored>(*raw)};
    }
    Result<GgufValue> readFloat32(const ValuePath& path);
    Result<GgufValue> readFloat64(const ValuePath& path);
    Result<GgufValue> readBool(const ValuePath& path);
    Result<GgufValue> readArray(ValuePath& path, int depth);
    Result<void> readInPlace(GgufArray& array, ValuePath& path);

    Cursor& cursor_;
    uint64_t nArrayElements_ = 0;
};

Result<GgufValue> ValueReader::read(GgufType type, ValuePath& path, int depth) {
    switch (type) {
    case GgufType::U8: return scalar<uint8_t, uint64_t>(type, path);
    case GgufType::I8: return scalar<int8_t, int64_t>(type, path);
    case GgufType::U16: return scalar<uint16_t, uint64_t>(type, path);
    case GgufType::I16: return scalar<int16_t, int64_t>(type, path);
    case GgufType::U32: return scalar<uint32_t, uint64_t>(type, path);
    case GgufType::I32: return scalar<int32_t, int64_t>(type, path);
    case GgufType::U64: return scalar<uint64_t, uint64_t>(type, path);
    case GgufType::I64: return scalar<int64_t, int64_t>(type, path);
    case GgufType::F32: return readFloat32(path);
    case GgufType::F64: return readFloat64(path);
    case GgufType::BOOL: return readBool(path);
    case GgufType::ARRAY: return readArray(path, depth);
    case GgufType::STRING: {
        auto text = readString(
            cursor_, [&] { return path.str(); }, std::numeric_limits<uint64_t>::max());
        if (!text) return std::unexpected(text.error());
        return GgufValue{type, std::move(*text)};
    }
    }
    return fieldError(ErrorCode::InvalidFormat, path.str(), cursor_.pos(), "has no value type");
}

Result<GgufValue> ValueReader::readFloat32(const ValuePath& path) {
    const auto bits = readInt<uint32_t>(cursor_, [&] { return path.str(); });
    if (!bits) return std::unexpected(bits.error());
    return GgufValue{GgufType::F32, static_cast<double>(std::bit_cast<float>(*bits))};
}

Result<GgufValue> ValueReader::readFloat64(const ValuePath& path) {
    const auto bits = readInt<uint64_t>(cursor_, [&] { return path.str(); });
    if (!bits) return std::unexpected(bits.error());
    return GgufValue{GgufType::F64, std::bit_cast<double>(*bits)};
}

Result<GgufValue> ValueReader::readBool(const ValuePath& path) {
    const uint64_t at = cursor_.pos();
    const auto raw = readInt<uint8_t>(cursor_, [&] { return path.str(); });
    if (!raw) return std::unexpected(raw.error());
    // Spec: "1-byte value where 0 is false and 1 is true. Anything else is invalid".
    if (*raw > 1) {
        return fieldError(ErrorCode::InvalidFormat, path.str() + " bool " + num(*raw), at, "is neither 0 nor 1");
    }
    return GgufValue{GgufType::BOOL, *raw == 1};
}

Result<GgufValue> ValueReader::readArray(ValuePath& path, int depth) {
    const uint64_t typeAt = cursor_.pos();
    const auto elemType = readType([&] { return path.str() + " array element type"; });
    if (!elemType) return std::unexpected(elemType.error());
    // Spec: arrays may nest; the depth is Hearth's bound (recursion and memory stay small).
    if (*elemType == GgufType::ARRAY && depth + 2 > GgufLimits::kMaxArrayDepth) {
        return fieldError(ErrorCode::InvalidFormat, path.str() + " array element type", typeAt,
                          "nests arrays deeper than " + num(GgufLimits::kMaxArrayDepth) + " levels");
    }
    const uint64_t countAt = cursor_.pos();
    const auto count = readInt<uint64_t>(cursor_, [&] { return path.str() + " array count"; });
    if (!count) return std::unexpected(count.error());
    const uint64_t minBytes = minEncodedBytes(*elemType);
    if (*count > cursor_.left() / minBytes) {
        return fieldError(ErrorCode::InvalidFormat, path.str() + " array count " + num(*count), countAt,
                          "exceeds the file (" + num(cursor_.size()) + " bytes, " + num(cursor_.left()) + " left, " +
                              num(minBytes) + " or more per element)");
    }
    if (*count > GgufLimits::kMaxArrayElements - nArrayElements_) {
        return fieldError(ErrorCode::OutOfMemory, path.str() + " array count " + num(*count), countAt,
                          "exceeds Hearth's limit of " + num(GgufLimits::kMaxArrayElements) + " array elements in all");
    }
    nArrayElements_ += *count;
    auto array = std::make_shared<GgufArray>();
    array->elemType = *elemType;
    if (*elemType != GgufType::ARRAY && *count > GgufArray::kMaxItemsCopied) {
        array->inPlace.count = *count;
        if (auto ok = readInPlace(*array, path); !ok) return std::unexpected(ok.error());
        return GgufValue{GgufType::ARRAY, std::move(array)};
    }
    array->items.reserve(*count);
    path.index.push_back(0);
    for (uint64_t i = 0; i < *count; ++i) {
        path.index.back() = i;
        auto item = read(*elemType, path, depth + 1);
        if (!item) return std::unexpected(item.error());
        array->items.push_back(std::move(*item));
    }
    path.index.pop_back();
    return GgufValue{GgufType::ARRAY, std::move(array)};
}

// A long array of scalars or strings, validated as read() would and left in the file: its bytes,
// and for strings where each starts (GgufArray::InPlace). The count is already bounded.
Result<void> ValueReader::readInPlace(GgufArray& array, ValuePath& path) {
    GgufArray::InPlace& in = array.inPlace;
    const uint64_t begin = cursor_.pos();
    path.index.push_back(0);
    if (array.elemType == GgufType::STRING) {
        in.starts.reserve(in.count);
        for (uint64_t i = 0; i < in.count; ++i) {
            path.index.back() = i;
            in.starts.push_back(cursor_.pos() - begin);
            const auto text = gguf_detail::takeString(
                cursor_, [&] { return path.str(); }, std::numeric_limits<uint64_t>::max());
            if (!text) return std::unexpected(text.error());
        }
    } else {
        // read() checked count <= left / element size, so the elements are all in the file.
        const auto bytes = cursor_.take(in.count * gguf_detail::scalarBytes(array.elemType));
        for (uint64_t i = 0; array.elemType == GgufType::BOOL && i < in.count; ++i) {
            if (bytes[i] > 1) {  // spec: 0 is false and 1 is true; anything else is invalid
                path.index.back() = i;
                return fieldError(ErrorCode::InvalidFormat, path.str() + " bool " + num(bytes[i]), begin + i,
                                  "is neither 0 nor 1");
            }
        }
    }
    path.index.pop_back();
    in.bytes = cursor_.since(begin);
    return {};
}

// Spec: keys are ASCII, at most 65535 bytes (checked while reading). Hearth also refuses an
// empty key and control bytes, so that a key can always be shown on one line.
Result<void> checkKey(const std::string& key, uint64_t index, uint64_t at) {
    const std::string field = "metadata key #" + num(index) + " " + quoted(key);
    if (key.empty()) return fieldError(ErrorCode::InvalidFormat, field, at, "is empty");
    for (const char c : key) {
        const auto byte = static_cast<unsigned char>(c);
        if (byte < 0x20 || byte > 0x7e) {
            return fieldError(ErrorCode::InvalidFormat, field, at, "is not printable ASCII (byte " + num(byte) + ")");
        }
    }
    return {};
}

// general.alignment: spec type u32; ggml requires a power of two; Hearth bounds it.
Result<uint64_t> readAlignment(const GgufValue& value, uint64_t at) {
    const std::string field = "metadata 'general.alignment'";
    if (value.type != GgufType::U32) {
        return fieldError(ErrorCode::InvalidFormat, field, at,
                          "has value type " + num(static_cast<uint32_t>(value.type)) + ", not u32 (4)");
    }
    const uint64_t alignment = std::get<uint64_t>(value.v);
    if (!std::has_single_bit(alignment)) {
        return fieldError(ErrorCode::InvalidFormat, field + " " + num(alignment), at, "is not a power of two");
    }
    if (alignment > GgufLimits::kMaxAlignment) {
        return fieldError(ErrorCode::InvalidFormat, field + " " + num(alignment), at,
                          "exceeds the limit of " + num(GgufLimits::kMaxAlignment));
    }
    return alignment;
}

}  // namespace

Result<void> GgufParser::parse(GgufFile& file) {
    Cursor cursor(file.bytes_);
    uint64_t nTensors = 0;
    uint64_t nKv = 0;
    if (auto ok = parseHeader(file, cursor, nTensors, nKv); !ok) return ok;
    if (auto ok = parseMetadata(file, cursor, nKv); !ok) return ok;
    return parseTensorInfos(file, cursor, nTensors);
}

Result<void> GgufParser::parseHeader(GgufFile& file, Cursor& cursor, uint64_t& nTensors, uint64_t& nKv) {
    // Spec: the magic is the bytes "GGUF" (0x47 0x47 0x55 0x46), whatever the byte order.
    if (cursor.left() < 4) return gguf_detail::cutOff("header magic", 0, 4, cursor.size());
    const auto magic = cursor.take(4);
    if (std::string_view(reinterpret_cast<const char*>(magic.data()), 4) != "GGUF") {
        return fieldError(
            ErrorCode::InvalidFormat, "header magic", 0,
            "is " + quoted({reinterpret_cast<const char*>(magic.data()), 4}) + ", not 'GGUF' (not a GGUF file)");
    }
    const auto version = readInt<uint32_t>(cursor, [] { return "header version"s; });
    if (!version) return std::unexpected(version.error());
    // Version 1 had 32-bit counts and is obsolete; 2 and 3 share this layout (3 added big-endian
    // files, which announce themselves by a byte-swapped version).
    if (*version != 2 && *version != 3) {
        const bool swapped = *version == 0x02000000u || *version == 0x03000000u;
        return fieldError(ErrorCode::Unsupported, "header version " + num(*version), 4,
                          swapped ? "is a big-endian file; Hearth reads little-endian GGUF only"
                                  : "is not supported (Hearth reads versions 2 and 3)");
    }
    file.version_ = *version;
    const auto tensors = readInt<uint64_t>(cursor, [] { return "header tensor_count"s; });
    if (!tensors) return std::unexpected(tensors.error());
    const auto kvs = readInt<uint64_t>(cursor, [] { return "header metadata_kv_count"s; });
    if (!kvs) return std::unexpected(kvs.error());
    const auto tooMany = [&](const char* field, uint64_t count, uint64_t at, uint64_t minBytes) {
        return fieldError(ErrorCode::InvalidFormat, std::string(field) + " " + num(count), at,
                          "exceeds the file (" + num(cursor.size()) + " bytes, " + num(cursor.left()) + " left, " +
                              num(minBytes) + " or more per entry)");
    };
    if (*kvs > cursor.left() / kMinKvBytes) {
        return tooMany("header metadata_kv_count", *kvs, 16, kMinKvBytes);
    }
    if (*tensors > cursor.left() / kMinTensorInfoBytes) {
        return tooMany("header tensor_count", *tensors, 8, kMinTensorInfoBytes);
    }
    nTensors = *tensors;
    nKv = *kvs;
    return {};
}

Result<void> GgufParser::parseMetadata(GgufFile& file, Cursor& cursor, uint64_t nKv) {
    ValueReader reader(cursor);
    for (uint64_t i = 0; i < nKv; ++i) {
        const uint64_t keyAt = cursor.pos();
        auto key = readString(
            cursor, [&] { return "metadata key #" + num(i); }, GgufLimits::kMaxKeyBytes);
        if (!key) return std::unexpected(key.error());
        if (auto ok = checkKey(*key, i, keyAt); !ok) return ok;
        if (file.metadata_.contains(*key)) {  // spec: keys identify values, so each is unique
            return fieldError(ErrorCode::InvalidFormat, "metadata key #" + num(i) + " " + quoted(*key), keyAt,
                              "repeats an earlier key");
        }
        ValuePath path{"metadata " + quoted(*key), {}};
        const auto type = reader.readType([&] { return path.str() + " value type"; });
        if (!type) return std::unexpected(type.error());
        const uint64_t valueAt = cursor.pos();
        auto value = reader.read(*type, path, 0);
        if (!value) return std::unexpected(value.error());
        if (*key == "general.alignment") {
            const auto alignment = readAlignment(*value, valueAt);
            if (!alignment) return std::unexpected(alignment.error());
            file.alignment_ = *alignment;
        }
        file.metadata_.emplace(std::move(*key), std::move(*value));
    }
    return {};
}

}  // namespace hearth
