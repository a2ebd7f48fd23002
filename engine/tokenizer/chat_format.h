// Chat turn formats, recognised from the GGUF's tokenizer.chat_template (never executed: the
// Jinja text is only matched against known families). Rendering reproduces what the template
// would render, as segments: the format's own text may contain control tokens, the messages'
// content never is parsed for them.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/tokenizer/chat_role.h"
#include "engine/tokenizer/reasoning.h"
#include "engine/tokenizer/tokenizer.h"

namespace hearth {

struct ChatMessage {
    ChatRole role = ChatRole::User;
    std::string content;
};

enum class ChatFormatKind { ChatML, DeepSeekR1, Gemma, Llama2, Llama3, Mistral, Phi3, Zephyr, Plain };

// Whether a format's replies reason first, and whether the user can turn that off.
enum class ThinkingMode {
    None,  // no reasoning span
    Switchable,  // Qwen 3: enable_thinking false writes an empty think block after the generation prompt
    Always,  // DeepSeek-R1 distills, Qwen 3's thinking-only releases: the template has no switch
};

// What a family's templates differ in, read from literal snippets of the template text (see
// chat_format.cpp's detect*): which variant of the family it is.
struct ChatVariant {
    bool bos = false;  // the template writes bos_token first (Llama 2: before each user turn)
    bool systemRole = true;  // the template renders a system message (else see render())
    bool systemInLastUser = false;  // Mistral v0.3/Nemo: the system text prefixes the last message if a user's
    bool dropEmptySystem = false;  // Phi-3.5: a system message with empty content is skipped
    bool userOpensAssistant = false;  // Phi-3-mini (first release): every user turn opens the assistant's
    bool eosWithoutGenPrompt = false;  // Phi-3: eos_token when the assistant's turn is not opened
    bool spaceBeforeInstClose = true;  // Mistral: "' [/INST]'" (v0.1) or "'[/INST]'" (v0.3)
    bool spaceBeforeAnswer = false;  // Mistral v0.3: "' ' + content" for the assistant
    bool spaceAfterEos = false;  // Mistral v0.1: "content + eos_token + ' '"
    bool newlineAfterTurn = true;  // Zephyr: the template's line break after each turn
    bool knowledgeDate = false;  // Llama 3.1: a system header with the knowledge date, always
    bool thinking = false;  // Qwen 3: reasoning kept only after the last user query; enable_thinking
    bool opensThinking = false;  // the generation prompt opens the reasoning span ("<think>\n")
};

// The texts of the vocabulary's BOS and EOS pieces, which templates write as bos_token and
// eos_token. Empty: the family's usual text ("<s>", "</s>", "<|begin_of_text|>", ...).
struct ChatSpecialTexts {
    std::string bos, eos;
};

// The variables a template is rendered with besides the messages.
struct RenderOptions {
    bool addGenerationPrompt = true;  // open the assistant's turn after the messages
    bool enableThinking = true;  // Qwen 3's enable_thinking; false writes an empty think block after the
        // generation prompt. Formats without the switch ignore it.
};

class ChatFormat {
public:
    // Detects the family from the template text (empty when the file has none). A template that
    // is no known family falls back to the format of the model's family, from the architecture
    // and the vocabulary's BOS text (qwen2 / qwen3: ChatML, Qwen 3's with reasoning; gemma*:
    // Gemma; phi3: Phi-3.5's; llama with Llama 3's BOS: Llama 3; qwen2 or llama with DeepSeek's
    // BOS: DeepSeek-R1), flagged as a fallback (fallbackReason() says so). A file without a
    // template is Gemma for gemma* (Gemma 3 GGUFs ship none) and otherwise Plain, as is an
    // unrecognised template of any other family, also flagged. Plain, not ChatML, because
    // ChatML's markers are control tokens only in vocabularies that define them; elsewhere they
    // would reach the model as literal text it was never trained on, and a file without a
    // template is most often a base model, which continues plain text.
    static ChatFormat detect(std::string_view chatTemplate, std::string_view architecture,
                             const ChatSpecialTexts& special = {});
    explicit ChatFormat(ChatFormatKind kind, std::string defaultSystemPrompt = {}, ChatVariant variant = {},
                        const ChatSpecialTexts& special = {});

    ChatFormatKind kind() const { return kind_; }
    const ChatVariant& variant() const { return variant_; }
    // "chatml", "deepseek-r1", "gemma", "llama2", "llama3", "mistral", "phi3", "zephyr", "plain"
    const char* name() const;
    // True when the template was missing or not recognised and the format was chosen otherwise
    // (the architecture's family, or Plain); the reason is for the user.
    bool isFallback() const { return !fallbackReason_.empty(); }
    const std::string& fallbackReason() const { return fallbackReason_; }
    // A default system prompt the template inserts when the conversation has none ("" if none).
    const std::string& defaultSystemPrompt() const { return defaultSystem_; }

    // The prompt for messages, with the assistant's turn opened when options.addGenerationPrompt.
    // Template text (including a default system prompt the template writes) comes as
    // allowSpecial segments, message content (a conversation's own system prompt too) as plain
    // ones. Includes the BOS text only when the template itself writes it: see startsWithBos().
    // A system message where the template rejects one (Mistral v0.1/v0.2 raise an exception)
    // prefixes the first user message, followed by "\n\n"; where the template drops it silently
    // (Phi-3-mini's first release), it is dropped, as the template does.
    std::vector<TextSegment> render(const std::vector<ChatMessage>& messages, const RenderOptions& options) const;
    std::vector<TextSegment> render(const std::vector<ChatMessage>& messages, bool addGenerationPrompt) const {
        return render(messages, RenderOptions{.addGenerationPrompt = addGenerationPrompt});
    }
    // True when render() begins with the BOS piece's text ("<bos>" for Gemma, "<s>" for Llama 2)
    // as an allowSpecial segment, so that encoding it yields BOS: the caller must then encode
    // with addBos = false, or the prompt starts with two BOS tokens.
    bool startsWithBos() const;
    // Text pieces that end an assistant turn (e.g. "<|im_end|>", "<end_of_turn>").
    std::vector<std::string> endOfTurnPieces() const;
    // For a thinking format (Qwen 3, DeepSeek-R1), the span its replies reason in, to pass to
    // splitReasoning(); nullopt for formats without one. Replies are rendered back as the template
    // does: render() drops the reasoning the template drops.
    std::optional<ReasoningSpan> reasoningSpan() const;
    ThinkingMode thinkingMode() const;

private:
    ChatFormatKind kind_;
    std::string defaultSystem_;
    ChatVariant variant_;
    std::string bos_, eos_;
    std::string fallbackReason_;
};

}  // namespace hearth
