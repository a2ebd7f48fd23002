// Internal to chat_format.cpp: one renderer per template family, each reproducing what that
// family's Jinja template renders (with Hugging Face's trim_blocks / lstrip_blocks settings).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "engine/tokenizer/chat_format.h"

namespace hearth::chat {

// What every renderer gets: the messages, the variant, the BOS/EOS texts and the default system.
struct RenderInput {
    const std::vector<ChatMessage>& messages;
    const ChatVariant& variant;
    const std::string& bos;
    const std::string& eos;
    const std::string& defaultSystem;
    bool addGenerationPrompt;
    bool enableThinking;
};

// Python's str.strip() (what Jinja's |trim and .strip() do): Unicode whitespace both ends.
std::string pythonStrip(std::string_view s);

void renderChatml(std::vector<TextSegment>& out, const RenderInput& in);
void renderDeepSeekR1(std::vector<TextSegment>& out, const RenderInput& in);
void renderGemma(std::vector<TextSegment>& out, const RenderInput& in);
void renderLlama2(std::vector<TextSegment>& out, const RenderInput& in);
void renderLlama3(std::vector<TextSegment>& out, const RenderInput& in);
void renderMistral(std::vector<TextSegment>& out, const RenderInput& in);
void renderPhi3(std::vector<TextSegment>& out, const RenderInput& in);
void renderZephyr(std::vector<TextSegment>& out, const RenderInput& in);
void renderPlain(std::vector<TextSegment>& out, const RenderInput& in);

}  // namespace hearth::chat
