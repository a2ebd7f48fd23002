// libFuzzer target: Hearth's handling of what it reads from its database. A small valid
// database is built once in memory by the store's own code (conversations, branches, statistics,
// settings, KV blocks of a tiny model, the fingerprint cache) and serialized; each input is a
// sequence of row edits (store_ops.h: UPDATE a column of a row to any value, type or blob size,
// DELETE a row, set user_version) applied with plain SQL, then the result is opened through
// ConversationStore::openImage and every read path runs: list, search, branches, siblings,
// switching, KV lookup and restore into an engine, then writes. SQLite's page format is not fuzzed.
#include <sqlite3.h>

#include <cstddef>
#include <cstdint>
#include <span>

#include "app/store/conversation_store.h"
#include "app/store/kv_block_store.h"
#include "app/store/stored_kv.h"
#include "fuzz/fuzz_support.h"
#include "fuzz/store_ops.h"

namespace {

using namespace hearth;

struct Base {
    std::vector<uint8_t> image;
    std::vector<int32_t> tokens;  // the conversation whose KV was saved
};

void check(bool ok) {
    if (!ok) __builtin_trap();  // building the base database must work: a finding otherwise
}

// Two conversations: the first with a user message, two sibling replies (one with statistics)
// and a follow-up; the second with an unfinished reply. Both use the same four KV blocks.
const Base& base() {
    static const Base b = [] {
        Base out;
        auto store = ConversationStore::open(":memory:");
        check(store.has_value());
        ConversationStore& s = **store;
        auto c1 = s.createConversation("First chat", "Be brief.", "first");
        auto c2 = s.createConversation("Second", "", "");
        check(c1 && c2 && s.setSettings(c1->id, R"({"temperature":0.5})") && s.setModel(c1->id, "tiny.gguf"));
        auto u1 = s.appendMessage(c1->id, 0, ChatRole::User, "hello there");
        check(u1.has_value());
        auto a1 = s.appendMessage(c1->id, u1->id, ChatRole::Assistant, "hi", false);
        GenerationStats stats{9, 7, 0, 0, 12.5, 100.0, 50.0, "eos"};
        check(a1 && s.updateMessage(a1->id, "hi, how can I help?", true, &stats));
        auto a2 = s.appendMessage(c1->id, u1->id, ChatRole::Assistant, "hey");
        check(a2 && s.appendMessage(c1->id, a2->id, ChatRole::User, "more please") && s.switchBranch(a1->id));
        auto u2 = s.appendMessage(c2->id, 0, ChatRole::System, "system text");
        check(u2 && s.appendMessage(c2->id, u2->id, ChatRole::Assistant, "cut sh", false));
        const std::unique_ptr<Engine> engine = fuzz::loadFuzzEngine();
        out.tokens = fuzz::fuzzConversation(*engine);
        check(saveKv(*engine, s.kv(), c1->id, out.tokens) && saveKv(*engine, s.kv(), c2->id, out.tokens));
        check(s.kv().modelFingerprint(fuzz::fuzzModelPath()).has_value());
        auto image = s.serialize();
        check(image.has_value());
        out.image = std::move(*image);
        return out;
    }();
    return b;
}

void readConversation(ConversationStore& store, const Conversation& c) {
    (void)store.conversation(c.id);
    if (!c.handle.empty()) (void)store.conversationByHandle(c.handle);
    auto branch = store.activeBranch(c.id);
    if (!branch) return;
    for (size_t i = 0; i < branch->size() && i < 16; ++i) {
        const Message& m = (*branch)[i];
        (void)store.siblings(m.id);
        (void)store.branchTo(m.id);
    }
    if (!branch->empty()) (void)store.switchBranch(branch->front().id);
}

// KV lookup and restore into a fresh engine, a reply on what was restored, then a save.
void restoreAndSave(ConversationStore& store, int64_t conversationId, const std::vector<int32_t>& tokens) {
    const std::unique_ptr<Engine> engine = fuzz::loadFuzzEngine();
    std::vector<int32_t> prompt = tokens;
    prompt.push_back(42);
    (void)store.kv().foreignChain(conversationId, engine->kvRoot().key, 4);
    auto restored = restoreKv(*engine, store.kv(), conversationId, prompt);
    if (!restored) return;
    GenerateRequest req;
    req.prompt = prompt;
    req.maxTokens = 1;
    req.sampling.temperature = 0;
    (void)engine->generate(req, [](TokenId, std::string_view) { return true; });
    (void)saveKv(*engine, store.kv(), conversationId, prompt);
}

// Writes on what was read: a new message must read back as written.
void write(ConversationStore& store, const Conversation& c) {
    auto m = store.appendMessage(c.id, c.activeLeafId, ChatRole::User, "next");
    if (m) {
        auto back = store.message(m->id);
        if (back && (!*back || (*back)->text != "next")) __builtin_trap();
        (void)store.updateMessage(m->id, "next!", true);
    }
    (void)store.renameConversation(c.id, "renamed");
    (void)store.kv().enforceBudget();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const Base& b = base();
    auto image = fuzz::applyStoreOps(b.image, std::span<const uint8_t>(data, size));
    if (!image) return 0;
    auto store = ConversationStore::openImage(*image);
    if (!store) return 0;
    auto all = (*store)->listConversations();
    (void)(*store)->searchConversations("hi");
    (void)(*store)->searchMessages("hi");  // and where each matched, over damaged branches
    if (!all) return 0;
    for (size_t i = 0; i < all->size() && i < 8; ++i) readConversation(**store, (*all)[i]);
    for (int64_t id = 1; id <= 8; ++id) (void)(*store)->message(id);
    if (all->empty()) return 0;
    restoreAndSave(**store, all->front().id, b.tokens);
    write(**store, all->front());
    (void)(*store)->deleteConversation(all->back().id);
    return 0;
}
