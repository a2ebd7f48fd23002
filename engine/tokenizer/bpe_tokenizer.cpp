// Byte-level BPE (Radford et al. 2019, GPT-2's encoder.py): every byte is first written as one
// printable code point of the GPT-2 alphabet, so that the vocabulary's pieces are text; merges
// ("left right", rank = position in tokenizer.ggml.merges) are applied lowest rank first, the
// leftmost pair first among equal ranks, with a heap over a linked list of symbols.
#include "engine/tokenizer/bpe_tokenizer.h"

#include <queue>

#include "engine/str_cat.h"
#include "engine/tokenizer/utf8.h"

namespace hearth {
namespace {

// GPT-2's bytes_to_unicode(): printable Latin-1 bytes stand for themselves; the others
// (controls, space, 0x7F-0xA0, 0xAD) are shifted to U+0100 onwards, in byte order.
struct ByteAlphabet {
    std::array<char32_t, 256> byteToCp{};
    std::array<int16_t, 324> cpToByte{};  // the alphabet ends at U+0143
    constexpr ByteAlphabet() {
        cpToByte.fill(-1);
        char32_t next = 256;
        for (int b = 0; b < 256; ++b) {
            const bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
            byteToCp[b] = printable ? static_cast<char32_t>(b) : next++;
            cpToByte[byteToCp[b]] = static_cast<int16_t>(b);
        }
    }
};
constexpr ByteAlphabet kAlphabet;

struct Symbol {
    TokenId id;  // -1 once merged into its left neighbour
    int prev, next;
};

struct Candidate {
    int32_t rank;
    int left;  // symbol index; indices keep text order, so smaller is further left
    TokenId leftId, rightId, result;
    bool operator>(const Candidate& o) const { return rank != o.rank ? rank > o.rank : left > o.left; }
};

}  // namespace

Result<std::unique_ptr<Tokenizer>> BpeTokenizer::create(VocabSpec& vocab) {
    std::unique_ptr<BpeTokenizer> t(new BpeTokenizer());
    auto pre = preTokenizerFromName(vocab.pre);
    if (!pre) return std::unexpected(pre.error());
    t->pre_ = *pre;
    // Without add_bos_token, llama.cpp adds BOS as the pre-tokenizer's name says (Llama 3 only).
    if (auto r = t->initCommon(vocab, pre->addBos); !r) return std::unexpected(r.error());
    for (int b = 0; b < 256; ++b) {
        std::string symbol;
        utf8::append(symbol, kAlphabet.byteToCp[b]);
        t->byteTokens_[b] = t->findPiece(symbol);
    }
    if (auto r = t->buildMerges(vocab.merges); !r) return std::unexpected(r.error());
    return std::unique_ptr<Tokenizer>(std::move(t));
}

Result<void> BpeTokenizer::buildMerges(const std::vector<std::string>& merges) {
    merges_.reserve(merges.size());
    for (size_t rank = 0; rank < merges.size(); ++rank) {
        const std::string& merge = merges[rank];
        // From 1: a piece may itself be a space in a vocabulary outside the GPT-2 alphabet.
        const size_t space = merge.find(' ', 1);
        if (space == std::string::npos)
            return fail(ErrorCode::InvalidFormat,
                        strCat("tokenizer.ggml.merges[", rank, "]: no space in \"", merge.substr(0, 64), "\""));
        const std::string_view left = std::string_view(merge).substr(0, space);
        const std::string_view right = std::string_view(merge).substr(space + 1);
        const TokenId leftId = findPiece(left), rightId = findPiece(right);
        const TokenId result = findPiece(std::string(left) + std::string(right));
        // A merge whose parts or result are not tokens can never produce a token: skip it.
        if (leftId < 0 || rightId < 0 || result < 0) continue;
        merges_.emplace(pairKey(leftId, rightId), Merge{static_cast<int32_t>(rank), result});  // first rank wins
    }
    return {};
}

void BpeTokenizer::appendTextTokens(std::string_view text, std::vector<TokenId>& out) const {
    std::vector<std::string_view> words;
    preTokenize(pre_.kind, text, words);
    for (std::string_view word : words) appendWordTokens(word, out);
}

void BpeTokenizer::appendWordTokens(std::string_view word, std::vector<TokenId>& out) const {
    if (pre_.ignoreMerges) {
        // Llama 3's vocabulary has tokens that its merges do not build; a whole pre-token that is
        // one of them is that token (any type, as llama.cpp looks it up).
        std::string symbols;
        for (char c : word) utf8::append(symbols, kAlphabet.byteToCp[static_cast<uint8_t>(c)]);
        if (const TokenId id = findPiece(symbols); id >= 0) {
            out.push_back(id);
            return;
        }
    }
    std::vector<Symbol> symbols;
    symbols.reserve(word.size());
    for (char c : word) {
        const TokenId id = byteTokens_[static_cast<uint8_t>(c)];
        if (id < 0) continue;  // a vocabulary without this byte cannot say it (llama.cpp drops it too)
        const int index = static_cast<int>(symbols.size());
        symbols.push_back({id, index - 1, index + 1});
    }
    if (symbols.empty()) return;
    symbols.back().next = -1;

    std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> heap;
    auto consider = [&](int left) {
        if (left < 0) return;
        const int right = symbols[left].next;
        if (right < 0) return;
        const auto it = merges_.find(pairKey(symbols[left].id, symbols[right].id));
        if (it != merges_.end())
            heap.push({it->second.rank, left, symbols[left].id, symbols[right].id, it->second.result});
    };
    for (int i = 0; i + 1 < static_cast<int>(symbols.size()); ++i) consider(i);

    while (!heap.empty()) {
        const Candidate c = heap.top();
        heap.pop();
        Symbol& left = symbols[c.left];
        // A candidate is stale once either side has been merged into something else.
        if (left.id != c.leftId || left.next < 0 || symbols[left.next].id != c.rightId) continue;
        Symbol& right = symbols[left.next];
        left.id = c.result;
        right.id = -1;
        left.next = right.next;
        if (left.next >= 0) symbols[left.next].prev = c.left;
        consider(left.prev);
        consider(c.left);
    }
    for (int i = 0; i >= 0; i = symbols[i].next) out.push_back(symbols[i].id);
}

std::string BpeTokenizer::tokenBytes(TokenId id, bool renderSpecial) const {
    if (!validId(id)) return {};
    const std::string text(pieces_[static_cast<size_t>(id)]);
    switch (tokenTypes_[static_cast<size_t>(id)]) {
    case token_type::kControl:
    case token_type::kUnknown:
    case token_type::kUnused: return renderSpecial ? text : std::string();
    case token_type::kUserDefined: return text;  // added tokens are stored as typed, not in the byte alphabet
    default: break;
    }
    std::string out;
    out.reserve(text.size());
    for (size_t pos = 0; pos < text.size();) {
        const utf8::Decoded d = utf8::decodeAt(text, pos);
        const int byte = d.cp < kAlphabet.cpToByte.size() ? kAlphabet.cpToByte[d.cp] : -1;
        if (byte >= 0) out += static_cast<char>(byte);
        else out.append(text, pos, d.len);  // outside the alphabet: pass the text through
        pos += d.len;
    }
    return out;
}

}  // namespace hearth
