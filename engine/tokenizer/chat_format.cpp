// Chat formats: recognising the family and its variant from literal snippets of the template
// text (never executing it), and the family's BOS/EOS texts; the renderers are in
// chat_format_render.cpp.
#include "engine/tokenizer/chat_format.h"

#include <optional>

#include "engine/str_cat.h"
#include "engine/tokenizer/chat_format_render.h"

namespace hearth {
namespace {

constexpr std::string_view kImStart = "<|im_start|>";
constexpr std::string_view kImEnd = "<|im_end|>";
// DeepSeek's markers, with full-width vertical bars (U+FF5C) and U+2581 for spaces.
constexpr std::string_view kDeepSeekUser = "<｜User｜>";
constexpr std::string_view kDeepSeekAssistant = "<｜Assistant｜>";
constexpr std::string_view kDeepSeekEnd = "<｜end▁of▁sentence｜>";

bool has(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

// The body of a Jinja string literal (\n, \t, \\, \', \" escapes); nullopt when the text holds
// an unescaped quote or template code, i.e. it is not one literal.
std::optional<std::string> unescapeJinjaLiteral(std::string_view raw) {
    if (has(raw, "{{") || has(raw, "{%")) return std::nullopt;
    std::string out;
    for (size_t i = 0; i < raw.size(); ++i) {
        const char c = raw[i];
        if (c == '\'' || c == '"') return std::nullopt;
        if (c != '\\' || i + 1 == raw.size()) {
            out += c;
            continue;
        }
        const char e = raw[++i];
        out += e == 'n' ? '\n' : e == 't' ? '\t' : e;
    }
    return out;
}

// SmolLM2/Qwen-style templates write a literal '<|im_start|>system\n...<|im_end|>\n' when the
// conversation does not start with a system message; that literal's text is the default.
std::string extractChatmlDefaultSystem(std::string_view tmpl) {
    const std::string marker = std::string(kImStart) + "system";
    for (size_t p = tmpl.find(marker); p != std::string_view::npos; p = tmpl.find(marker, p + 1)) {
        size_t body = p + marker.size();
        if (tmpl.substr(body, 1) == "\n") body += 1;
        else if (tmpl.substr(body, 2) == "\\n") body += 2;
        else continue;
        const size_t end = tmpl.find(kImEnd, body);
        if (end == std::string_view::npos) continue;
        if (auto text = unescapeJinjaLiteral(tmpl.substr(body, end - body)); text && !text->empty()) return *text;
    }
    return {};
}

// Whether the template's first output is bos_token ("{{ bos_token }}", "{{- bos_token }}").
bool startsWithBosToken(std::string_view tmpl) {
    const size_t open = tmpl.find("{{");
    const size_t bos = tmpl.find("bos_token");
    return open != std::string_view::npos && bos != std::string_view::npos && open < bos &&
        tmpl.find("}}", open) > bos && tmpl.find("{%") > bos;
}

ChatVariant mistralVariant(std::string_view t) {
    ChatVariant v;
    v.bos = has(t, "bos_token");
    v.systemInLastUser = has(t, "loop.last and system_message");
    v.spaceBeforeInstClose = has(t, "' [/INST]'");
    v.spaceBeforeAnswer = has(t, "' ' + message['content']");
    v.spaceAfterEos = has(t, "eos_token + ' '");
    return v;
}

// Qwen 3: the reasoning kept only after the last user query (ns.last_query_index), and in its
// thinking-only releases a generation prompt that opens the span.
ChatVariant chatmlVariant(std::string_view t) {
    ChatVariant v;
    v.thinking = has(t, "last_query_index") && has(t, "</think>");
    v.opensThinking = has(t, "<|im_start|>assistant\\n<think>") || has(t, "<|im_start|>assistant\n<think>");
    return v;
}

ChatVariant phi3Variant(std::string_view t) {
    ChatVariant v;
    v.bos = startsWithBosToken(t);
    v.systemRole = has(t, "<|system|>") || has(t, "'<|' + message['role'] + '|>'");
    v.dropEmptySystem = has(t, "message['role'] == 'system' and message['content']");
    v.userOpensAssistant = has(t, "'<|end|>' + '\\n' + '<|assistant|>'");
    v.eosWithoutGenPrompt = has(t, "{% else %}{{ eos_token }}");
    return v;
}

// The family of a non-empty template, or nullopt when it is none of the known ones.
std::optional<ChatFormat> detectFamily(std::string_view t, const ChatSpecialTexts& special) {
    if (has(t, kImStart))
        return ChatFormat(ChatFormatKind::ChatML, extractChatmlDefaultSystem(t), chatmlVariant(t), special);
    if (has(t, kDeepSeekUser) && has(t, kDeepSeekAssistant)) {
        const ChatVariant v{.opensThinking = has(t, std::string(kDeepSeekAssistant) + "<think>")};
        return ChatFormat(ChatFormatKind::DeepSeekR1, {}, v, special);
    }
    if (has(t, "<start_of_turn>")) return ChatFormat(ChatFormatKind::Gemma, {}, {.bos = true}, special);
    if (has(t, "<|start_header_id|>")) {
        const ChatVariant v{.bos = true, .knowledgeDate = has(t, "Cutting Knowledge Date")};
        return ChatFormat(ChatFormatKind::Llama3, {}, v, special);
    }
    if (has(t, "[INST]") && has(t, "<<SYS>>")) return ChatFormat(ChatFormatKind::Llama2, {}, {.bos = true}, special);
    // Mistral's v7 templates ([SYSTEM_PROMPT], [AVAILABLE_TOOLS]) are a different format.
    if (has(t, "[INST]") && !has(t, "[SYSTEM_PROMPT]"))
        return ChatFormat(ChatFormatKind::Mistral, {}, mistralVariant(t), special);
    if (has(t, "<|end|>") && has(t, "<|assistant|>"))
        return ChatFormat(ChatFormatKind::Phi3, {}, phi3Variant(t), special);
    if (has(t, "<|user|>") && has(t, "<|assistant|>") && has(t, "eos_token")) {
        const ChatVariant v{.newlineAfterTurn = has(t, "eos_token }}\n")};
        return ChatFormat(ChatFormatKind::Zephyr, {}, v, special);
    }
    return std::nullopt;
}

// The format of a model family whose template is not recognised, from general.architecture and
// the vocabulary's BOS text (which tells Llama 3 and DeepSeek's vocabularies apart from others of
// the same architecture); nullopt where the architecture does not say which turn markers the
// vocabulary has. Each variant is the family's latest template's.
std::optional<ChatFormat> architectureFamily(std::string_view arch, const ChatSpecialTexts& special) {
    const bool qwen2 = arch.starts_with("qwen2"), qwen3 = arch.starts_with("qwen3");
    if (special.bos == "<｜begin▁of▁sentence｜>" && (qwen2 || arch == "llama"))  // the R1 distills
        return ChatFormat(ChatFormatKind::DeepSeekR1, {}, {.opensThinking = true}, special);
    if (qwen2 || qwen3) return ChatFormat(ChatFormatKind::ChatML, {}, {.thinking = qwen3}, special);
    if (arch.starts_with("gemma")) return ChatFormat(ChatFormatKind::Gemma, {}, {}, special);
    if (arch == "phi3")
        return ChatFormat(ChatFormatKind::Phi3, {}, {.dropEmptySystem = true, .eosWithoutGenPrompt = true}, special);
    if (arch == "llama" && special.bos == "<|begin_of_text|>")
        return ChatFormat(ChatFormatKind::Llama3, {}, {}, special);
    return std::nullopt;
}

// The texts a family's templates get as bos_token / eos_token in its usual vocabulary.
ChatSpecialTexts familyTexts(ChatFormatKind kind) {
    switch (kind) {
    case ChatFormatKind::Gemma: return {"<bos>", "<eos>"};
    case ChatFormatKind::Llama3: return {"<|begin_of_text|>", "<|eot_id|>"};
    case ChatFormatKind::Phi3: return {"<s>", "<|endoftext|>"};
    case ChatFormatKind::ChatML: return {"", std::string(kImEnd)};
    case ChatFormatKind::DeepSeekR1: return {"<｜begin▁of▁sentence｜>", std::string(kDeepSeekEnd)};
    case ChatFormatKind::Plain: return {};
    default: return {"<s>", "</s>"};  // Llama 2, Mistral, Zephyr
    }
}

}  // namespace

ChatFormat::ChatFormat(ChatFormatKind kind, std::string defaultSystemPrompt, ChatVariant variant,
                       const ChatSpecialTexts& special)
    : kind_(kind), defaultSystem_(std::move(defaultSystemPrompt)), variant_(variant) {
    const ChatSpecialTexts usual = familyTexts(kind);
    bos_ = special.bos.empty() ? usual.bos : special.bos;
    eos_ = special.eos.empty() ? usual.eos : special.eos;
    if (kind == ChatFormatKind::Gemma || kind == ChatFormatKind::Llama2 || kind == ChatFormatKind::Llama3 ||
        kind == ChatFormatKind::DeepSeekR1)
        variant_.bos = true;
}

ChatFormat ChatFormat::detect(std::string_view chatTemplate, std::string_view architecture,
                              const ChatSpecialTexts& special) {
    if (!chatTemplate.empty())
        if (auto family = detectFamily(chatTemplate, special)) return *family;
    if (chatTemplate.empty() && architecture.starts_with("gemma"))
        return ChatFormat(ChatFormatKind::Gemma, {}, {}, special);
    if (!chatTemplate.empty())
        if (auto family = architectureFamily(architecture, special)) {
            family->fallbackReason_ = strCat("the model's chat template is not one Hearth recognises; it uses the ",
                                             family->name(), " format of its architecture (", architecture, ")");
            return *family;
        }
    ChatFormat plain(ChatFormatKind::Plain);
    plain.fallbackReason_ = chatTemplate.empty()
        ? "the model file has no chat template; its messages are joined as plain text"
        : "the model's chat template is not a known family; its messages are joined as plain text";
    return plain;
}

const char* ChatFormat::name() const {
    switch (kind_) {
    case ChatFormatKind::ChatML: return "chatml";
    case ChatFormatKind::DeepSeekR1: return "deepseek-r1";
    case ChatFormatKind::Gemma: return "gemma";
    case ChatFormatKind::Llama2: return "llama2";
    case ChatFormatKind::Llama3: return "llama3";
    case ChatFormatKind::Mistral: return "mistral";
    case ChatFormatKind::Phi3: return "phi3";
    case ChatFormatKind::Zephyr: return "zephyr";
    case ChatFormatKind::Plain: break;
    }
    return "plain";
}

bool ChatFormat::startsWithBos() const { return variant_.bos && !bos_.empty(); }

std::vector<TextSegment> ChatFormat::render(const std::vector<ChatMessage>& messages,
                                            const RenderOptions& options) const {
    std::vector<TextSegment> out;
    const chat::RenderInput in{
        messages, variant_, bos_, eos_, defaultSystem_, options.addGenerationPrompt, options.enableThinking};
    switch (kind_) {
    case ChatFormatKind::ChatML: chat::renderChatml(out, in); break;
    case ChatFormatKind::DeepSeekR1: chat::renderDeepSeekR1(out, in); break;
    case ChatFormatKind::Gemma: chat::renderGemma(out, in); break;
    case ChatFormatKind::Llama2: chat::renderLlama2(out, in); break;
    case ChatFormatKind::Llama3: chat::renderLlama3(out, in); break;
    case ChatFormatKind::Mistral: chat::renderMistral(out, in); break;
    case ChatFormatKind::Phi3: chat::renderPhi3(out, in); break;
    case ChatFormatKind::Zephyr: chat::renderZephyr(out, in); break;
    case ChatFormatKind::Plain: chat::renderPlain(out, in); break;
    }
    return out;
}

std::optional<ReasoningSpan> ChatFormat::reasoningSpan() const {
    const bool thinking = kind_ == ChatFormatKind::DeepSeekR1 ||
        (kind_ == ChatFormatKind::ChatML && (variant_.thinking || variant_.opensThinking));
    if (!thinking) return std::nullopt;
    return ReasoningSpan{.promptOpens = variant_.opensThinking};
}

ThinkingMode ChatFormat::thinkingMode() const {
    if (!reasoningSpan()) return ThinkingMode::None;
    // Only Qwen 3's hybrid template reads enable_thinking; a generation prompt that opens the span
    // reasons whatever the switch says.
    const bool switchable = kind_ == ChatFormatKind::ChatML && variant_.thinking && !variant_.opensThinking;
    return switchable ? ThinkingMode::Switchable : ThinkingMode::Always;
}

std::vector<std::string> ChatFormat::endOfTurnPieces() const {
    switch (kind_) {
    case ChatFormatKind::ChatML: return {std::string(kImEnd)};
    case ChatFormatKind::DeepSeekR1: return {std::string(kDeepSeekEnd)};
    case ChatFormatKind::Gemma: return {"<end_of_turn>"};
    case ChatFormatKind::Llama3: return {"<|eot_id|>"};
    case ChatFormatKind::Phi3: return {"<|end|>"};
    case ChatFormatKind::Llama2:
    case ChatFormatKind::Mistral:
    case ChatFormatKind::Zephyr: return {eos_};
    case ChatFormatKind::Plain: break;
    }
    return {};
}

}  // namespace hearth
