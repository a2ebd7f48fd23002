// Synthetic model files (synth.h): the named shapes, their metadata and vocabulary through
// GgufWriter (tensor infos with precomputed offsets, no data), then each tensor generated,
// quantized and written in slices of rows, so memory stays at one slice whatever the model.
#include "engine/model/synth.h"

#include <cerrno>
#include <cmath>
#include <numbers>
#include <cstdio>
#include <cstring>
#include <memory>

#include "engine/model/gguf.h"
#include "engine/model/gguf_writer.h"
#include "engine/str_cat.h"
#include "engine/util/file_path.h"

namespace hearth {
namespace {

constexpr float kWeightStd = 0.02f;

// A tensor to write: its name, [cols, rows] (cols contiguous), and what it holds: a matrix
// (in the chosen type), a norm (F32 ones), a bias (F32, random) or fixed F32 values.
struct SynthTensor {
    enum class Kind { Matrix, Norm, Bias, Values };
    SynthTensor(std::string n, int64_t cols, int64_t rows, Kind k = Kind::Matrix, std::vector<float> v = {})
        : name(std::move(n)), nCols(cols), nRows(rows), kind(k), values(std::move(v)) {}
    std::string name;
    int64_t nCols = 0, nRows = 1;
    Kind kind = Kind::Matrix;
    std::vector<float> values;  // Kind::Values
    bool matrix() const { return kind == Kind::Matrix; }
};
using Kind = SynthTensor::Kind;

int headDim(const SynthShape& s) { return s.headDim > 0 ? s.headDim : s.nEmbd / s.nHeads; }
bool isGemma(const SynthShape& s) { return s.architecture == "gemma2" || s.architecture == "gemma3"; }

// Llama 3.1's "llama3" RoPE scaling as its files carry it, precomputed per rotated pair
// (rope_freqs.weight): factor 32 over an original context of 8192, low/high frequency factors
// 1 and 4 — the values of Llama 3.2's config. Pairs of short wavelength keep 1, long ones 32,
// those between are interpolated smoothly.
std::vector<float> llama3FreqFactors(const SynthShape& s) {
    constexpr double kFactor = 32, kLow = 1, kHigh = 4, kOriginal = 8192;
    const int half = headDim(s) / 2;
    std::vector<float> out(static_cast<size_t>(half));
    for (int i = 0; i < half; ++i) {
        const double freq = std::pow(double{s.ropeFreqBase}, -2.0 * i / headDim(s));
        const double wavelen = 2 * std::numbers::pi / freq;
        double f = 1;
        if (wavelen > kOriginal / kLow) {
            f = kFactor;
        } else if (wavelen >= kOriginal / kHigh) {
            const double smooth = (kOriginal / wavelen - kLow) / (kHigh - kLow);
            f = 1 / ((1 - smooth) / kFactor + smooth);
        }
        out[static_cast<size_t>(i)] = static_cast<float>(f);
    }
    return out;
}

// The family's tensors (decoder.h lists the names): Qwen 2's Q/K/V biases, Qwen 3's and Gemma 3's
// QK norms, Phi-3's fused attn_qkv and gate+up ffn_up, Gemma's post norms, Llama 3's RoPE factors.
std::vector<SynthTensor> tensorList(const SynthShape& s) {
    const std::string& a = s.architecture;
    const bool qkNorm = a == "qwen3" || a == "gemma3", biases = a == "qwen2", fused = a == "phi3";
    const int64_t qDim = int64_t{s.nHeads} * headDim(s), kvDim = int64_t{s.nKvHeads} * headDim(s);
    std::vector<SynthTensor> list{{"token_embd.weight", s.nEmbd, s.nVocab},
                                  {"output_norm.weight", s.nEmbd, 1, Kind::Norm}};
    if (!s.tiedOutput) list.push_back({"output.weight", s.nEmbd, s.nVocab});
    if (s.llama3RopeFreqs) list.push_back({"rope_freqs.weight", headDim(s) / 2, 1, Kind::Values, llama3FreqFactors(s)});
    for (int il = 0; il < s.nLayers; ++il) {
        const std::string p = strCat("blk.", il, ".");
        list.push_back({p + "attn_norm.weight", s.nEmbd, 1, Kind::Norm});
        list.push_back({p + "ffn_norm.weight", s.nEmbd, 1, Kind::Norm});
        if (qkNorm) {
            list.push_back({p + "attn_q_norm.weight", headDim(s), 1, Kind::Norm});
            list.push_back({p + "attn_k_norm.weight", headDim(s), 1, Kind::Norm});
        }
        if (isGemma(s)) {
            list.push_back({p + "post_attention_norm.weight", s.nEmbd, 1, Kind::Norm});
            list.push_back({p + "post_ffw_norm.weight", s.nEmbd, 1, Kind::Norm});
        }
        if (fused) {
            list.push_back({p + "attn_qkv.weight", s.nEmbd, qDim + 2 * kvDim});
        } else {
            list.push_back({p + "attn_q.weight", s.nEmbd, qDim});
            list.push_back({p + "attn_k.weight", s.nEmbd, kvDim});
            list.push_back({p + "attn_v.weight", s.nEmbd, kvDim});
        }
        if (biases) {
            list.push_back({p + "attn_q.bias", qDim, 1, Kind::Bias});
            list.push_back({p + "attn_k.bias", kvDim, 1, Kind::Bias});
            list.push_back({p + "attn_v.bias", kvDim, 1, Kind::Bias});
        }
        list.push_back({p + "attn_output.weight", qDim, s.nEmbd});
        if (fused) {
            list.push_back({p + "ffn_up.weight", s.nEmbd, 2 * int64_t{s.nFf}});
        } else {
            list.push_back({p + "ffn_gate.weight", s.nEmbd, s.nFf});
            list.push_back({p + "ffn_up.weight", s.nEmbd, s.nFf});
        }
        list.push_back({p + "ffn_down.weight", s.nFf, s.nEmbd});
    }
    return list;
}

// Word k of the made-up vocabulary: k in base 26 as letters, every other one with the
// SentencePiece space mark in front. All distinct.
std::string word(int k) {
    std::string letters;
    for (int v = k;; v = v / 26 - 1) {
        letters.insert(letters.begin(), static_cast<char>('a' + v % 26));
        if (v < 26) break;
    }
    return k % 2 == 0 ? "\xE2\x96\x81" + letters : letters;
}

void setVocabulary(GgufWriter& w, const SynthShape& s) {
    const bool gemma = isGemma(s);
    // Gemma's order: 0 <pad>, 1 <eos>, 2 <bos>, 3 <unk>; Llama's: 0 <unk>, 1 <s>, 2 </s>.
    const std::vector<std::pair<std::string, int32_t>> specials = gemma
        ? std::vector<std::pair<std::string, int32_t>>{{"<pad>", 3}, {"<eos>", 3}, {"<bos>", 3}, {"<unk>", 2}}
        : std::vector<std::pair<std::string, int32_t>>{{"<unk>", 2}, {"<s>", 3}, {"</s>", 3}};
    std::vector<std::string> tokens;
    std::vector<int32_t> types;
    for (const auto& [text, type] : specials) tokens.push_back(text), types.push_back(type);
    for (int b = 0; b < 256; ++b) {
        char name[8];
        std::snprintf(name, sizeof name, "<0x%02X>", b);
        tokens.emplace_back(name);
        types.push_back(6);
    }
    const size_t firstWord = tokens.size();
    for (int k = 0; std::ssize(tokens) < s.nVocab; ++k) tokens.push_back(word(k)), types.push_back(1);
    std::vector<float> scores(tokens.size(), 0.0f);
    for (size_t i = firstWord; i < tokens.size(); ++i) scores[i] = -static_cast<float>(i - firstWord);
    w.set("tokenizer.ggml.model", "llama");
    w.set("tokenizer.ggml.tokens", tokens);
    w.set("tokenizer.ggml.scores", scores);
    w.set("tokenizer.ggml.token_type", types);
    w.set("tokenizer.ggml.bos_token_id", uint32_t{gemma ? 2u : 1u});
    w.set("tokenizer.ggml.eos_token_id", uint32_t{gemma ? 1u : 2u});
    w.set("tokenizer.ggml.unknown_token_id", uint32_t{gemma ? 3u : 0u});
    if (gemma) {
        w.set("tokenizer.ggml.padding_token_id", uint32_t{0});
        w.set("tokenizer.ggml.add_bos_token", true);
        w.set("tokenizer.ggml.add_space_prefix", false);
    }
}

void setHyperparameters(GgufWriter& w, const SynthShape& s, DType type) {
    const std::string& a = s.architecture;
    w.set("general.architecture", a);
    w.set("general.name", strCat("synthetic ", s.name, " ", dtypeInfo(type).name));
    w.set(a + ".block_count", static_cast<uint32_t>(s.nLayers));
    w.set(a + ".context_length", static_cast<uint32_t>(s.contextLength));
    w.set(a + ".embedding_length", static_cast<uint32_t>(s.nEmbd));
    w.set(a + ".feed_forward_length", static_cast<uint32_t>(s.nFf));
    w.set(a + ".attention.head_count", static_cast<uint32_t>(s.nHeads));
    w.set(a + ".attention.head_count_kv", static_cast<uint32_t>(s.nKvHeads));
    w.set(a + ".rope.freq_base", s.ropeFreqBase);
    w.set(a + ".rope.dimension_count", static_cast<uint32_t>(headDim(s)));
    if (s.headDim > 0) {
        w.set(a + ".attention.key_length", static_cast<uint32_t>(headDim(s)));
        w.set(a + ".attention.value_length", static_cast<uint32_t>(headDim(s)));
    }
    // Qwen and Gemma files carry 1e-6, Llama and Phi-3 files 1e-5.
    const bool smallEps = isGemma(s) || a == "qwen2" || a == "qwen3";
    w.set(a + ".attention.layer_norm_rms_epsilon", smallEps ? 1e-6f : 1e-5f);
    if (s.slidingWindow > 0) w.set(a + ".attention.sliding_window", static_cast<uint32_t>(s.slidingWindow));
    if (a == "gemma2") {  // the values Gemma 2's files carry
        w.set(a + ".attn_logit_softcapping", 50.0f);
        w.set(a + ".final_logit_softcapping", 30.0f);
    }
}

Result<void> checkShape(const SynthShape& s, DType type) {
    if (!isWeightType(type)) return fail(ErrorCode::InvalidArgument, "synth: not a weight type");
    const int block = dtypeInfo(type).blockElems;
    for (const int64_t cols : {int64_t{s.nEmbd}, int64_t{s.nFf}, int64_t{s.nHeads} * headDim(s)})
        if (cols % block != 0)
            return fail(ErrorCode::InvalidArgument,
                        strCat("synth: shape ", s.name, " has rows of ", cols, " elements, not a multiple of ",
                               dtypeInfo(type).name, "'s block of ", block));
    return {};
}

// Random weights, approximately normal with standard deviation kWeightStd: the Irwin–Hall sum
// of four uniforms (16 bits each of one splitmix64 draw), centred and scaled. Bounded at ±3.5σ;
// about ten times faster than std::normal_distribution, which matters for an 8B model.
class NearNormal {
public:
    explicit NearNormal(uint64_t seed) : state_(seed) {}
    float operator()() {
        uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);  // splitmix64
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        const uint32_t sum = static_cast<uint32_t>(z & 0xFFFF) + static_cast<uint32_t>((z >> 16) & 0xFFFF) +
            static_cast<uint32_t>((z >> 32) & 0xFFFF) + static_cast<uint32_t>(z >> 48);
        // Four uniforms on [0, 65536): mean 2·65535, variance 4·(65536² − 1)/12.
        return (static_cast<float>(sum) - 131070.0f) * kScale;
    }

private:
    static constexpr float kScale = kWeightStd / 37837.23f;  // 37837.23 = sqrt(4·(65536² − 1)/12)
    uint64_t state_;
};

class FileOut {
public:
    explicit FileOut(std::FILE* f) : f_(f) {}
    ~FileOut() {
        if (f_) std::fclose(f_);
    }
    bool write(const void* p, size_t n) { return std::fwrite(p, 1, n, f_) == n; }
    bool close() {
        const bool ok = std::fclose(f_) == 0;
        f_ = nullptr;
        return ok;
    }

private:
    std::FILE* f_;
};

// Generates, quantizes and writes one tensor, a slice of rows at a time.
bool writeTensor(FileOut& out, const SynthTensor& t, DType type, uint64_t seed) {
    NearNormal normal(seed);
    if (t.kind == Kind::Norm || t.kind == Kind::Bias) {
        std::vector<float> values(static_cast<size_t>(t.nCols), 1.0f);
        if (t.kind == Kind::Bias)
            for (float& v : values) v = normal();
        return out.write(values.data(), values.size() * sizeof(float));
    }
    if (t.kind == Kind::Values) return out.write(t.values.data(), t.values.size() * sizeof(float));
    const size_t rowSize = rowBytes(type, t.nCols);
    const int64_t sliceRows = std::max<int64_t>(1, (int64_t{1} << 20) / t.nCols);
    std::vector<float> values(static_cast<size_t>(sliceRows * t.nCols));
    std::vector<uint8_t> bytes(static_cast<size_t>(sliceRows) * rowSize);
    for (int64_t r0 = 0; r0 < t.nRows; r0 += sliceRows) {
        const int64_t n = std::min(sliceRows, t.nRows - r0);
        for (int64_t i = 0; i < n * t.nCols; ++i) values[static_cast<size_t>(i)] = normal();
        for (int64_t r = 0; r < n; ++r)
            synthQuantizeRow(type, values.data() + r * t.nCols, bytes.data() + r * rowSize, t.nCols);
        if (!out.write(bytes.data(), static_cast<size_t>(n) * rowSize)) return false;
    }
    return true;
}

uint64_t tensorBytes(const SynthTensor& t, DType type) {
    return t.matrix() ? rowBytes(type, t.nCols) * static_cast<uint64_t>(t.nRows) : static_cast<uint64_t>(t.nCols) * 4;
}

}  // namespace

const std::vector<SynthShape>& synthShapes() {
    // name, arch, layers, embd, ff, heads, kv heads, head dim, vocab, context, rope base, tied,
    // window, Llama 3 RoPE factors. The real layouts are those of the models' config.json.
    static const std::vector<SynthShape> shapes{
        {"tiny", "llama", 2, 256, 512, 4, 2, 0, 512, 2048, 10000.0f, false, 0},
        {"tiny-gemma3", "gemma3", 7, 256, 512, 4, 1, 128, 512, 2048, 1000000.0f, true, 64},
        {"llama-110m", "llama", 12, 768, 2048, 12, 12, 0, 32000, 1024, 10000.0f, false, 0},
        {"smollm2-135m", "llama", 30, 576, 1536, 9, 3, 0, 49152, 8192, 100000.0f, true, 0},
        {"gemma3-270m", "gemma3", 18, 640, 2048, 4, 1, 256, 262144, 32768, 1000000.0f, true, 512},
        {"tinyllama-1.1b", "llama", 22, 2048, 5632, 32, 4, 0, 32000, 2048, 10000.0f, false, 0},
        {"llama-8b", "llama", 32, 4096, 14336, 32, 8, 0, 128256, 8192, 500000.0f, false, 0},
        {"tiny-qwen2", "qwen2", 2, 256, 512, 4, 2, 0, 512, 2048, 1000000.0f, true, 0},
        {"tiny-qwen3", "qwen3", 2, 256, 512, 4, 2, 128, 512, 2048, 1000000.0f, true, 0},
        {"tiny-phi3", "phi3", 2, 256, 512, 4, 4, 0, 512, 4096, 10000.0f, false, 2047},
        {"tiny-gemma2", "gemma2", 4, 256, 512, 4, 2, 128, 512, 8192, 10000.0f, true, 64},
        {"llama3.2-1b", "llama", 16, 2048, 8192, 32, 8, 64, 128256, 131072, 500000.0f, true, 0, true},
        {"qwen2.5-0.5b", "qwen2", 24, 896, 4864, 14, 2, 64, 151936, 32768, 1000000.0f, true, 0},
        {"qwen3-0.6b", "qwen3", 28, 1024, 3072, 16, 8, 128, 151936, 40960, 1000000.0f, true, 0},
        {"phi3-mini", "phi3", 32, 3072, 8192, 32, 32, 96, 32064, 4096, 10000.0f, false, 2047},
        {"gemma2-2b", "gemma2", 26, 2304, 9216, 8, 4, 256, 256000, 8192, 10000.0f, true, 4096},
    };
    return shapes;
}

Result<SynthShape> findSynthShape(const std::string& name) {
    std::string names;
    for (const SynthShape& s : synthShapes()) {
        if (s.name == name) return s;
        names += (names.empty() ? "" : ", ") + s.name;
    }
    return fail(ErrorCode::InvalidArgument, strCat("unknown shape '", name, "' (known: ", names, ")"));
}

uint64_t synthTensorBytes(const SynthShape& shape, DType type) {
    uint64_t total = 0;
    for (const SynthTensor& t : tensorList(shape)) total += tensorBytes(t, type);
    return total;
}

// The header, metadata and tensor infos, with each tensor's offset computed from its size
// (GgufWriter writes the offset given; the data follows, streamed by the caller).
std::vector<uint8_t> headerBytes(const SynthShape& shape, DType type, const GgufFile* vocab,
                                 const std::string& chatTemplate, const std::vector<SynthTensor>& tensors,
                                 std::vector<uint64_t>& offsets) {
    GgufWriter w;
    setHyperparameters(w, shape, type);
    if (vocab == nullptr) setVocabulary(w, shape);
    else
        for (const auto& [key, value] : vocab->metadata())
            if (key.starts_with("tokenizer.")) w.setValue(key, value);
    if (!chatTemplate.empty()) w.set("tokenizer.chat_template", chatTemplate);
    const uint64_t align = w.alignment();
    uint64_t next = 0;
    for (const SynthTensor& t : tensors) {
        offsets.push_back(next);
        GgufTensorSpec spec;
        spec.name = t.name;
        spec.dims = t.matrix() ? std::vector<uint64_t>{static_cast<uint64_t>(t.nCols), static_cast<uint64_t>(t.nRows)}
                               : std::vector<uint64_t>{static_cast<uint64_t>(t.nCols)};
        spec.typeId = static_cast<uint32_t>(t.matrix() ? type : DType::F32);
        spec.offset = next;
        w.addTensor(std::move(spec));
        next = (next + tensorBytes(t, type) + align - 1) / align * align;
    }
    offsets.push_back(align);  // the last entry: the alignment, for the caller's padding
    return w.toBytes().bytes;  // no tensor data: ends at the (aligned) data section
}

Result<void> writeSynthModel(const SynthShape& requested, const SynthOptions& options, const std::string& path) {
    SynthShape shape = requested;
    std::unique_ptr<GgufFile> vocab;
    if (!options.vocabFrom.empty()) {
        auto file = GgufFile::open(options.vocabFrom);
        if (!file) return std::unexpected(file.error());
        vocab = std::move(*file);
        const GgufValue* tokens = vocab->find("tokenizer.ggml.tokens");
        if (tokens == nullptr || tokens->asArray() == nullptr || tokens->asArray()->size() == 0)
            return fail(ErrorCode::InvalidArgument,
                        strCat("synth: '", options.vocabFrom, "' has no tokenizer.ggml.tokens"));
        shape.nVocab = static_cast<int>(tokens->asArray()->size());
    }
    if (auto ok = checkShape(shape, options.type); !ok) return ok;
    const std::vector<SynthTensor> tensors = tensorList(shape);
    std::vector<uint64_t> offsets;
    const std::vector<uint8_t> header =
        headerBytes(shape, options.type, vocab.get(), options.chatTemplate, tensors, offsets);
    const uint64_t align = offsets.back();
    std::FILE* f = openFile(path, "wb");
    if (f == nullptr) return fail(ErrorCode::Io, strCat("synth: cannot create '", path, "': ", std::strerror(errno)));
    FileOut out(f);
    bool ok = out.write(header.data(), header.size());
    const std::vector<uint8_t> zeros(static_cast<size_t>(align), 0);
    uint64_t written = 0;  // bytes of the data section so far
    for (size_t i = 0; ok && i < tensors.size(); ++i) {
        ok = out.write(zeros.data(), static_cast<size_t>(offsets[i] - written));  // padding to the tensor's offset
        ok = ok &&
            writeTensor(out, tensors[i], options.type, options.seed * 1000003u + i);  // each tensor its own stream
        written = offsets[i] + tensorBytes(tensors[i], options.type);
    }
    ok = out.close() && ok;
    if (!ok) {
        std::remove(path.c_str());
        return fail(ErrorCode::Io, strCat("synth: cannot write '", path, "'"));
    }
    return {};
}

}  // namespace hearth
