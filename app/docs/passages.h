// Documents as prompt text: the token estimate, the split of a document into passages, the
// FTS5 query built from a question, and how a turn's documents are written into its user
// message. Pure functions over UTF-8 text; no Qt widgets, no store.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace hearth {

// A document that fits this many (estimated) tokens goes into a prompt whole; a larger one is
// searched, and only its best passages go in.
inline constexpr int kWholeDocumentTokens = 1000;
// The most (estimated) tokens of documents one user turn takes: whole documents and passages.
inline constexpr int kTurnDocumentBudgetTokens = 1500;
// The budget for a model's context window: a quarter of it at most, so that a small context
// keeps room for the conversation and the reply. contextLength 0: unknown (the default budget).
int turnDocumentBudget(int contextLength);
// A passage's target size: ~5 of them fill a turn's budget.
inline constexpr int kPassageTokens = 200;

// Tokens a text is estimated to take without a tokenizer (the model may not be loaded when a
// file is attached): 4 ASCII bytes per token, one per other character (a CJK character is
// about one token in the BPE vocabularies Hearth runs; accented Latin is overestimated).
int estimateTokens(std::string_view utf8);

// Splits text into consecutive passages of about maxTokens each, cut after a paragraph, else
// after a sentence or a line, else after a space, else at a character boundary. Lossless: the
// passages joined give back the text. Empty text gives no passage.
std::vector<std::string> splitPassages(std::string_view utf8, int maxTokens = kPassageTokens);

// An FTS5 MATCH expression for a question over a trigram index, or "" when the question has
// nothing to search for. Never the raw text: words of 3+ characters (lower-cased, minus a few
// English function words) and every 3-character window of a CJK run, each as a quoted string,
// OR-ed together; at most 48 terms.
std::string passageQuery(std::string_view question);

// One document (or one passage of it) that a user turn carries.
struct TurnSource {
    std::string name;  // the file name
    int passage = 0;  // 1-based passage number; 0: the whole document
    std::string text;
    int tokens = 0;  // estimated
    bool operator==(const TurnSource&) const = default;
};

// The sources as the JSON array a turn records ("" for none), and back (a malformed text gives
// none: the turn is then rendered with the user's words alone).
std::string sourcesToJson(const std::vector<TurnSource>& sources);
std::vector<TurnSource> sourcesFromJson(std::string_view json);

// The user turn as the model reads it: each source in a <document> element, then the user's
// words. Without sources, the words unchanged.
std::string userTurnText(std::string_view words, const std::vector<TurnSource>& sources);
std::string userTurnText(std::string_view words, std::string_view sourcesJson);

}  // namespace hearth
