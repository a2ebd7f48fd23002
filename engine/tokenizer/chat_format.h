// Chat turn formats, recognised from the GGUF's tokenizer.chat_template (never executed: the
// Jinja text is only matched against known families). Rendering reproduces what the template
// would render, as segments: the format's own text may contain control tokens, the messages'
// content never is parsed for them.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "engine/tokenizer/tokenizer.h"

namespace hearth {

struct ChatMessage {
    std::string role;     // "system", "user", "assistant"
    std::string content;
};

enum class ChatFormatKind { ChatML, Gemma, Llama2, Plain };

class ChatFormat {
public:
    // Detects the family from the template text (empty when the file has none) and the
    // architecture name (a fallback for files without a template, e.g. Gemma 3 GGUFs).
    static ChatFormat detect(std::string_view chatTemplate, std::string_view architecture);
    explicit ChatFormat(ChatFormatKind kind, std::string defaultSystemPrompt = {});

    ChatFormatKind kind() const { return kind_; }
    const char* name() const;  // "chatml", "gemma", "llama2", "plain"
    // A default system prompt the template inserts when the conversation has none ("" if none).
    const std::string& defaultSystemPrompt() const { return defaultSystem_; }

    // The prompt for messages, with the assistant's turn opened when addGenerationPrompt.
    // Template text (including a default system prompt the template writes) comes as
    // allowSpecial segments, message content (a conversation's own system prompt too) as plain
    // ones. Includes the BOS text only when the template itself writes it: see startsWithBos().
    std::vector<TextSegment> render(const std::vector<ChatMessage>& messages,
                                    bool addGenerationPrompt) const;
    // True when render() begins with the BOS piece's text ("<bos>" for Gemma, "<s>" for Llama 2)
    // as an allowSpecial segment, so that encoding it yields BOS: the caller must then encode
    // with addBos = false, or the prompt starts with two BOS tokens.
    bool startsWithBos() const;
    // Text pieces that end an assistant turn (e.g. "<|im_end|>", "<end_of_turn>").
    std::vector<std::string> endOfTurnPieces() const;

private:
    ChatFormatKind kind_;
    std::string defaultSystem_;
};

}  // namespace hearth
