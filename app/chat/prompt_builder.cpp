// Binary search over how many old turns to leave out: the prompt's length only shrinks as
// more are left out, so the smallest number that fits is found in O(log n) tokenizations.
#include "app/chat/prompt_builder.h"

#include <algorithm>

#include "engine/engine.h"
#include "engine/str_cat.h"

namespace hearth {

namespace {

bool isSystem(const ChatMessage& m) { return m.role == ChatRole::System; }

std::vector<ChatMessage> messagesWithout(const std::vector<ChatMessage>& messages, int omit) {
    std::vector<ChatMessage> out;
    int skipped = 0;
    for (const ChatMessage& m : messages) {
        if (!isSystem(m) && skipped++ < omit) continue;
        out.push_back(m);
    }
    // A conversation must not start with the assistant's turn once older ones are left out.
    if (omit > 0) {
        const auto firstTurn = std::find_if(out.begin(), out.end(), [](const ChatMessage& m) { return !isSystem(m); });
        if (firstTurn != out.end() && firstTurn->role == ChatRole::Assistant && firstTurn + 1 != out.end())
            out.erase(firstTurn);
    }
    return out;
}

}  // namespace

Result<BuiltPrompt> buildPrompt(const Engine& engine, const std::vector<ChatMessage>& messages, int maxTokens,
                                const RenderOptions& options) {
    const int context = engine.contextLength();
    const int room = std::max(16, std::min(maxTokens, context / 4));
    auto fits = [&](const std::vector<TokenId>& prompt) { return static_cast<int>(prompt.size()) + room <= context; };
    std::vector<TokenId> whole = engine.chatPrompt(messages, options);
    if (fits(whole)) return BuiltPrompt{std::move(whole), 0};  // the usual case: one tokenization
    const int nTurns = static_cast<int>(
        std::count_if(messages.begin(), messages.end(), [](const ChatMessage& m) { return !isSystem(m); }));
    auto fitsWithout = [&](int omit) { return fits(engine.chatPrompt(messagesWithout(messages, omit), options)); };
    int lo = 1, hi = std::max(0, nTurns - 1);  // the last message always stays
    if (hi == 0 || !fitsWithout(hi))
        return fail(ErrorCode::InvalidArgument,
                    strCat("the message is too long for the context window (", context, " tokens)"));
    while (lo < hi) {
        const int mid = (lo + hi) / 2;
        if (fitsWithout(mid)) hi = mid;
        else lo = mid + 1;
    }
    return BuiltPrompt{engine.chatPrompt(messagesWithout(messages, lo), options), lo};
}

}  // namespace hearth
