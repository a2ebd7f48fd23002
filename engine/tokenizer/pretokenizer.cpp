// The pre-tokenizer regexes, alternative by alternative, over decoded code points, and the lists
// llama.cpp applies for each tokenizer.ggml.pre name (src/llama-vocab.cpp, llm_tokenizer_bpe).
// A list's regexes run one after another, each within the pieces the previous one made, so a
// regex's lookahead stops at the end of its piece.
#include "engine/tokenizer/pretokenizer.h"

#include <array>
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
    size_t len;  // bytes
};
using Piece = std::span<const CodePoint>;

// One regex applied to a piece: the end (exclusive, in code points) of the piece's next part,
// which starts at i — a match, or the text before the next match.
using MatchEnd = size_t (*)(Piece cps, size_t i);

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

bool isLineBreak(char32_t cp) { return cp == U'\r' || cp == U'\n'; }
bool isAsciiDigit(char32_t cp) { return cp >= U'0' && cp <= U'9'; }
// ASCII only: no other code point lowercases to a letter of the contractions.
char32_t asciiLower(char32_t cp) { return cp >= U'A' && cp <= U'Z' ? cp + (U'a' - U'A') : cp; }

// Length in code points of a contraction ('s 't 'm 'd 're 've 'll) at cps[i], which is an
// apostrophe; 0 when none. The Llama 3 family's (?i:...) also takes 'S, 'Re, 'LL and so on.
size_t contractionLength(Piece cps, size_t i, bool ignoreCase) {
    auto at = [&](size_t k) {
        const char32_t cp = i + k < cps.size() ? cps[i + k].cp : char32_t{0};
        return ignoreCase ? asciiLower(cp) : cp;
    };
    const char32_t a = at(1), b = at(2);
    if (a == U's' || a == U't' || a == U'm' || a == U'd') return 2;
    if ((a == U'r' && b == U'e') || (a == U'v' && b == U'e') || (a == U'l' && b == U'l')) return 3;
    return 0;
}

// "\s+(?!\S)|\s+" at a whitespace run [i, end): the run, less its last character when a
// non-space follows in the piece (that one goes with the next word); a single whitespace
// character before a non-space is "\s+".
size_t whitespaceEnd(Piece cps, size_t i, size_t end) { return end < cps.size() && end - i >= 2 ? end - 1 : end; }

// GPT-2: 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
CharClass gpt2Group(CharClass cls) {
    return cls == CharClass::Letter || cls == CharClass::Number || cls == CharClass::Space ? cls : CharClass::Other;
}

size_t gpt2End(Piece cps, size_t i) {
    const size_t n = cps.size();
    auto group = [&](size_t k) { return gpt2Group(cps[k].cls); };
    if (cps[i].cp == U'\'') {
        if (const size_t len = contractionLength(cps, i, false); len > 0) return i + len;
    }
    // An optional space, then a run of letters, of numbers, or of anything else but whitespace.
    const size_t start = cps[i].cp == U' ' && i + 1 < n && group(i + 1) != CharClass::Space ? i + 1 : i;
    if (group(start) != CharClass::Space) {
        size_t end = start + 1;
        while (end < n && group(end) == group(start)) ++end;
        return end;
    }
    size_t end = i;
    while (end < n && cps[end].cls == CharClass::Space) ++end;
    return whitespaceEnd(cps, i, end);
}

// The Llama 3 family: (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
// ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+ — Qwen 2 takes digits one at a time, and
// Qwen 3.5 counts marks (\p{M}) as letters in both character classes.
struct Llama3Style {
    size_t maxDigits;
    bool marksAreLetters;
};

size_t llama3StyleEnd(Piece cps, size_t i, Llama3Style style) {
    const size_t n = cps.size();
    auto letter = [&](size_t k) {
        return k < n && (cps[k].cls == CharClass::Letter || (style.marksAreLetters && cps[k].cls == CharClass::Mark));
    };
    auto number = [&](size_t k) { return k < n && cps[k].cls == CharClass::Number; };
    auto other = [&](size_t k) { return k < n && cps[k].cls != CharClass::Space && !number(k) && !letter(k); };
    const char32_t cp = cps[i].cp;
    if (cp == U'\'') {
        if (const size_t len = contractionLength(cps, i, true); len > 0) return i + len;
    }
    // "[^\r\n\p{L}\p{N}]?\p{L}+": one leading character of any other kind (a space, a quote, a
    // mark in Llama 3) goes with the letters after it.
    if (!isLineBreak(cp) && !number(i) && (letter(i) || letter(i + 1))) {
        size_t end = i + 1;
        while (letter(end)) ++end;
        return end;
    }
    if (number(i)) {
        size_t end = i + 1;
        while (end - i < style.maxDigits && number(end)) ++end;
        return end;
    }
    // " ?[^\s\p{L}\p{N}]+[\r\n]*": punctuation and symbols take the line breaks after them.
    if (const size_t start = cp == U' ' ? i + 1 : i; other(start)) {
        size_t end = start + 1;
        while (other(end)) ++end;
        while (end < n && isLineBreak(cps[end].cp)) ++end;
        return end;
    }
    // "\s*[\r\n]+": a whitespace run with line breaks in it ends after its last line break.
    size_t end = i, afterLineBreak = 0;
    for (; end < n && cps[end].cls == CharClass::Space; ++end)
        if (isLineBreak(cps[end].cp)) afterLineBreak = end + 1;
    if (afterLineBreak > 0) return afterLineBreak;
    return end > i ? whitespaceEnd(cps, i, end) : i + 1;
}

size_t llama3End(Piece cps, size_t i) { return llama3StyleEnd(cps, i, {3, false}); }
size_t qwen2End(Piece cps, size_t i) { return llama3StyleEnd(cps, i, {1, false}); }
size_t qwen35End(Piece cps, size_t i) { return llama3StyleEnd(cps, i, {1, true}); }

// "[X]+" found in a piece: each run of X is a part, and so is the text between runs.
template <bool (*inSet)(const CodePoint&)>
size_t runEnd(Piece cps, size_t i) {
    const bool in = inSet(cps[i]);
    size_t end = i + 1;
    while (end < cps.size() && inSet(cps[end]) == in) ++end;
    return end;
}

// "[\p{P}\$\+<=>\^~\|]": punctuation, and the ASCII symbols but the backtick.
bool isDefaultPunctuation(const CodePoint& c) {
    if (c.cls == CharClass::Punctuation) return true;
    return c.cp < 128 && std::string_view("$+<=>^~|").find(static_cast<char>(c.cp)) != std::string_view::npos;
}
bool isNumber(const CodePoint& c) { return c.cls == CharClass::Number; }

// "\p{N}" found in a piece: each number code point alone; the text between them whole.
size_t eachNumberEnd(Piece cps, size_t i) { return isNumber(cps[i]) ? i + 1 : runEnd<isNumber>(cps, i); }

// "[0-9][0-9][0-9]" found in a piece: three ASCII digits, leftmost first; the rest between.
size_t digitTripleEnd(Piece cps, size_t i) {
    auto tripleAt = [&](size_t k) {
        return k + 3 <= cps.size() && isAsciiDigit(cps[k].cp) && isAsciiDigit(cps[k + 1].cp) &&
            isAsciiDigit(cps[k + 2].cp);
    };
    if (tripleAt(i)) return i + 3;
    size_t end = i + 1;
    while (end < cps.size() && !tripleAt(end)) ++end;
    return end;
}

constexpr std::array<MatchEnd, 4> kDefaultPasses = {runEnd<isDefaultPunctuation>, gpt2End, runEnd<isNumber>,
                                                    digitTripleEnd};
constexpr std::array<MatchEnd, 1> kGpt2Passes = {gpt2End};
constexpr std::array<MatchEnd, 2> kSmolLMPasses = {eachNumberEnd, gpt2End};
constexpr std::array<MatchEnd, 1> kLlama3Passes = {llama3End};
constexpr std::array<MatchEnd, 1> kQwen2Passes = {qwen2End};
constexpr std::array<MatchEnd, 1> kQwen35Passes = {qwen35End};

std::span<const MatchEnd> passesOf(PreTokenizerKind kind) {
    switch (kind) {
    case PreTokenizerKind::Default: return kDefaultPasses;
    case PreTokenizerKind::Gpt2: return kGpt2Passes;
    case PreTokenizerKind::SmolLM: return kSmolLMPasses;
    case PreTokenizerKind::Llama3: return kLlama3Passes;
    case PreTokenizerKind::Qwen2: return kQwen2Passes;
    case PreTokenizerKind::Qwen35: return kQwen35Passes;
    }
    return kDefaultPasses;
}

void split(std::span<const MatchEnd> passes, Piece piece, std::string_view text, std::vector<std::string_view>& out) {
    if (passes.empty()) {
        const size_t first = piece.front().offset;
        out.push_back(text.substr(first, piece.back().offset + piece.back().len - first));
        return;
    }
    for (size_t i = 0; i < piece.size();) {
        const size_t end = passes.front()(piece, i);
        split(passes.subspan(1), piece.subspan(i, end - i), text, out);
        i = end;
    }
}

struct NamedPreTokenizer {
    std::string_view name;
    PreTokenizer pre;
};

// The names llama.cpp's vocabulary loader maps to these lists, with what it sets beside them
// (ignore_merges and add_bos for Llama 3). Its other flag, clean_spaces, only changes
// llama_detokenize of whole sequences, not tokenization.
constexpr std::array<NamedPreTokenizer, 7> kNames = {{
    {"default", {PreTokenizerKind::Default, false, false}},
    {"gpt-2", {PreTokenizerKind::Gpt2, false, false}},
    {"smollm", {PreTokenizerKind::SmolLM, false, false}},
    {"llama-bpe", {PreTokenizerKind::Llama3, true, true}},
    {"qwen2", {PreTokenizerKind::Qwen2, false, false}},
    {"deepseek-r1-qwen", {PreTokenizerKind::Qwen2, false, false}},
    {"qwen35", {PreTokenizerKind::Qwen35, false, false}},
}};

}  // namespace

Result<PreTokenizer> preTokenizerFromName(std::string_view name) {
    if (name.empty()) return kNames[0].pre;  // a file without the key: llama.cpp uses "default"
    std::string supported;
    for (const NamedPreTokenizer& n : kNames) {
        if (n.name == name) return n.pre;
        supported += strCat(supported.empty() ? "" : ", ", "\"", n.name, "\"");
    }
    return fail(ErrorCode::Unsupported,
                strCat("tokenizer.ggml.pre \"", name, "\" is not supported (supported: ", supported, ")"));
}

void preTokenize(PreTokenizerKind kind, std::string_view text, std::vector<std::string_view>& out) {
    const std::vector<CodePoint> cps = decodeAll(text);
    if (!cps.empty()) split(passesOf(kind), cps, text, out);
}

}  // namespace hearth
