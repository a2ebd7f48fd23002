// Binary search over how many old turns to leave out: the prompt's length only shrinks as
// more are left out, so the smallest number that fits is found in O(log n) tokenizations.
#include "app/chat/prompt_builder.h"

#include <algorithm>

#include "engine/engine.h"
#include "engine/str_cat.h"

namespace hearth {

namespace {

std::vector<ChatMessage> messagesWithout(const QList<ChatTurn>& turns, const QString& system, int omit) {
    std::vector<ChatMessage> out;
    if (!system.isEmpty()) out.push_back({"system", system.toStdString()});
    int skipped = 0;
    for (const ChatTurn& t : turns) {
        if (t.role == QLatin1String("system")) {
            out.push_back({"system", t.content.toStdString()});
            continue;
        }
        if (skipped++ < omit) continue;
        out.push_back({t.role.toStdString(), t.content.toStdString()});
    }
    // A conversation must not start with the assistant's turn once older ones are left out.
    if (omit > 0) {
        const auto firstTurn = std::find_if(out.begin(), out.end(), [](const ChatMessage& m) { return m.role != "system"; });
        if (firstTurn != out.end() && firstTurn->role == "assistant" && firstTurn + 1 != out.end()) out.erase(firstTurn);
    }
    return out;
}

}  // namespace

Result<BuiltPrompt> buildPrompt(const Engine& engine, const QList<ChatTurn>& turns, const ChatSettings& settings) {
    const int context = engine.contextLength();
    const int room = std::max(16, std::min(settings.maxTokens, context / 4));
    const int nTurns = static_cast<int>(std::count_if(turns.begin(), turns.end(),
                                                      [](const ChatTurn& t) { return t.role != QLatin1String("system"); }));
    auto fits = [&](int omit) {
        return static_cast<int>(engine.chatPrompt(messagesWithout(turns, settings.systemPrompt, omit)).size()) + room <= context;
    };
    int lo = 0, hi = std::max(0, nTurns - 1);  // the last message always stays
    if (!fits(hi))
        return fail(ErrorCode::InvalidArgument,
                    strCat("the message is too long for the context window (", context, " tokens)"));
    while (lo < hi) {
        const int mid = (lo + hi) / 2;
        if (fits(mid)) hi = mid;
        else lo = mid + 1;
    }
    return BuiltPrompt{engine.chatPrompt(messagesWithout(turns, settings.systemPrompt, lo)), lo};
}

}  // namespace hearth
