// Chat formats: recognising the family from the template text, and rendering a conversation
// the way each family's reference Jinja template does (SmolLM2's ChatML with its default system
// prompt, Gemma 3's official template, Llama 2's), character for character.
#include "engine/tokenizer/chat_format.h"

#include <optional>

#include "engine/tokenizer/utf8.h"

namespace hearth {
namespace {

constexpr std::string_view kImStart = "<|im_start|>";
constexpr std::string_view kImEnd = "<|im_end|>";

// Python's str.isspace(), which Jinja's |trim and str.strip() use.
bool isPythonSpace(char32_t cp) {
    return (cp >= 0x09 && cp <= 0x0D) || (cp >= 0x1C && cp <= 0x20) || cp == 0x85 || cp == 0xA0 || cp == 0x1680 ||
           (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F ||
           cp == 0x3000;
}

std::string pythonStrip(std::string_view s) {
    size_t first = std::string_view::npos, last = 0;
    for (size_t pos = 0; pos < s.size();) {
        const utf8::Decoded d = utf8::decodeAt(s, pos);
        if (!isPythonSpace(d.cp)) {
            if (first == std::string_view::npos) first = pos;
            last = pos + d.len;
        }
        pos += d.len;
    }
    return first == std::string_view::npos ? std::string() : std::string(s.substr(first, last - first));
}

void add(std::vector<TextSegment>& out, std::string_view text, bool allowSpecial) {
    if (text.empty()) return;
    if (!out.empty() && out.back().allowSpecial == allowSpecial)
        out.back().text += text;
    else
        out.push_back(TextSegment{std::string(text), allowSpecial});
}
void addTemplate(std::vector<TextSegment>& out, std::string_view text) { add(out, text, true); }
void addContent(std::vector<TextSegment>& out, std::string_view text) { add(out, text, false); }

// The body of a Jinja string literal (\n, \t, \\, \', \" escapes); nullopt when the text holds
// an unescaped quote or template code, i.e. it is not one literal.
std::optional<std::string> unescapeJinjaLiteral(std::string_view raw) {
    if (raw.find("{{") != std::string_view::npos || raw.find("{%") != std::string_view::npos) return std::nullopt;
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

// SmolLM2-style templates write a literal '<|im_start|>system\n...<|im_end|>\n' when the
// conversation does not start with a system message; that literal's text is the default.
std::string extractChatmlDefaultSystem(std::string_view tmpl) {
    const std::string marker = std::string(kImStart) + "system";
    for (size_t p = tmpl.find(marker); p != std::string_view::npos; p = tmpl.find(marker, p + 1)) {
        size_t body = p + marker.size();
        if (tmpl.substr(body, 1) == "\n")
            body += 1;
        else if (tmpl.substr(body, 2) == "\\n")
            body += 2;
        else
            continue;
        const size_t end = tmpl.find(kImEnd, body);
        if (end == std::string_view::npos) continue;
        if (auto text = unescapeJinjaLiteral(tmpl.substr(body, end - body)); text && !text->empty()) return *text;
    }
    return {};
}

void renderChatml(std::vector<TextSegment>& out, const std::vector<ChatMessage>& messages,
                  const std::string& defaultSystem) {
    if (!messages.empty() && messages[0].role != "system" && !defaultSystem.empty())
        addTemplate(out, std::string(kImStart) + "system\n" + defaultSystem + std::string(kImEnd) + "\n");
    for (const ChatMessage& m : messages) {
        addTemplate(out, std::string(kImStart) + m.role + "\n");
        addContent(out, m.content);
        addTemplate(out, std::string(kImEnd) + "\n");
    }
}

// Gemma 3's template: a system message becomes a prefix of the first turn's content; content is
// |trim-med; the assistant's role is "model".
void renderGemma(std::vector<TextSegment>& out, const std::vector<ChatMessage>& messages) {
    addTemplate(out, "<bos>");
    const bool hasSystem = !messages.empty() && messages[0].role == "system";
    for (size_t k = hasSystem ? 1 : 0; k < messages.size(); ++k) {
        const ChatMessage& m = messages[k];
        addTemplate(out, "<start_of_turn>" + (m.role == "assistant" ? std::string("model") : m.role) + "\n");
        if (hasSystem && k == 1) addContent(out, messages[0].content + "\n\n");
        addContent(out, pythonStrip(m.content));
        addTemplate(out, "<end_of_turn>\n");
    }
}

// Llama 2's template: [INST] turns, the system prompt in <<SYS>> inside the first user turn,
// content .strip()-ped, BOS before each user turn and EOS after each answer.
void renderLlama2(std::vector<TextSegment>& out, const std::vector<ChatMessage>& messages) {
    const bool hasSystem = !messages.empty() && messages[0].role == "system";
    for (size_t k = hasSystem ? 1 : 0; k < messages.size(); ++k) {
        const ChatMessage& m = messages[k];
        std::string content = m.content;
        if (hasSystem && k == 1) content = "<<SYS>>\n" + messages[0].content + "\n<</SYS>>\n\n" + content;
        if (m.role == "user") {
            addTemplate(out, "<s>[INST] ");
            addContent(out, pythonStrip(content));
            addTemplate(out, " [/INST]");
        } else if (m.role == "assistant") {
            addTemplate(out, " ");
            addContent(out, pythonStrip(content));
            addTemplate(out, " </s>");
        }
    }
}

}  // namespace

ChatFormat::ChatFormat(ChatFormatKind kind, std::string defaultSystemPrompt)
    : kind_(kind), defaultSystem_(std::move(defaultSystemPrompt)) {}

ChatFormat ChatFormat::detect(std::string_view chatTemplate, std::string_view architecture) {
    if (chatTemplate.find(kImStart) != std::string_view::npos)
        return ChatFormat(ChatFormatKind::ChatML, extractChatmlDefaultSystem(chatTemplate));
    if (chatTemplate.find("<start_of_turn>") != std::string_view::npos) return ChatFormat(ChatFormatKind::Gemma);
    if (chatTemplate.empty() && architecture.starts_with("gemma")) return ChatFormat(ChatFormatKind::Gemma);
    if (chatTemplate.find("[INST]") != std::string_view::npos) return ChatFormat(ChatFormatKind::Llama2);
    return ChatFormat(ChatFormatKind::Plain);
}

const char* ChatFormat::name() const {
    switch (kind_) {
    case ChatFormatKind::ChatML: return "chatml";
    case ChatFormatKind::Gemma: return "gemma";
    case ChatFormatKind::Llama2: return "llama2";
    case ChatFormatKind::Plain: break;
    }
    return "plain";
}

bool ChatFormat::startsWithBos() const {
    return kind_ == ChatFormatKind::Gemma || kind_ == ChatFormatKind::Llama2;
}

std::vector<TextSegment> ChatFormat::render(const std::vector<ChatMessage>& messages, bool addGenerationPrompt) const {
    std::vector<TextSegment> out;
    switch (kind_) {
    case ChatFormatKind::ChatML:
        renderChatml(out, messages, defaultSystem_);
        if (addGenerationPrompt) addTemplate(out, std::string(kImStart) + "assistant\n");
        break;
    case ChatFormatKind::Gemma:
        renderGemma(out, messages);
        if (addGenerationPrompt) addTemplate(out, "<start_of_turn>model\n");
        break;
    case ChatFormatKind::Llama2:
        renderLlama2(out, messages);
        break;
    case ChatFormatKind::Plain:
        // No template: the contents one per line, for a base model to continue.
        for (size_t k = 0; k < messages.size(); ++k) addContent(out, (k > 0 ? "\n" : "") + messages[k].content);
        break;
    }
    return out;
}

std::vector<std::string> ChatFormat::endOfTurnPieces() const {
    switch (kind_) {
    case ChatFormatKind::ChatML: return {std::string(kImEnd)};
    case ChatFormatKind::Gemma: return {"<end_of_turn>"};
    case ChatFormatKind::Llama2: return {"</s>"};
    case ChatFormatKind::Plain: break;
    }
    return {};
}

}  // namespace hearth
