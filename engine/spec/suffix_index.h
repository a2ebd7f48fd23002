// SuffixIndex: the token sequences of earlier conversations (user messages and replies), for
// drafting from the user's history as SuffixDecoding does (Oliaro et al., arXiv 2411.04975): the
// longest suffix of the context that occurred before, and the distinct continuations that
// followed it, scored by their frequency. Bounded memory: at most capTokens tokens, the oldest
// documents dropped first. Thread-safety: one thread (the engine's) adds and looks up.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace hearth {

struct SuffixIndexConfig {
    int64_t capTokens = int64_t{1} << 21;  // tokens held at most (~8 bytes each); oldest dropped beyond
    // Sort depth: suffixes are ordered by their first sortDepth tokens, so a match plus its
    // continuation spans at most that many (lookup clamps maxMatch + depth to it).
    int32_t sortDepth = 64;
    int32_t maxMatch = 32;  // longest context suffix looked up
};

struct SuffixContinuation {
    std::vector<int32_t> tokens;
    // Estimated probability of each prefix of tokens (product of the conditional frequencies
    // along the path): prob[i] for tokens[0..i].
    std::vector<double> prob;
    int32_t count = 0;  // occurrences followed by all of tokens
    // Orders ties: larger is newer (the context's own occurrences newest, then newer history).
    int64_t recency = -1;
    double expectedAccepted() const;  // sum of prob: the tokens a greedy verifier is expected to keep
};

struct SuffixLookup {
    int32_t matchLength = 0;  // tokens of the context's suffix matched (0: none long enough)
    int32_t nOccurrences = 0;  // occurrences of that suffix (history and context together)
    // Distinct; best first: expectedAccepted, then count, then the newest occurrence.
    std::vector<SuffixContinuation> continuations;
};

struct SuffixLookupOptions {
    int32_t maxDepth = 8;  // tokens per continuation
    int32_t maxContinuations = 4;  // leaves returned
    int32_t minMatch = 2;  // shorter matches give no continuations
    int32_t maxNodes = 64;  // tree nodes expanded (best first by probability)
    double minProb = 0.0;  // nodes less likely than this are not expanded
    // Also match inside the context itself (the current prompt and reply so far), as the
    // n-gram drafter does; its occurrences count as the history's do.
    bool includeContext = true;
};

class SuffixIndex {
public:
    explicit SuffixIndex(SuffixIndexConfig config = {});
    ~SuffixIndex();
    SuffixIndex(SuffixIndex&&) noexcept;
    SuffixIndex& operator=(SuffixIndex&&) noexcept;

    // One document (a message's tokens; negative ids are dropped). A document longer than the
    // cap keeps its last capTokens tokens. Amortised O(log n) sorted merges per token.
    void add(std::span<const int32_t> tokens);
    void clear();
    SuffixLookup lookup(std::span<const int32_t> context, const SuffixLookupOptions& options) const;
    // Occurrences of pattern in the history (pattern.size() <= sortDepth; 0 when longer).
    int64_t count(std::span<const int32_t> pattern) const;

    int64_t nTokens() const;  // tokens held (sentinels excluded)
    int64_t nDocuments() const;
    int32_t nSegments() const;
    size_t memoryBytes() const;  // token and suffix arrays, allocated capacity
    const SuffixIndexConfig& config() const { return config_; }

    struct Segment;  // sorted documents (suffix_index.cpp)

private:
    void evict();
    SuffixIndexConfig config_;
    std::vector<Segment> segments_;  // oldest first
};

}  // namespace hearth
