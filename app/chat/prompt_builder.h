// Turns a conversation into the engine's prompt, leaving out the oldest turns when it would
// not fit the context window with room to reply: the system messages and the latest turns stay.
#pragma once

#include <vector>

#include "engine/error.h"
#include "engine/tokenizer/chat_format.h"
#include "engine/tokenizer/tokenizer.h"

namespace hearth {

class Engine;

struct BuiltPrompt {
    std::vector<TokenId> tokens;
    int omittedTurns = 0;  // oldest non-system turns left out
};

// messages: oldest first, ending with the user's message. Room kept for the reply:
// min(maxTokens, context / 4), at least 16 tokens. When everything fits, the prompt is the
// chat format's rendering of all the messages with options (Engine::chatPrompt), unchanged.
// Errors: InvalidArgument when even the system messages and the last message do not fit.
Result<BuiltPrompt> buildPrompt(const Engine& engine, const std::vector<ChatMessage>& messages, int maxTokens,
                                const RenderOptions& options = {});

}  // namespace hearth
