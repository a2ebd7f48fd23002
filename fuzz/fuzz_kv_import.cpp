// libFuzzer target: KV block import (engine/snapshot's checks of saved records, then KvCache's
// import of the accepted ones) on a tiny synthetic model, with mutated headers, positions,
// token counts, sizes, keys and checksums (fuzz_support.h: the input's layout and the flags that
// repair keys/checksums so mutations reach the later checks); then, when asked, the
// conversation continues on the imported K/V. Crashes, reports, leaks are findings.
#include <cstddef>
#include <cstdint>
#include <span>

#include "fuzz/fuzz_support.h"

namespace {

using namespace hearth;

void repair(fuzz::KvImportInput& in, const BlockKey& root) {
    BlockKey parent = root;
    for (KvBlockRecord& r : in.records) {
        if (in.flags & fuzz::kFixKeys) {
            r.parent = parent;
            r.key = chainKey(parent, r.tokens);
        }
        if (in.flags & fuzz::kFixChecksums) r.checksum = kvChecksum(r.data);
        parent = r.key;
    }
}

// Generates two tokens after the imported prefix: the K/V read back must be usable, whatever it holds.
void continueConversation(Engine& engine, const std::vector<int32_t>& conversation) {
    GenerateRequest req;
    req.prompt = conversation;
    req.prompt.push_back(42);
    req.maxTokens = 2;
    req.sampling.temperature = 0;
    (void)engine.generate(req, [](TokenId, std::string_view) { return true; });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    fuzz::KvImportInput in = fuzz::decodeKvInput(std::span<const uint8_t>(data, size));
    const std::unique_ptr<Engine> engine = fuzz::loadFuzzEngine();
    KvRootInfo saved = engine->kvRoot();
    if (!(in.flags & fuzz::kEngineRoot)) {
        saved.key = in.savedRootKey;
        saved.numericsVersion = in.numericsVersion;
    }
    repair(in, saved.key);
    const KvImportResult result = engine->importKv(saved, in.records, in.conversation);
    // What the import claims must agree with what it was given.
    if (result.nBlocks > static_cast<int32_t>(in.records.size()) || result.nImported > result.nBlocks ||
        result.nTokens != result.nBlocks * engine->kvBlockSize() ||
        result.nTokens > static_cast<int32_t>(in.conversation.size()))
        __builtin_trap();
    if (result.nBlocks < static_cast<int32_t>(in.records.size()) && result.refusal.empty() &&
        result.nImported < engine->metrics().blocksTotal)
        __builtin_trap();  // a record left out without a reason (other than a full cache)
    if (in.flags & fuzz::kGenerate) continueConversation(*engine, in.conversation);
    return 0;
}
