// Memory-mapped GGUF reader (GGUF spec: docs/gguf.md in ggml; ../shared/GGUF.md).
// Validates everything before anything is used: magic, version (2, 3), every count and string
// length against the file size, value types, general.alignment, and every tensor's offset and
// byte size within the data section, without integer overflow. A bad file is an Error whose
// message names the field and the byte offset; no input makes it crash, hang or allocate hugely.
// Beyond the spec it refuses empty keys and tensor names, keys with control bytes, zero dims,
// and anything past GgufLimits.
// Thread-safety: a GgufFile is immutable after open(); any thread may read it.
// Metadata values are copied out of the file, except long arrays of scalars or strings (GgufArray);
// tensor data is read in place from the mapping.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "engine/error.h"
#include "kernels/dtype.h"

namespace hearth {

enum class GgufType : uint32_t {
    U8 = 0,
    I8 = 1,
    U16 = 2,
    I16 = 3,
    U32 = 4,
    I32 = 5,
    F32 = 6,
    BOOL = 7,
    STRING = 8,
    ARRAY = 9,
    U64 = 10,
    I64 = 11,
    F64 = 12,
};

// Bounds the reader enforces. The first three are the GGUF spec's own; the rest are Hearth's,
// chosen far above any real model (Gemma 3's vocabulary is 786,436 array elements in all).
struct GgufLimits {
    static constexpr uint64_t kMaxKeyBytes = 65535;  // spec: keys are at most 2^16-1 bytes
    static constexpr uint64_t kMaxTensorNameBytes = 64;  // spec: tensor names at most 64 bytes
    static constexpr uint32_t kMaxDims = 4;  // spec: "currently at most 4"
    static constexpr int kMaxArrayDepth = 8;  // an array of arrays is depth 2
    static constexpr uint64_t kMaxArrayElements = 1u << 23;  // over all metadata arrays together
    static constexpr uint64_t kMaxAlignment = 1u << 20;  // general.alignment upper bound
    static constexpr uint32_t kDefaultAlignment = 32;  // spec: general.alignment absent
};

struct GgufValue;
// An array's elements share one type. Two storages: `items`, the elements as values (arrays
// built in memory for GgufWriter, arrays of arrays, and a file's arrays of up to
// kMaxItemsCopied elements), or, for a file's longer arrays of scalars or strings (a vocabulary:
// 262,144 pieces, scores and types), the elements left in place in the file, validated but not
// copied: `items` is then empty and `inPlace` says where they are. size(), item() and stringAt()
// read either storage; an in-place array is valid while its GgufFile lives.
struct GgufArray {
    static constexpr uint64_t kMaxItemsCopied = 1024;

    GgufType elemType = GgufType::U8;
    std::vector<GgufValue> items;
    struct InPlace {
        std::span<const uint8_t> bytes;  // the elements' encoding in the file
        uint64_t count = 0;
        std::vector<uint64_t> starts;  // STRING: offset in bytes of element i's length field
    } inPlace;

    uint64_t size() const;  // elements, copied or left in the file
    GgufValue item(uint64_t i) const;  // element i (i < size()) as a value
    std::string_view stringAt(uint64_t i) const;  // element i of a STRING array; "" otherwise
};

// One metadata value. Storage by kind: unsigned integers as uint64_t, signed as int64_t, F32/F64
// as double (F32 converts exactly), BOOL as bool, STRING as std::string (raw bytes, not checked
// as UTF-8), ARRAY as a shared GgufArray.
struct GgufValue {
    GgufType type = GgufType::U8;
    std::variant<uint64_t, int64_t, double, bool, std::string, std::shared_ptr<GgufArray>> v;

    std::optional<uint64_t> asUInt() const;  // any integer type that is >= 0
    std::optional<int64_t> asInt() const;  // any integer type that fits
    std::optional<double> asFloat() const;  // f32, f64 or any integer
    std::optional<bool> asBool() const;
    const std::string* asString() const;  // nullptr unless STRING
    const GgufArray* asArray() const;  // nullptr unless ARRAY
};

struct GgufTensorInfo {
    std::string name;
    std::vector<int64_t> dims;  // dims[0] is the contiguous row length
    DType type = DType::F32;
    uint64_t offset = 0;  // relative to the data section (GgufFile::dataOffset())
    uint64_t nBytes = 0;  // n_elements / block elements * block bytes
    uint32_t part = 0;  // which file of a split model holds the bytes: GgufFile::partPaths()[part]
    int64_t nElements() const;  // product of dims (validated not to overflow)
};

class MappedFile;

class GgufFile {
public:
    // Maps and validates the file. Errors: Io (cannot open/map), InvalidFormat, Unsupported.
    // Messages are single-line: "GGUF: <field> at offset <n> <problem>"; strings from the file
    // are quoted with control bytes escaped and long ones shortened.
    // A split model (llama.cpp's gguf-split: split.count > 1 in the first file, the parts named
    // <prefix>-00001-of-0000N.gguf ...) opens as one: every part is mapped and validated, the
    // metadata is the first part's, tensors() holds the tensors of all parts (gguf_split.cpp).
    // Errors then also name the part: a missing or damaged part, a part that is not the first.
    static Result<std::unique_ptr<GgufFile>> open(const std::string& path);
    // Validates an in-memory image (not copied: bytes must outlive the GgufFile). Fuzzers use it.
    static Result<std::unique_ptr<GgufFile>> fromBytes(std::span<const uint8_t> bytes);
    ~GgufFile();
    GgufFile(const GgufFile&) = delete;
    GgufFile& operator=(const GgufFile&) = delete;

    uint32_t version() const { return version_; }
    uint64_t alignment() const { return alignment_; }
    uint64_t dataOffset() const { return dataOffset_; }  // file offset of the data section
    const std::string& path() const { return path_; }  // the first part's, for a split model
    uint64_t fileSize() const { return bytes_.size(); }  // this (first) file's bytes
    // The model's files in order: {path()}, or every part of a split model (none for fromBytes).
    const std::vector<std::string>& partPaths() const { return partPaths_; }
    uint64_t modelBytes() const;  // the bytes of all the model's files together

    const std::map<std::string, GgufValue, std::less<>>& metadata() const { return metadata_; }
    const GgufValue* find(std::string_view key) const;  // nullptr when absent

    const std::vector<GgufTensorInfo>& tensors() const { return tensors_; }
    const GgufTensorInfo* findTensor(std::string_view name) const;  // nullptr when absent
    // The tensor's bytes inside the mapping of the part that holds them (already validated to
    // lie within that file).
    std::span<const uint8_t> tensorData(const GgufTensorInfo& t) const;
    // Gives back the memory of the whole pages inside range (bytes of this file's or a part's
    // mapping) that the process holds: they are read from the file again if touched. Nothing
    // for bytes outside the mappings (fromBytes) or on Windows.
    void releasePages(std::span<const uint8_t> range) const;

private:
    GgufFile() = default;
    static Result<std::unique_ptr<GgufFile>> openOne(const std::string& path);
    // A first part's split.count > 1: opens the other parts and takes in their tensors.
    Result<void> openOtherParts();

    std::string path_;
    std::unique_ptr<MappedFile> mapping_;  // null for fromBytes()
    std::span<const uint8_t> bytes_;
    uint32_t version_ = 0;
    uint64_t alignment_ = 32;
    uint64_t dataOffset_ = 0;
    std::map<std::string, GgufValue, std::less<>> metadata_;
    std::vector<GgufTensorInfo> tensors_;
    std::map<std::string, size_t, std::less<>> tensorIndex_;
    std::vector<std::string> partPaths_;
    std::vector<std::unique_ptr<GgufFile>> otherParts_;  // parts 2..N of a split model

    friend class GgufParser;
};

}  // namespace hearth
