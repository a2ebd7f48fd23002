// Internal to the GGUF reader (gguf.cpp, gguf_parser.cpp): a bounds-checked little-endian cursor
// over the file's bytes, and the reader's single-line error messages,
// "GGUF: <field> at offset <n> <problem>". Field names are built only when an error is reported.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "engine/error.h"
#include "engine/model/gguf.h"

namespace hearth::gguf_detail {

// 'text' with control and non-ASCII bytes escaped (\n, \xNN), shortened past 48 bytes, so that
// any string from the file can sit inside a one-line message.
std::string quoted(std::string_view text);

// "GGUF: <field> at offset <offset> <problem>"
std::unexpected<Error> fieldError(ErrorCode code, const std::string& field, uint64_t offset,
                                  const std::string& problem);

// The field ends past the end of the file.
std::unexpected<Error> cutOff(const std::string& field, uint64_t offset, uint64_t need, uint64_t fileSize);

class Cursor {
public:
    explicit Cursor(std::span<const uint8_t> bytes) : bytes_(bytes) {}

    uint64_t pos() const { return pos_; }
    uint64_t size() const { return bytes_.size(); }
    uint64_t left() const { return bytes_.size() - pos_; }

    // Reads a little-endian integer (GGUF is little-endian); false, cursor unmoved, at the end.
    template <class T>
    bool read(T& out) {
        if (left() < sizeof(T)) return false;
        uint64_t v = 0;
        for (size_t i = 0; i < sizeof(T); ++i) v |= uint64_t{bytes_[pos_ + i]} << (8 * i);
        out = static_cast<T>(v);
        pos_ += sizeof(T);
        return true;
    }

    // The bytes from offset `from` (<= pos()) up to pos().
    std::span<const uint8_t> since(uint64_t from) const { return bytes_.subspan(from, pos_ - from); }

    // The next n bytes (n <= left(), checked by the caller), advancing past them.
    std::span<const uint8_t> take(uint64_t n) {
        const auto out = bytes_.subspan(pos_, n);
        pos_ += n;
        return out;
    }

private:
    std::span<const uint8_t> bytes_;
    uint64_t pos_ = 0;
};

// Reads an integer field; `field` is a callable returning the field's name for the message.
template <class T, class Field>
Result<T> readInt(Cursor& cursor, const Field& field) {
    const uint64_t at = cursor.pos();
    T value{};
    if (!cursor.read(value)) return cutOff(field(), at, sizeof(T), cursor.size());
    return value;
}

// Bytes of one encoded element of a fixed-size type (every type but STRING and ARRAY; 1 else).
inline uint64_t scalarBytes(GgufType type) {
    switch (type) {
    case GgufType::U16:
    case GgufType::I16: return 2;
    case GgufType::U32:
    case GgufType::I32:
    case GgufType::F32: return 4;
    case GgufType::U64:
    case GgufType::I64:
    case GgufType::F64: return 8;
    default: return 1;
    }
}

// The value of the fixed-size element of `type` encoded (little-endian) at p; gguf.cpp.
GgufValue decodeScalar(GgufType type, const uint8_t* p);

// Reads a GGUF string (u64 length + bytes, no NUL) in place: its bytes, still in the file. The
// length is checked against the bytes left in the file, then against maxBytes.
template <class Field>
Result<std::span<const uint8_t>> takeString(Cursor& cursor, const Field& field, uint64_t maxBytes) {
    const uint64_t at = cursor.pos();
    const auto length = readInt<uint64_t>(cursor, [&] { return field() + " string length"; });
    if (!length) return std::unexpected(length.error());
    if (*length > cursor.left()) {
        return fieldError(ErrorCode::InvalidFormat, field() + " string length " + std::to_string(*length), at,
                          "exceeds the file (" + std::to_string(cursor.size()) + " bytes, " +
                              std::to_string(cursor.left()) + " left)");
    }
    if (*length > maxBytes) {
        return fieldError(ErrorCode::InvalidFormat, field() + " string length " + std::to_string(*length), at,
                          "exceeds the limit of " + std::to_string(maxBytes) + " bytes");
    }
    return cursor.take(*length);
}

// As takeString, copied out.
template <class Field>
Result<std::string> readString(Cursor& cursor, const Field& field, uint64_t maxBytes) {
    const auto bytes = takeString(cursor, field, maxBytes);
    if (!bytes) return std::unexpected(bytes.error());
    return std::string(reinterpret_cast<const char*>(bytes->data()), bytes->size());
}

}  // namespace hearth::gguf_detail
