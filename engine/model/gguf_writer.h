// Hearth's own GGUF writer (GGUF spec, docs/gguf.md in ggml): builds metadata and tensors in
// memory and writes a v3 (or v2) file with alignment padding. Used by tests to write tiny models
// and hostile files, and by fuzz seeds. It writes what it is given without validating it (a
// repeated tensor name, an unknown type id, a misaligned offset), so that tests can also make
// malformed files; GgufImage::layout says where each section and field lies, for patching bytes.
// Not thread-safe; one owner builds and writes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "engine/error.h"
#include "engine/model/gguf.h"
#include "kernels/dtype.h"

namespace hearth {

// Where the writer put things, as file offsets.
struct GgufLayout {
    struct Kv {
        uint64_t keyAt;  // the key's u64 length
        uint64_t typeAt;  // the u32 value type
        uint64_t valueAt;  // the value (for an array: its u32 element type)
    };
    struct TensorInfo {
        uint64_t nameAt;  // the name's u64 length
        uint64_t nDimsAt;  // the u32 n_dims
        uint64_t dimsAt;  // dims[0] (u64 each)
        uint64_t typeAt;  // the u32 type
        uint64_t offsetAt;  // the u64 offset
    };
    uint64_t headerEnd = 0;  // 24: after magic, version, tensor_count, metadata_kv_count
    uint64_t metadataEnd = 0;  // after the last key/value pair
    uint64_t tensorInfoEnd = 0;  // after the last tensor info (before padding)
    uint64_t dataStart = 0;  // the data section (tensorInfoEnd padded to the alignment)
    uint64_t size = 0;  // the whole file
    std::vector<Kv> kvs;  // in writing order
    std::vector<TensorInfo> tensorInfos;  // in writing order
    std::vector<uint64_t> tensorDataAt;  // file offset of each tensor's bytes
};

struct GgufImage {
    std::vector<uint8_t> bytes;
    GgufLayout layout;
};

// A tensor exactly as it will be written; the raw form lets tests write any n_dims, dim, type
// id or offset.
struct GgufTensorSpec {
    std::string name;
    std::vector<uint64_t> dims;  // dims[0] is the contiguous row length
    uint32_t typeId = 0;  // GGUF/ggml type id (DType values)
    std::vector<uint8_t> data;  // written as given, at the next aligned offset
    std::optional<uint64_t> offset;  // overrides the offset written in the tensor info
};

// Builds GgufValues from C++ values: uint8_t → U8, int8_t → I8, ..., uint64_t → U64,
// float → F32, double → F64, bool → BOOL, std::string / const char* → STRING,
// std::vector<T> → ARRAY of T (vectors of vectors nest). A plain literal 5 is an int → I32.
GgufValue ggufValue(uint8_t v);
GgufValue ggufValue(int8_t v);
GgufValue ggufValue(uint16_t v);
GgufValue ggufValue(int16_t v);
GgufValue ggufValue(uint32_t v);
GgufValue ggufValue(int32_t v);
GgufValue ggufValue(uint64_t v);
GgufValue ggufValue(int64_t v);
GgufValue ggufValue(float v);
GgufValue ggufValue(double v);
GgufValue ggufValue(bool v);
GgufValue ggufValue(std::string v);
GgufValue ggufValue(const char* v);
inline GgufValue ggufValue(GgufValue v) { return v; }
// An array of elemType; items should all have that type (a mismatch writes a malformed file).
GgufValue ggufArray(GgufType elemType, std::vector<GgufValue> items);

template <class T>
GgufValue ggufValue(const std::vector<T>& items) {
    std::vector<GgufValue> values;
    values.reserve(items.size());
    for (const T& item : items) values.push_back(ggufValue(item));
    // An empty vector takes its element type from a default-made T.
    const GgufType elemType = values.empty() ? ggufValue(T{}).type : values.front().type;
    return ggufArray(elemType, std::move(values));
}

class GgufWriter {
public:
    // Version written in the header: 3 (default) or 2 (same layout); any other number is
    // written as given, for hostile tests.
    void setVersion(uint32_t version) { version_ = version; }

    // Sets a key, replacing an earlier value of the same key in place (keys keep first-set order).
    // general.alignment, when it is a u32 power of two up to GgufLimits::kMaxAlignment, is also
    // the alignment the writer pads to; otherwise (absent, or a hostile value) it pads to 32.
    template <class T>
    void set(const std::string& key, T&& value) {
        setValue(key, ggufValue(std::forward<T>(value)));
    }
    void setValue(const std::string& key, GgufValue value);
    void remove(const std::string& key);

    // Adds a tensor (names are not checked for repeats). bytes should be the tensor's exact size.
    void addTensor(std::string name, const std::vector<int64_t>& dims, DType type, std::vector<uint8_t> bytes);
    void addTensor(GgufTensorSpec spec);

    GgufImage toBytes() const;
    // Writes toBytes() to path. Errors: Io.
    Result<void> writeFile(const std::string& path) const;

    // The alignment the data section is padded to (see set()).
    uint64_t alignment() const;

private:
    uint32_t version_ = 3;
    std::vector<std::pair<std::string, GgufValue>> kvs_;
    std::vector<GgufTensorSpec> tensors_;
};

}  // namespace hearth
