// make_seeds' inputs for the kv_import and store targets: KV records exported by an engine on
// the tiny fuzz model (fuzz_support.h), valid and with one part damaged each, and row edits
// of the store's database (store_ops.h), each aimed at one thing Hearth reads back.
#include "fuzz/seeds_kv_store.h"

#include <cstring>

#include "fuzz/fuzz_support.h"
#include "fuzz/store_ops.h"

namespace hearth::fuzz {
namespace {

std::vector<uint8_t> kvSeed(const KvImportInput& base, uint8_t flags,
                            const std::function<void(KvImportInput&)>& edit = {}) {
    KvImportInput in = base;
    in.flags = flags;
    if (edit) edit(in);
    return encodeKvInput(in);
}

std::vector<Seed> kvSeeds() {
    const std::unique_ptr<Engine> engine = loadFuzzEngine();
    KvImportInput base;
    base.conversation = fuzzConversation(*engine);
    base.records = engine->exportKv(base.conversation);
    base.savedRootKey = engine->kvRoot().key;
    base.numericsVersion = engine->kvRoot().numericsVersion;
    const uint8_t all = kEngineRoot | kGenerate;
    return {
        {"valid.bin", kvSeed(base, all)},
        {"valid_given_root.bin", kvSeed(base, kGenerate)},
        {"repaired_data.bin",
         kvSeed(base, all | kFixKeys | kFixChecksums, [](auto& in) { in.records[1].data[5] ^= 0x7c; })},
        {"bad_checksum.bin", kvSeed(base, all, [](auto& in) { in.records[2].checksum ^= 1; })},
        {"short_tokens.bin",
         kvSeed(base, all | kFixKeys | kFixChecksums, [](auto& in) { in.records[0].tokens.pop_back(); })},
        {"short_data.bin", kvSeed(base, all | kFixChecksums, [](auto& in) { in.records[1].data.resize(100); })},
        {"position.bin", kvSeed(base, all, [](auto& in) { in.records[1].position = 1 << 30; })},
        {"foreign_root.bin",
         kvSeed(base, kGenerate, [](auto& in) { in.savedRootKey[0] ^= 1, in.numericsVersion = 99; })},
        {"two_blocks.bin", kvSeed(base, all, [](auto& in) { in.records.resize(2); })},
    };
}

std::vector<uint8_t> bytesOf(std::string_view s) { return {s.begin(), s.end()}; }

template <class T>
std::vector<uint8_t> bytesOf(T v) {
    std::vector<uint8_t> b(sizeof v);
    std::memcpy(b.data(), &v, sizeof v);
    return b;
}

// Table and column indexes of storeTables().
enum : uint8_t { kConversations = 0, kMessages = 1, kRoots = 2, kBlocks = 3, kConversationKv = 4, kFingerprints = 5 };

std::vector<uint8_t> update(uint8_t table, uint8_t column, uint8_t row, ValueType type, std::vector<uint8_t> value) {
    ByteWriter w;
    putUpdate(w, table, column, row, type, value);
    return w.out;
}

std::vector<uint8_t> version(int32_t v) {
    ByteWriter w;
    w.put(uint8_t{kVersion}).put(v);
    return w.out;
}

std::vector<Seed> storeSeeds() {
    std::vector<uint8_t> cycle = update(kMessages, 2, 0, kInt, bytesOf(int64_t{4}));  // message 1's parent: 4
    std::vector<uint8_t> deleteRoot{kDelete, kRoots, 0};
    return {
        {"nothing.bin", {}},
        {"version_newer.bin", version(3)},
        {"version_1.bin", version(1)},
        {"version_0.bin", version(0)},
        {"role.bin", update(kMessages, 3, 1, kText, bytesOf("robot"))},
        {"stats_json.bin", update(kMessages, 7, 1, kBlob, {'{', '"', 0xff, 0x00, ':', '['})},
        {"text_blob.bin", update(kMessages, 4, 2, kBlob, {0xc3, 0x28, 0, 1})},
        {"settings_real.bin", update(kConversations, 5, 0, kReal, bytesOf(1.5))},
        {"leaf_elsewhere.bin", update(kConversations, 8, 0, kInt, bytesOf(int64_t{6}))},
        {"handle_blob.bin", update(kConversations, 1, 0, kBlob, {0, 1, 2})},
        {"parent_cycle.bin", cycle},
        {"block_data_short.bin", update(kBlocks, 5, 0, kBlob, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10})},
        {"block_data_big.bin", update(kBlocks, 5, 1, kZeroBlob, bytesOf(uint32_t{1} << 20))},
        {"block_tokens_odd.bin", update(kBlocks, 4, 0, kBlob, {1, 0, 0, 0, 60, 0, 0})},
        {"block_position.bin", update(kBlocks, 3, 2, kInt, bytesOf(int64_t{1} << 40))},
        {"block_checksum_text.bin", update(kBlocks, 6, 3, kText, bytesOf("abc"))},
        {"block_key_short.bin", update(kBlocks, 0, 0, kBlob, {9, 9})},
        {"root_numerics.bin", update(kRoots, 4, 0, kInt, bytesOf(int64_t{-1}))},
        {"root_deleted.bin", deleteRoot},
        {"conversation_kv_null.bin", update(kConversationKv, 1, 0, kNull, {})},
        {"fingerprint_text.bin", update(kFingerprints, 3, 0, kText, bytesOf("zz"))},
    };
}

}  // namespace

std::vector<std::pair<std::string, std::vector<Seed>>> kvAndStoreSeeds() {
    return {{"kv_import", kvSeeds()}, {"store", storeSeeds()}};
}

}  // namespace hearth::fuzz
