// Parses and validates a GGUF file's tensor directory (GGUF spec, docs/gguf.md in ggml): names,
// dimensions, types, offsets; then places the data section and checks that every tensor's
// bytes lie inside the file. Sizes are computed without integer overflow.
#include <limits>

#include "engine/model/gguf_parser.h"
#include "kernels/dtype.h"

namespace hearth {
namespace {

using gguf_detail::Cursor;
using gguf_detail::fieldError;
using gguf_detail::quoted;
using gguf_detail::readInt;
using gguf_detail::readString;

std::string num(uint64_t v) { return std::to_string(v); }

// "F32, F16, ..." from dtype.h, so the message follows what kernels/ supports.
std::string weightTypeNames() {
    std::string names;
    for (uint32_t id = 0; id < 64; ++id) {
        const DTypeInfo info = dtypeInfo(id);
        if (info.name == nullptr || !isWeightType(static_cast<DType>(id))) continue;
        names += (names.empty() ? "" : ", ") + std::string(info.name);
    }
    return names;
}

// Names a tensor in messages: "tensor #3 'blk.0.attn_q.weight'".
std::string tensorField(uint64_t index, const std::string& name) {
    return "tensor #" + num(index) + " " + quoted(name);
}

Result<std::string> readTensorName(Cursor& cursor, uint64_t index) {
    const uint64_t at = cursor.pos();
    auto name = readString(
        cursor, [&] { return "tensor #" + num(index) + " name"; },
        GgufLimits::kMaxTensorNameBytes);  // spec: at most 64 bytes
    if (name && name->empty()) {
        return fieldError(ErrorCode::InvalidFormat, "tensor #" + num(index) + " name", at, "is empty");
    }
    return name;
}

// n_dims (spec: at most 4) and dims, each >= 1; their product must fit int64_t.
Result<std::vector<int64_t>> readDims(Cursor& cursor, const std::string& field) {
    const uint64_t nDimsAt = cursor.pos();
    const auto nDims = readInt<uint32_t>(cursor, [&] { return field + " n_dims"; });
    if (!nDims) return std::unexpected(nDims.error());
    if (*nDims == 0 || *nDims > GgufLimits::kMaxDims) {
        return fieldError(ErrorCode::InvalidFormat, field + " n_dims " + num(*nDims), nDimsAt,
                          "is outside 1.." + num(GgufLimits::kMaxDims));
    }
    std::vector<int64_t> dims;
    int64_t nElements = 1;
    for (uint32_t d = 0; d < *nDims; ++d) {
        const uint64_t at = cursor.pos();
        const std::string name = field + " dims[" + num(d) + "]";
        const auto dim = readInt<uint64_t>(cursor, [&] { return name; });
        if (!dim) return std::unexpected(dim.error());
        if (*dim == 0) {
            return fieldError(ErrorCode::InvalidFormat, name + " 0", at, "must be at least 1");
        }
        if (*dim > static_cast<uint64_t>(std::numeric_limits<int64_t>::max() / nElements)) {
            return fieldError(ErrorCode::InvalidFormat, name + " " + num(*dim), at,
                              "makes the element count overflow 2^63-1");
        }
        nElements *= static_cast<int64_t>(*dim);
        dims.push_back(static_cast<int64_t>(*dim));
    }
    return dims;
}

// The type (a weight type of kernels/dtype.h) and the byte size it gives the tensor.
Result<DType> readTensorType(Cursor& cursor, const std::string& field, GgufTensorInfo& tensor, uint64_t dimsAt) {
    const uint64_t at = cursor.pos();
    const auto id = readInt<uint32_t>(cursor, [&] { return field + " type"; });
    if (!id) return std::unexpected(id.error());
    const DTypeInfo info = dtypeInfo(*id);
    if (info.name == nullptr || !isWeightType(static_cast<DType>(*id))) {
        return fieldError(ErrorCode::Unsupported, field + " type " + num(*id), at,
                          "is not a weight type Hearth reads (" + weightTypeNames() + ")");
    }
    // Spec/ggml: rows are whole blocks, so dims[0] is a multiple of the block size.
    if (tensor.dims[0] % info.blockElems != 0) {
        return fieldError(ErrorCode::InvalidFormat, field + " dims[0] " + num(static_cast<uint64_t>(tensor.dims[0])),
                          dimsAt,
                          "is not a multiple of the " + std::string(info.name) + " block size " + num(info.blockElems));
    }
    const uint64_t nBlocks = static_cast<uint64_t>(tensor.nElements()) / info.blockElems;
    if (__builtin_mul_overflow(nBlocks, static_cast<uint64_t>(info.blockBytes), &tensor.nBytes)) {
        return fieldError(ErrorCode::InvalidFormat, field + " type " + info.name, at,
                          "makes the byte size overflow 2^64");
    }
    return static_cast<DType>(*id);
}

// One tensor info; offsetAt receives where its offset field lies, for later messages.
Result<GgufTensorInfo> readTensorInfo(Cursor& cursor, uint64_t index, uint64_t alignment, uint64_t& offsetAt) {
    auto name = readTensorName(cursor, index);
    if (!name) return std::unexpected(name.error());
    const std::string field = tensorField(index, *name);
    GgufTensorInfo tensor;
    tensor.name = std::move(*name);
    const uint64_t dimsAt = cursor.pos() + 4;
    auto dims = readDims(cursor, field);
    if (!dims) return std::unexpected(dims.error());
    tensor.dims = std::move(*dims);
    const auto type = readTensorType(cursor, field, tensor, dimsAt);
    if (!type) return std::unexpected(type.error());
    tensor.type = *type;
    offsetAt = cursor.pos();
    const auto offset = readInt<uint64_t>(cursor, [&] { return field + " offset"; });
    if (!offset) return std::unexpected(offset.error());
    if (*offset % alignment != 0) {  // spec: "Must be a multiple of ALIGNMENT"
        return fieldError(ErrorCode::InvalidFormat, field + " offset " + num(*offset), offsetAt,
                          "is not a multiple of the alignment " + num(alignment));
    }
    tensor.offset = *offset;
    return tensor;
}

}  // namespace

Result<void> GgufParser::parseTensorInfos(GgufFile& file, Cursor& cursor, uint64_t nTensors) {
    std::vector<uint64_t> offsetAts(nTensors);  // nTensors was bounded by the bytes left
    file.tensors_.reserve(nTensors);
    for (uint64_t i = 0; i < nTensors; ++i) {
        const uint64_t at = cursor.pos();
        auto tensor = readTensorInfo(cursor, i, file.alignment_, offsetAts[i]);
        if (!tensor) return std::unexpected(tensor.error());
        if (!file.tensorIndex_.emplace(tensor->name, i).second) {
            return fieldError(ErrorCode::InvalidFormat, tensorField(i, tensor->name), at,
                              "repeats an earlier tensor name");
        }
        file.tensors_.push_back(std::move(*tensor));
    }
    // Spec: the tensor infos are followed by padding to the alignment, then the data section.
    const uint64_t infoEnd = cursor.pos();
    const uint64_t size = cursor.size();
    file.dataOffset_ = (infoEnd + file.alignment_ - 1) / file.alignment_ * file.alignment_;
    if (nTensors == 0) {  // nothing is read there: a file without tensors may end unpadded
        file.dataOffset_ = std::min(file.dataOffset_, size);
        return {};
    }
    if (file.dataOffset_ > size) {
        auto e = fieldError(ErrorCode::InvalidFormat, "data section", infoEnd,
                            "starts at " + num(file.dataOffset_) + " (padded to " + num(file.alignment_) +
                                "), past the end of the file (" + num(size) + " bytes)");
        e.error().cause = ErrorCause::FileCutOff;
        return e;
    }
    const uint64_t dataBytes = size - file.dataOffset_;
    for (uint64_t i = 0; i < nTensors; ++i) {
        const GgufTensorInfo& t = file.tensors_[i];
        if (t.offset > dataBytes || t.nBytes > dataBytes - t.offset) {
            auto e =
                fieldError(ErrorCode::InvalidFormat, tensorField(i, t.name) + " offset " + num(t.offset), offsetAts[i],
                           "puts its " + num(t.nBytes) + " bytes past the end of the file (" + num(size) +
                               " bytes, data section at " + num(file.dataOffset_) + ")");
            e.error().cause = ErrorCause::FileCutOff;
            return e;
        }
    }
    return {};
}

}  // namespace hearth
