// libFuzzer target: the GGUF reader (header, metadata, tensor directory, data bounds) on any
// bytes; for a file it accepts, Model::load (hyperparameters, tensor binding); for a model that
// loads, one forward pass of two tokens (reference kernels). Crashes, reports, leaks are findings.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "engine/kv/kv_cache.h"
#include "engine/model/gguf.h"
#include "engine/model/model.h"
#include "kernels/backend.h"

namespace {

// Reads every value the reader kept, so that the sanitizers see each one.
size_t touchValue(const hearth::GgufValue& value) {
    size_t n = value.asUInt().value_or(0) + static_cast<size_t>(value.asInt().value_or(0));
    n += value.asFloat().has_value() + value.asBool().value_or(false);
    if (const std::string* s = value.asString()) n += s->size();
    if (const hearth::GgufArray* a = value.asArray())
        for (uint64_t i = 0; i < a->size(); ++i) n += touchValue(a->item(i)) + a->stringAt(i).size();
    return n;
}

// Reads the first and last byte of each tensor's data: ASan reports any byte outside the input.
size_t touchTensors(const hearth::GgufFile& file) {
    size_t n = 0;
    for (const hearth::GgufTensorInfo& t : file.tensors()) {
        const std::span<const uint8_t> data = file.tensorData(t);
        if (!data.empty()) n += data.front() + data.back();
        n += static_cast<size_t>(t.nElements());
    }
    return n;
}

// The weights a load accepted are read by the kernels: their sizes and alignment must hold.
void runForward(hearth::Model& model) {
    auto cache = hearth::KvCache::create(model.kvLayout(16), 16);
    if (!cache) return;
    const std::unique_ptr<hearth::Backend> backend = hearth::makeCpuReferenceBackend();
    hearth::KvSequence seq;
    const int32_t nVocab = model.config().nVocab;
    std::vector<float> logits(static_cast<size_t>(nVocab));
    const int32_t tokens[] = {0, nVocab - 1};
    (void)model.forward(*backend, **cache, seq, tokens, logits);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    auto file = hearth::GgufFile::fromBytes(std::span<const uint8_t>(data, size));
    if (!file) return 0;
    volatile size_t sink = touchTensors(**file);
    for (const auto& [key, value] : (*file)->metadata()) sink = sink + key.size() + touchValue(value);
    auto model = hearth::Model::load(**file);
    if (model) runForward(**model);
    return 0;
}
