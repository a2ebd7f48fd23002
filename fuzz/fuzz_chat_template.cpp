// libFuzzer target: chat-format detection from tokenizer.chat_template text (first byte: the
// architecture name, the fallback; the rest: the template), then rendering a conversation in it,
// and splitting the text as a thinking model's reply. Message content must never land in a
// segment where special tokens are parsed.
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "engine/tokenizer/chat_format.h"

namespace {

constexpr std::array<std::string_view, 7> kArchitectures = {"llama", "gemma3", "gemma2", "qwen2", "qwen3", "phi3", ""};

// A marker no template renders on its own; it appears only through message content.
constexpr std::string_view kContentMarker = "\x01user-text\x02";

// True when view lies inside text (splitReasoning returns views into the reply).
bool within(std::string_view view, std::string_view text) {
    return view.empty() || (view.data() >= text.data() && view.data() + view.size() <= text.data() + text.size());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    const std::string_view arch = kArchitectures[data[0] % kArchitectures.size()];
    const std::string_view tmpl(reinterpret_cast<const char*>(data) + 1, size - 1);
    const hearth::ChatFormat format = hearth::ChatFormat::detect(tmpl, arch);
    const std::string marker(kContentMarker);
    const std::vector<hearth::ChatMessage> messages = {
        {hearth::ChatRole::System, marker},
        {hearth::ChatRole::User, marker},
        {hearth::ChatRole::Assistant, "<think>" + marker + "</think>" + marker},
        {hearth::ChatRole::User, marker}};
    volatile size_t sink = format.endOfTurnPieces().size() + format.startsWithBos();
    for (const bool open : {true, false})
        for (const bool thinking : {true, false})
            for (const hearth::TextSegment& segment :
                 format.render(messages, {.addGenerationPrompt = open, .enableThinking = thinking})) {
                // The default system prompt comes from the template itself, so it may hold anything;
                // the messages' own text must stay in plain segments.
                if (segment.allowSpecial && segment.text.find(kContentMarker) != std::string::npos &&
                    format.defaultSystemPrompt().find(kContentMarker) == std::string::npos)
                    std::abort();
                sink = sink + segment.text.size();
            }
    // The template text as a reply: split at the format's span (or the usual one), the parts
    // must lie within it.
    const hearth::ReasoningSpan span = format.reasoningSpan().value_or(hearth::ReasoningSpan{});
    for (const bool promptOpens : {true, false}) {
        const hearth::ReasoningSplit split =
            hearth::splitReasoning(tmpl, {.open = span.open, .close = span.close, .promptOpens = promptOpens});
        if (!within(split.reasoning, tmpl) || !within(split.answer, tmpl)) std::abort();
        sink = sink + split.reasoning.size() + split.answer.size();
    }
    return 0;
}
