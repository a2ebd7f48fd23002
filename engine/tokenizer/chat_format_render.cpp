// The renderers of the chat template families: each writes, character for character, what its
// family's Jinja template renders (Hugging Face settings: trim_blocks, lstrip_blocks), with
// template text as allowSpecial segments and message content as plain ones.
#include "engine/tokenizer/chat_format_render.h"

#include "engine/tokenizer/utf8.h"

namespace hearth::chat {
namespace {

// Python's str.isspace(), which Jinja's |trim and str.strip() use.
bool isPythonSpace(char32_t cp) {
    return (cp >= 0x09 && cp <= 0x0D) || (cp >= 0x1C && cp <= 0x20) || cp == 0x85 || cp == 0xA0 || cp == 0x1680 ||
        (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

void add(std::vector<TextSegment>& out, std::string_view text, bool allowSpecial) {
    if (text.empty()) return;
    if (!out.empty() && out.back().allowSpecial == allowSpecial) out.back().text += text;
    else out.push_back(TextSegment{std::string(text), allowSpecial});
}
void addTemplate(std::vector<TextSegment>& out, std::string_view text) { add(out, text, true); }
void addContent(std::vector<TextSegment>& out, std::string_view text) { add(out, text, false); }

// The role's name as the templates write it ("<|im_start|>user").
std::string roleName(const ChatMessage& m) { return std::string(chatRoleName(m.role)); }

bool hasSystem(const std::vector<ChatMessage>& m) { return !m.empty() && m[0].role == ChatRole::System; }

// Python's str.lstrip('\n') / rstrip('\n'), which the thinking templates apply around <think> spans.
std::string_view lstripNewlines(std::string_view s) {
    const size_t first = s.find_first_not_of('\n');
    return first == std::string_view::npos ? std::string_view() : s.substr(first);
}
std::string_view rstripNewlines(std::string_view s) { return s.substr(0, s.find_last_not_of('\n') + 1); }

constexpr std::string_view kThinkOpen = "<think>", kThinkClose = "</think>";

// Qwen 3's last user query: the last user message that is not a tool response wrapped as one;
// the last message's index when there is none.
size_t qwen3LastQuery(const std::vector<ChatMessage>& messages) {
    for (size_t k = messages.size(); k-- > 0;) {
        const std::string& c = messages[k].content;
        if (messages[k].role == ChatRole::User &&
            !(c.starts_with("<tool_response>") && c.ends_with("</tool_response>")))
            return k;
    }
    return messages.size() - 1;
}

// A Qwen 3 answer: its reasoning is the text before the first </think> after the last <think>,
// its content what follows the last </think>. Answers after the last user query keep the
// reasoning in a <think> block (the last message always, empty or not); earlier ones lose it.
void addQwen3Answer(std::vector<TextSegment>& out, std::string_view content, bool keepReasoning, bool last) {
    std::string_view reasoning;
    if (const size_t firstClose = content.find(kThinkClose); firstClose != std::string_view::npos) {
        reasoning = rstripNewlines(content.substr(0, firstClose));
        if (const size_t open = reasoning.rfind(kThinkOpen); open != std::string_view::npos)
            reasoning = reasoning.substr(open + kThinkOpen.size());
        reasoning = lstripNewlines(reasoning);
        content = lstripNewlines(content.substr(content.rfind(kThinkClose) + kThinkClose.size()));
    }
    if (keepReasoning && (last || !reasoning.empty())) {
        addTemplate(out, "<|im_start|>assistant\n<think>\n");
        addContent(out, rstripNewlines(lstripNewlines(reasoning)));
        addTemplate(out, "\n</think>\n\n");
        addContent(out, lstripNewlines(content));
    } else {
        addTemplate(out, "<|im_start|>assistant\n");
        addContent(out, content);
    }
    addTemplate(out, "<|im_end|>\n");
}

}  // namespace

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

// SmolLM2 / Qwen: <|im_start|>role\ncontent<|im_end|>\n; the template's default system prompt
// when the conversation does not open with one. Qwen 3 renders answers as addQwen3Answer says, and
// its generation prompt is followed by an empty think block when enable_thinking is false.
void renderChatml(std::vector<TextSegment>& out, const RenderInput& in) {
    if (!in.messages.empty() && !hasSystem(in.messages) && !in.defaultSystem.empty())
        addTemplate(out, "<|im_start|>system\n" + in.defaultSystem + "<|im_end|>\n");
    const size_t lastQuery = in.variant.thinking && !in.messages.empty() ? qwen3LastQuery(in.messages) : 0;
    for (size_t k = 0; k < in.messages.size(); ++k) {
        const ChatMessage& m = in.messages[k];
        if (in.variant.thinking && m.role == ChatRole::Assistant) {
            addQwen3Answer(out, m.content, k > lastQuery, k + 1 == in.messages.size());
            continue;
        }
        addTemplate(out, "<|im_start|>" + roleName(m) + "\n");
        addContent(out, m.content);
        addTemplate(out, "<|im_end|>\n");
    }
    if (!in.addGenerationPrompt) return;
    addTemplate(out, "<|im_start|>assistant\n");
    if (in.variant.opensThinking) addTemplate(out, "<think>\n");
    else if (in.variant.thinking && !in.enableThinking) addTemplate(out, "<think>\n\n</think>\n\n");
}

// DeepSeek-R1 (and its Qwen / Llama distills): BOS, the last system message's text, then
// <｜User｜>content and <｜Assistant｜>answer<｜end▁of▁sentence｜>, where the answer is the text after
// its last </think> - every answer loses its reasoning. The newer templates' generation prompt opens
// the reasoning span: <｜Assistant｜><think>\n.
void renderDeepSeekR1(std::vector<TextSegment>& out, const RenderInput& in) {
    addTemplate(out, in.bos);
    for (size_t k = in.messages.size(); k-- > 0;)
        if (in.messages[k].role == ChatRole::System) {
            addContent(out, in.messages[k].content);
            break;
        }
    for (const ChatMessage& m : in.messages) {
        if (m.role == ChatRole::User) {
            addTemplate(out, "<｜User｜>");
            addContent(out, m.content);
        } else if (m.role == ChatRole::Assistant) {
            const size_t close = m.content.rfind(kThinkClose);
            addTemplate(out, "<｜Assistant｜>");
            addContent(out,
                       close == std::string::npos ? std::string_view(m.content)
                                                  : std::string_view(m.content).substr(close + kThinkClose.size()));
            addTemplate(out, "<｜end▁of▁sentence｜>");
        }
    }
    if (in.addGenerationPrompt)
        addTemplate(out, in.variant.opensThinking ? "<｜Assistant｜><think>\n" : "<｜Assistant｜>");
}

// Gemma 3: a system message becomes a prefix of the first turn's content; content is |trim-med;
// the assistant's role is "model".
void renderGemma(std::vector<TextSegment>& out, const RenderInput& in) {
    addTemplate(out, in.bos);
    const bool system = hasSystem(in.messages);
    for (size_t k = system ? 1 : 0; k < in.messages.size(); ++k) {
        const ChatMessage& m = in.messages[k];
        addTemplate(out,
                    "<start_of_turn>" + (m.role == ChatRole::Assistant ? std::string("model") : roleName(m)) + "\n");
        if (system && k == 1) addContent(out, in.messages[0].content + "\n\n");
        addContent(out, pythonStrip(m.content));
        addTemplate(out, "<end_of_turn>\n");
    }
    if (in.addGenerationPrompt) addTemplate(out, "<start_of_turn>model\n");
}

// Llama 2: [INST] turns, the system prompt in <<SYS>> inside the first user turn, content
// .strip()-ped, BOS before each user turn and EOS after each answer. No generation prompt.
void renderLlama2(std::vector<TextSegment>& out, const RenderInput& in) {
    const bool system = hasSystem(in.messages);
    for (size_t k = system ? 1 : 0; k < in.messages.size(); ++k) {
        const ChatMessage& m = in.messages[k];
        std::string content = m.content;
        if (system && k == 1) content = "<<SYS>>\n" + in.messages[0].content + "\n<</SYS>>\n\n" + content;
        if (m.role == ChatRole::User) {
            addTemplate(out, in.bos + "[INST] ");
            addContent(out, pythonStrip(content));
            addTemplate(out, " [/INST]");
        } else if (m.role == ChatRole::Assistant) {
            addTemplate(out, " ");
            addContent(out, pythonStrip(content));
            addTemplate(out, " " + in.eos);
        }
    }
}

// Llama 3: BOS, then <|start_header_id|>role<|end_header_id|>\n\n + content|trim + <|eot_id|>.
// Llama 3.1's template always writes a system header with its knowledge date and the date it
// falls back to without strftime_now ("26 Jul 2024"), then the system message |trim-med.
void renderLlama3(std::vector<TextSegment>& out, const RenderInput& in) {
    addTemplate(out, in.bos);
    size_t first = 0;
    if (in.variant.knowledgeDate) {
        addTemplate(out,
                    "<|start_header_id|>system<|end_header_id|>\n\n"
                    "Cutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\n");
        if (hasSystem(in.messages)) addContent(out, pythonStrip(in.messages[0].content));
        addTemplate(out, "<|eot_id|>");
        first = hasSystem(in.messages) ? 1 : 0;
    }
    for (size_t k = first; k < in.messages.size(); ++k) {
        addTemplate(out, "<|start_header_id|>" + roleName(in.messages[k]) + "<|end_header_id|>\n\n");
        addContent(out, pythonStrip(in.messages[k].content));
        addTemplate(out, "<|eot_id|>");
    }
    if (in.addGenerationPrompt) addTemplate(out, "<|start_header_id|>assistant<|end_header_id|>\n\n");
}

// Mistral: BOS, "[INST] " + content + " [/INST]" (v0.1/v0.2) or "[/INST]" (v0.3, Nemo); the
// answer as content + EOS (v0.1 adds ' ', v0.3 prefixes ' '). v0.3 puts the system message
// before the last message if it is a user's; v0.1/v0.2 templates reject a system message, and
// Hearth then puts it before the first user message. Content is not stripped. No generation
// prompt: the prompt ends with [/INST].
void renderMistral(std::vector<TextSegment>& out, const RenderInput& in) {
    const ChatVariant& v = in.variant;
    if (v.bos) addTemplate(out, in.bos);
    const bool system = hasSystem(in.messages);
    const size_t begin = system ? 1 : 0;
    for (size_t k = begin; k < in.messages.size(); ++k) {
        const ChatMessage& m = in.messages[k];
        if (m.role == ChatRole::User) {
            addTemplate(out, "[INST] ");
            const bool withSystem = system && (v.systemInLastUser ? k + 1 == in.messages.size() : k == begin);
            if (withSystem) addContent(out, in.messages[0].content + "\n\n");
            addContent(out, m.content);
            addTemplate(out, v.spaceBeforeInstClose ? " [/INST]" : "[/INST]");
        } else if (m.role == ChatRole::Assistant) {
            if (v.spaceBeforeAnswer) addTemplate(out, " ");
            addContent(out, m.content);
            addTemplate(out, in.eos + (v.spaceAfterEos ? " " : ""));
        }
    }
}

// Phi-3: <|role|>\ncontent<|end|>\n, then <|assistant|>\n (generation prompt) or EOS. The first
// Phi-3-mini template instead opens the assistant's turn after every user turn, writes answers
// without a header and drops system messages (as that template does).
void renderPhi3(std::vector<TextSegment>& out, const RenderInput& in) {
    const ChatVariant& v = in.variant;
    if (v.bos) addTemplate(out, in.bos);
    for (const ChatMessage& m : in.messages) {
        if (m.role == ChatRole::System && (!v.systemRole || (v.dropEmptySystem && m.content.empty()))) continue;
        if (v.userOpensAssistant && m.role == ChatRole::Assistant) {
            addContent(out, m.content);
            addTemplate(out, "<|end|>\n");
            continue;
        }
        addTemplate(out, "<|" + roleName(m) + "|>\n");
        addContent(out, m.content);
        addTemplate(out, v.userOpensAssistant && m.role == ChatRole::User ? "<|end|>\n<|assistant|>\n" : "<|end|>\n");
    }
    if (v.userOpensAssistant) return;
    if (in.addGenerationPrompt) addTemplate(out, "<|assistant|>\n");
    else if (v.eosWithoutGenPrompt) addTemplate(out, in.eos);
}

// Zephyr (and TinyLlama): <|role|>\ncontent + EOS, a line break after each turn (the template's
// own, kept by trim_blocks); <|assistant|> after the last message when a turn is to be opened.
void renderZephyr(std::vector<TextSegment>& out, const RenderInput& in) {
    const std::string newline = in.variant.newlineAfterTurn ? "\n" : "";
    for (const ChatMessage& m : in.messages) {
        addTemplate(out, "<|" + roleName(m) + "|>\n");
        addContent(out, m.content);
        addTemplate(out, in.eos + newline);
    }
    if (in.addGenerationPrompt && !in.messages.empty()) addTemplate(out, "<|assistant|>" + newline);
}

// No template: the contents one per line, for a base model to continue.
void renderPlain(std::vector<TextSegment>& out, const RenderInput& in) {
    for (size_t k = 0; k < in.messages.size(); ++k) addContent(out, (k > 0 ? "\n" : "") + in.messages[k].content);
}

}  // namespace hearth::chat
