// Hyperparameter keys and tensor binding with every bound checked (GGUF.md "Keys"; loader
// hardening lessons: a block_count larger than fixed per-layer arrays was once an RCE).
#include "engine/str_cat.h"
#include "engine/model/hparams.h"

#include <cmath>
#include <cstdint>
#include <cstring>

#include "engine/model/gguf.h"

namespace hearth {
namespace {

// Limits far above any real model, far below what would exhaust memory.
constexpr int64_t kMaxLayers = 1024;
constexpr int64_t kMaxEmbd = 65536;
constexpr int64_t kMaxHeads = 1024;
constexpr int64_t kMaxFf = 1 << 20;
constexpr int64_t kMaxContext = 1 << 24;
constexpr int64_t kMaxVocab = 1 << 22;
// Alignment of every weight's data in memory: that of float, the widest element the kernels load.
constexpr uintptr_t kWeightAlignment = alignof(float);

}  // namespace

Result<int64_t> readIntKey(const GgufFile& file, std::string_view arch, std::string_view suffix, int64_t lo, int64_t hi,
                           std::optional<int64_t> fallback) {
    const std::string key = strCat(arch, ".", suffix);
    const GgufValue* v = file.find(key);
    if (!v) {
        if (fallback) return *fallback;
        return fail(ErrorCode::InvalidFormat, strCat("missing metadata key ", key));
    }
    const std::optional<int64_t> x = v->asInt();
    if (!x) return fail(ErrorCode::InvalidFormat, strCat("metadata key ", key, " is not an integer"));
    if (*x < lo || *x > hi)
        return fail(ErrorCode::InvalidFormat,
                    strCat("metadata key ", key, " = ", *x, " is out of range (", lo, "..", hi, ")"));
    return *x;
}

Result<double> readFloatKey(const GgufFile& file, std::string_view arch, std::string_view suffix, double lo, double hi,
                            std::optional<double> fallback) {
    const std::string key = strCat(arch, ".", suffix);
    const GgufValue* v = file.find(key);
    if (!v) {
        if (fallback) return *fallback;
        return fail(ErrorCode::InvalidFormat, strCat("missing metadata key ", key));
    }
    const std::optional<double> x = v->asFloat();
    if (!x) return fail(ErrorCode::InvalidFormat, strCat("metadata key ", key, " is not a number"));
    if (!(*x >= lo && *x <= hi))  // also rejects NaN
        return fail(ErrorCode::InvalidFormat,
                    strCat("metadata key ", key, " = ", *x, " is out of range (", lo, "..", hi, ")"));
    return *x;
}

Result<ModelConfig> readCommonConfig(const GgufFile& file, std::string_view arch) {
    ModelConfig c;
    c.architecture = std::string(arch);
    if (const GgufValue* v = file.find("general.name"); v && v->asString()) c.name = *v->asString();
    auto layers = readIntKey(file, arch, "block_count", 1, kMaxLayers);
    if (!layers) return std::unexpected(layers.error());
    auto embd = readIntKey(file, arch, "embedding_length", 1, kMaxEmbd);
    if (!embd) return std::unexpected(embd.error());
    auto heads = readIntKey(file, arch, "attention.head_count", 1, kMaxHeads);
    if (!heads) return std::unexpected(heads.error());
    auto kvHeads = readIntKey(file, arch, "attention.head_count_kv", 1, *heads, *heads);
    if (!kvHeads) return std::unexpected(kvHeads.error());
    if (*heads % *kvHeads != 0)
        return fail(ErrorCode::InvalidFormat,
                    strCat("head_count ", *heads, " is not a multiple of head_count_kv ", *kvHeads));
    auto headDim = readIntKey(file, arch, "attention.key_length", 1, kMaxEmbd,
                              *embd % *heads == 0 ? std::optional<int64_t>(*embd / *heads) : std::nullopt);
    if (!headDim) return std::unexpected(headDim.error());
    auto ff = readIntKey(file, arch, "feed_forward_length", 1, kMaxFf);
    if (!ff) return std::unexpected(ff.error());
    auto ctx = readIntKey(file, arch, "context_length", 1, kMaxContext, 2048);
    if (!ctx) return std::unexpected(ctx.error());
    auto rot = readIntKey(file, arch, "rope.dimension_count", 2, *headDim, *headDim);
    if (!rot) return std::unexpected(rot.error());
    auto base = readFloatKey(file, arch, "rope.freq_base", 1.0, 1e12, 10000.0);
    if (!base) return std::unexpected(base.error());
    auto eps = readFloatKey(file, arch, "attention.layer_norm_rms_epsilon", 1e-12, 1.0);
    if (!eps) return std::unexpected(eps.error());
    if (*rot % 2 != 0) return fail(ErrorCode::InvalidFormat, "rope.dimension_count must be even");
    c.nLayers = static_cast<int>(*layers);
    c.nEmbd = static_cast<int>(*embd);
    c.nHeads = static_cast<int>(*heads);
    c.nKvHeads = static_cast<int>(*kvHeads);
    c.headDim = static_cast<int>(*headDim);
    c.nFf = static_cast<int>(*ff);
    c.contextLength = static_cast<int>(*ctx);
    c.nRot = static_cast<int>(*rot);
    c.ropeFreqBase = static_cast<float>(*base);
    c.rmsEps = static_cast<float>(*eps);
    const GgufTensorInfo* embdTensor = file.findTensor("token_embd.weight");
    if (!embdTensor || embdTensor->dims.size() != 2)
        return fail(ErrorCode::InvalidFormat, "missing 2-D tensor token_embd.weight");
    auto vocab = readIntKey(file, arch, "vocab_size", 1, kMaxVocab, embdTensor->dims[1]);
    if (!vocab) return std::unexpected(vocab.error());
    c.nVocab = static_cast<int>(*vocab);
    for (const GgufTensorInfo& t : file.tensors()) c.nParams += static_cast<uint64_t>(t.nElements());
    return c;
}

Result<WeightView> bindWeight(const GgufFile& file, const std::string& name, int64_t nCols, int64_t nRows) {
    const GgufTensorInfo* t = file.findTensor(name);
    if (!t) return fail(ErrorCode::InvalidFormat, strCat("missing tensor ", name));
    const bool is1d = nRows == 1 && t->dims.size() == 1 && t->dims[0] == nCols;
    const bool is2d = t->dims.size() == 2 && t->dims[0] == nCols && t->dims[1] == nRows;
    if (!is1d && !is2d)
        return fail(ErrorCode::InvalidFormat,
                    strCat("tensor ", name, " has the wrong shape (expected [", nCols, ", ", nRows, "])"));
    // The kernels read weights as floats, halves and blocks with half scales: the data must be
    // aligned for them. Any general.alignment of 4 or more guarantees it (the mapping starts on
    // a page); the reader accepts 1 and 2 as well (ggml asks only for a power of two).
    const uint8_t* data = file.tensorData(*t).data();
    if (reinterpret_cast<uintptr_t>(data) % kWeightAlignment != 0)
        return fail(ErrorCode::Unsupported,
                    strCat("tensor ", name, " data at file offset ", file.dataOffset() + t->offset, " is not ",
                           kWeightAlignment, "-byte aligned (general.alignment ", file.alignment(), ")"));
    return WeightView{t->type, data, nRows, nCols};
}

Result<const float*> bindNorm(const GgufFile& file, const std::string& name, int64_t n) {
    auto w = bindWeight(file, name, n, 1);
    if (!w) return std::unexpected(w.error());
    if (w->type != DType::F32) return fail(ErrorCode::Unsupported, strCat("tensor ", name, " must be F32"));
    // The reader guarantees the data lies within the mapping; bindWeight, that it is aligned.
    return static_cast<const float*>(w->data);
}

Result<OutputHead> bindOutputHead(const GgufFile& file, const ModelConfig& c) {
    OutputHead head;
    auto embd = bindWeight(file, "token_embd.weight", c.nEmbd, c.nVocab);
    if (!embd) return std::unexpected(embd.error());
    head.tokenEmbd = *embd;
    head.tied = file.findTensor("output.weight") == nullptr;
    auto out = head.tied ? embd : bindWeight(file, "output.weight", c.nEmbd, c.nVocab);
    if (!out) return std::unexpected(out.error());
    head.output = *out;
    auto norm = bindNorm(file, "output_norm.weight", c.nEmbd);
    if (!norm) return std::unexpected(norm.error());
    head.outputNorm = *norm;
    return head;
}

Result<std::vector<float>> readFreqFactors(const GgufFile& file, const std::string& name, int64_t n) {
    auto data = bindNorm(file, name, n);
    if (!data) return std::unexpected(data.error());
    std::vector<float> factors(*data, *data + n);
    for (float f : factors)
        if (!std::isfinite(f) || f <= 0.0f)
            return fail(ErrorCode::InvalidFormat,
                        strCat(name, " holds ", f, ": RoPE frequency factors must be positive"));
    return factors;
}

Result<std::vector<bool>> readSlidingLayers(const GgufFile& file, std::string_view arch, int nLayers,
                                            int64_t defaultPeriod) {
    const std::string key = strCat(arch, ".attention.sliding_window_pattern");
    std::vector<bool> local(static_cast<size_t>(nLayers));
    const GgufValue* v = file.find(key);
    if (v && v->asArray()) {
        const GgufArray& a = *v->asArray();
        if (a.size() != static_cast<uint64_t>(nLayers))
            return fail(ErrorCode::InvalidFormat,
                        strCat("metadata key ", key, " has ", a.size(), " elements for ", nLayers, " layers"));
        for (int il = 0; il < nLayers; ++il) {
            const GgufValue item = a.item(static_cast<uint64_t>(il));
            const std::optional<int64_t> n = item.asInt();
            const std::optional<bool> flag = n ? std::optional<bool>(*n != 0) : item.asBool();
            if (!flag)
                return fail(ErrorCode::InvalidFormat, strCat("metadata key ", key, " must hold bools or integers"));
            local[static_cast<size_t>(il)] = *flag;
        }
        return local;
    }
    auto period = readIntKey(file, arch, "attention.sliding_window_pattern", 0, nLayers + 1, defaultPeriod);
    if (!period) return std::unexpected(period.error());
    for (int il = 0; il < nLayers; ++il) local[static_cast<size_t>(il)] = *period == 0 || il % *period < *period - 1;
    return local;
}

Result<void> refuseRopeScaling(const GgufFile& file, std::string_view arch, std::string_view precomputedType) {
    const GgufValue* type = file.find(strCat(arch, ".rope.scaling.type"));
    const std::string typeName = type && type->asString() ? *type->asString() : std::string("none");
    auto factor = readFloatKey(file, arch, "rope.scaling.factor", 0.0, 1e6, 1.0);
    if (!factor) return std::unexpected(factor.error());
    if (typeName != "none" && (precomputedType.empty() || typeName != precomputedType) && *factor != 1.0 &&
        *factor != 0.0)
        return fail(ErrorCode::Unsupported,
                    strCat("RoPE scaling '", typeName, "' (factor ", *factor, ") is not supported yet for ", arch));
    return {};
}

}  // namespace hearth
