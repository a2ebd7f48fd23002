// Turns a conversation into the engine's prompt, leaving out the oldest turns when it would
// not fit the context window with room to reply: the system prompt and the latest turns stay.
#pragma once

#include <QList>
#include <vector>

#include "app/engine_host/engine_host.h"
#include "engine/error.h"
#include "engine/tokenizer/tokenizer.h"

namespace hearth {

struct BuiltPrompt {
    std::vector<TokenId> tokens;
    int omittedTurns = 0;  // oldest non-system turns left out
};

// Room kept for the reply: min(maxTokens, context / 4), at least 16 tokens.
// Errors: InvalidArgument when even the system prompt and the last message do not fit.
Result<BuiltPrompt> buildPrompt(const Engine& engine, const QList<ChatTurn>& turns, const ChatSettings& settings);

}  // namespace hearth
