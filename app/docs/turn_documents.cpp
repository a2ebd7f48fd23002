// A document included whole is named by its file name in the sources a turn records (an
// import renumbers attachments, names stay), so "already in this branch" is by name.
#include "app/docs/turn_documents.h"

#include <chrono>
#include <set>

#include "app/store/attachment_store.h"

namespace hearth {

namespace {

constexpr int kSearchLimit = 64;  // passages looked at; enough to fill any budget

}  // namespace

Result<TurnDocuments> chooseTurnDocuments(const ConversationStore& store, int64_t conversationId,
                                          const std::vector<Message>& earlier, const std::string& question,
                                          int budget) {
    TurnDocuments out;
    out.budget = budget;
    auto attachments = store.attachments().list(conversationId);
    if (!attachments) return std::unexpected(attachments.error());
    if (attachments->empty()) return out;
    std::set<std::string> wholeBefore;
    for (const Message& m : earlier)
        for (const TurnSource& s : sourcesFromJson(m.documentsJson))
            if (s.passage == 0) wholeBefore.insert(s.name);
    int left = budget;
    std::vector<int64_t> searchable;
    for (const Attachment& a : *attachments) {
        if (wholeBefore.count(a.name)) continue;  // its whole text is in the prompt already
        if (a.whole() && a.tokens <= left) {
            auto text = store.attachments().text(a.id);
            if (!text) return std::unexpected(text.error());
            out.sources.push_back({.name = a.name, .passage = 0, .text = std::move(*text), .tokens = a.tokens});
            left -= a.tokens;
        } else {
            searchable.push_back(a.id);
        }
    }
    if (!searchable.empty() && left > 0) {
        const auto start = std::chrono::steady_clock::now();
        auto found = store.attachments().search(conversationId, question, kSearchLimit, searchable);
        out.searchMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
        if (!found) return std::unexpected(found.error());
        for (FoundPassage& p : *found) {
            const int tokens = estimateTokens(p.text);
            if (tokens > left) continue;
            out.sources.push_back({.name = p.name, .passage = p.ordinal, .text = std::move(p.text), .tokens = tokens});
            left -= tokens;
        }
    }
    out.tokens = budget - left;
    return out;
}

Result<TurnDocuments> recordTurnDocuments(ConversationStore& store, const Message& userMessage, int budget) {
    auto branch = store.branchTo(userMessage.id);
    if (!branch) return std::unexpected(branch.error());
    if (!branch->empty()) branch->pop_back();  // the message itself
    auto chosen = chooseTurnDocuments(store, userMessage.conversationId, *branch, userMessage.text, budget);
    if (!chosen) return std::unexpected(chosen.error());
    if (!chosen->sources.empty())
        if (auto r = store.attachments().setTurnSources(userMessage.id, sourcesToJson(chosen->sources)); !r)
            return std::unexpected(r.error());
    return chosen;
}

}  // namespace hearth
