// The GPT-2 pre-tokenizer regex, alternative by alternative, over decoded code points; and the
// SmolLM variant (llama.cpp's LLAMA_VOCAB_PRE_TYPE_SMOLLM: "\p{N}" then the GPT-2 regex; the
// same as SmolLM2's tokenizer.json: Digits(individual_digits) then ByteLevel's regex).
#include "engine/tokenizer/pretokenizer.h"

#include <span>

#include "engine/str_cat.h"
#include "engine/tokenizer/unicode_class.h"
#include "engine/tokenizer/utf8.h"

namespace hearth {
namespace {

struct CodePoint {
    char32_t cp;
    CharClass cls;
    size_t offset;  // in the text, bytes
    size_t len;     // bytes
};

std::vector<CodePoint> decodeAll(std::string_view text) {
    std::vector<CodePoint> out;
    out.reserve(text.size());
    for (size_t pos = 0; pos < text.size();) {
        const utf8::Decoded d = utf8::decodeAt(text, pos);
        out.push_back({d.cp, charClass(d.cp), pos, d.len});
        pos += d.len;
    }
    return out;
}

// Length in code points of a contraction ('s 't 'm 'd 're 've 'll, case-sensitive as in the
// regex) at cps[i], which is an apostrophe; 0 when none.
size_t contractionLength(std::span<const CodePoint> cps, size_t i) {
    auto at = [&](size_t k) { return i + k < cps.size() ? cps[i + k].cp : char32_t{0}; };
    const char32_t a = at(1), b = at(2);
    if (a == U's' || a == U't' || a == U'm' || a == U'd') return 2;
    if ((a == U'r' && b == U'e') || (a == U'v' && b == U'e') || (a == U'l' && b == U'l')) return 3;
    return 0;
}

// One regex match starting at cps[i]: its end (exclusive), in code points.
size_t gpt2MatchEnd(std::span<const CodePoint> cps, size_t i) {
    const size_t n = cps.size();
    auto cls = [&](size_t k) { return cps[k].cls; };
    if (cps[i].cp == U'\'') {
        if (const size_t len = contractionLength(cps, i); len > 0) return i + len;
    }
    // " ?\p{L}+", " ?\p{N}+", " ?[^\s\p{L}\p{N}]+": an optional space, then a run of one class.
    const size_t start = cps[i].cp == U' ' && i + 1 < n && cls(i + 1) != CharClass::Space ? i + 1 : i;
    if (cls(start) != CharClass::Space) {
        size_t end = start + 1;
        while (end < n && cls(end) == cls(start)) ++end;
        return end;
    }
    // "\s+(?!\S)": a whitespace run, less its last character when a non-space follows (that one
    // goes with the next word); "\s+" takes a single whitespace character before a non-space.
    size_t end = i;
    while (end < n && cls(end) == CharClass::Space) ++end;
    if (end < n && end - i >= 2) --end;
    return end;
}

void splitGpt2(std::span<const CodePoint> cps, std::string_view text, std::vector<std::string_view>& out) {
    for (size_t i = 0; i < cps.size();) {
        const size_t end = gpt2MatchEnd(cps, i);
        const size_t first = cps[i].offset;
        const size_t last = cps[end - 1].offset + cps[end - 1].len;
        out.push_back(text.substr(first, last - first));
        i = end;
    }
}

// "\p{N}" as llama.cpp applies a regex split: each number code point is a piece of its own, and
// the text between them is passed on whole.
void splitSmolLM(std::span<const CodePoint> cps, std::string_view text, std::vector<std::string_view>& out) {
    size_t runStart = 0;
    for (size_t i = 0; i < cps.size(); ++i) {
        if (cps[i].cls != CharClass::Number) continue;
        splitGpt2(cps.subspan(runStart, i - runStart), text, out);
        splitGpt2(cps.subspan(i, 1), text, out);
        runStart = i + 1;
    }
    splitGpt2(cps.subspan(runStart), text, out);
}

}  // namespace

Result<PreTokenizerKind> preTokenizerFromName(std::string_view name) {
    if (name.empty() || name == "default" || name == "gpt2") return PreTokenizerKind::Gpt2;
    if (name == "smollm") return PreTokenizerKind::SmolLM;
    return fail(ErrorCode::Unsupported,
                strCat("tokenizer.ggml.pre \"", name,
                       "\" is not supported (supported: \"gpt2\", \"smollm\", \"default\")"));
}

void preTokenize(PreTokenizerKind kind, std::string_view text, std::vector<std::string_view>& out) {
    const std::vector<CodePoint> cps = decodeAll(text);
    if (kind == PreTokenizerKind::SmolLM)
        splitSmolLM(cps, text, out);
    else
        splitGpt2(cps, text, out);
}

}  // namespace hearth
