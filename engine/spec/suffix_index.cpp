// A log-structured set of bounded-depth suffix arrays. Each segment holds whole documents, each
// followed by a sentinel (-1), and the positions of their tokens sorted by the next sortDepth
// tokens (a comparison stops at a sentinel, so a document's suffixes sort the same wherever it
// sits). A new document is a segment of its own; adjacent segments of similar size are merged
// (a linear merge of two sorted arrays, as in an LSM tree) up to an eighth of the cap, so a
// lookup searches O(log n + 8) segments and eviction drops the oldest segment whole.
// Why not a suffix tree or automaton: 8 bytes per token here against tens per node there, no
// deletion needed, and the continuations of a match are a contiguous range of the array, split
// by the next token into the counts SuffixDecoding (arXiv 2411.04975) scores its tree with.
#include "engine/spec/suffix_index.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <queue>

namespace hearth {

struct SuffixIndex::Segment {
    std::vector<int32_t> tokens;  // documents, each followed by -1
    std::vector<int32_t> sa;  // positions of every non-sentinel token, sorted
    int64_t nTokens = 0, nDocuments = 0;
};

namespace {

using Segment = SuffixIndex::Segment;

// Three-way comparison of the suffixes at a and b over at most depth tokens; a sentinel ends both.
int compareSuffixes(const int32_t* t, int32_t a, int32_t b, int32_t depth) {
    for (int32_t k = 0; k < depth; ++k) {
        const int32_t x = t[a + k], y = t[b + k];
        if (x != y) return x < y ? -1 : 1;
        if (x < 0) return 0;
    }
    return 0;
}

// The suffix at pos against pattern (its first pattern.size() tokens).
int comparePrefix(const int32_t* t, int32_t pos, std::span<const int32_t> pattern) {
    for (size_t k = 0; k < pattern.size(); ++k) {
        const int32_t x = t[pos + static_cast<int32_t>(k)];
        if (x != pattern[k]) return x < pattern[k] ? -1 : 1;
    }
    return 0;
}

// Ties broken by position: a strict total order, which the merge of adjacent segments keeps.
struct SuffixLess {
    const int32_t* t;
    int32_t depth;
    bool operator()(int32_t a, int32_t b) const {
        const int c = compareSuffixes(t, a, b, depth);
        return c < 0 || (c == 0 && a < b);
    }
};

Segment makeSegment(std::span<const int32_t> doc, int32_t depth) {
    Segment s;
    s.tokens.reserve(doc.size() + 1);
    for (int32_t id : doc)
        if (id >= 0) s.tokens.push_back(id);
    s.nTokens = std::ssize(s.tokens);
    s.nDocuments = 1;
    s.tokens.push_back(-1);
    s.sa.resize(static_cast<size_t>(s.nTokens));
    std::iota(s.sa.begin(), s.sa.end(), 0);
    std::sort(s.sa.begin(), s.sa.end(), SuffixLess{s.tokens.data(), depth});
    return s;
}

Segment mergeSegments(const Segment& older, const Segment& newer, int32_t depth) {
    Segment m;
    m.tokens.reserve(older.tokens.size() + newer.tokens.size());
    m.tokens = older.tokens;
    m.tokens.insert(m.tokens.end(), newer.tokens.begin(), newer.tokens.end());
    const auto offset = static_cast<int32_t>(older.tokens.size());
    std::vector<int32_t> shifted(newer.sa);
    for (int32_t& p : shifted) p += offset;
    m.sa.resize(older.sa.size() + shifted.size());
    std::merge(older.sa.begin(), older.sa.end(), shifted.begin(), shifted.end(), m.sa.begin(),
               SuffixLess{m.tokens.data(), depth});
    m.nTokens = older.nTokens + newer.nTokens;
    m.nDocuments = older.nDocuments + newer.nDocuments;
    return m;
}

// [lo, hi) of s.sa whose suffixes start with pattern.
std::pair<int32_t, int32_t> findRange(const Segment& s, std::span<const int32_t> pattern) {
    const int32_t* t = s.tokens.data();
    const auto lo =
        std::partition_point(s.sa.begin(), s.sa.end(), [&](int32_t p) { return comparePrefix(t, p, pattern) < 0; });
    const auto hi = std::partition_point(lo, s.sa.end(), [&](int32_t p) { return comparePrefix(t, p, pattern) <= 0; });
    return {static_cast<int32_t>(lo - s.sa.begin()), static_cast<int32_t>(hi - s.sa.begin())};
}

// The longest suffix of context (at most maxLen) that occurs in s: occurrence is monotone in the
// length, so a binary search over it.
int32_t longestInSegment(const Segment& s, std::span<const int32_t> context, int32_t maxLen) {
    int32_t good = 0, bad = maxLen + 1;
    while (bad - good > 1) {
        const int32_t mid = (good + bad) / 2;
        const auto [lo, hi] = findRange(s, context.last(static_cast<size_t>(mid)));
        (hi > lo ? good : bad) = mid;
    }
    return good;
}

// For each end e (< size) of an earlier occurrence in context, how many tokens before e equal
// the context's last ones (at most maxLen): the context's own matches.
std::vector<int32_t> contextMatchLengths(std::span<const int32_t> context, int32_t maxLen) {
    const auto n = static_cast<int32_t>(context.size());
    std::vector<int32_t> len(static_cast<size_t>(std::max(0, n)), 0);
    for (int32_t e = 1; e < n; ++e) {
        int32_t k = 0;
        while (k < maxLen && k < e &&
               context[static_cast<size_t>(e - 1 - k)] == context[static_cast<size_t>(n - 1 - k)])
            ++k;
        len[static_cast<size_t>(e)] = k;
    }
    return len;
}

// A node of the continuation tree: the occurrences whose continuation starts with its path.
struct Node {
    struct Range {
        int32_t segment, lo, hi;
    };
    std::vector<Range> ranges;
    std::vector<int32_t> contextEnds;  // positions in the context where the continuation starts
    int32_t parent = -1, token = -1, depth = 0, count = 0;
    // The newest occurrence: (source, position), the context newest, then later segments.
    int64_t recency = -1;
    double prob = 1.0;
    bool expanded = false;
};

constexpr int32_t kMaxGroupsPerRange = 256;  // distinct next tokens read per segment range
constexpr int32_t kRecencyScan = 64;  // positions of a group read for its newest occurrence

int64_t recencyOf(size_t source, int32_t position) {
    return static_cast<int64_t>(source) << 32 | static_cast<uint32_t>(position);
}

struct TreeBuilder {
    const std::vector<Segment>& segments;
    std::span<const int32_t> context;
    int32_t matchLength;
    std::vector<Node> nodes;

    // Children of nodes[i] keyed by token, their occurrences gathered from every source.
    std::map<int32_t, Node> children(int32_t i) const {
        const Node& n = nodes[static_cast<size_t>(i)];
        const int32_t offset = matchLength + n.depth;
        std::map<int32_t, Node> out;
        for (const Node::Range& r : n.ranges) {
            const Segment& s = segments[static_cast<size_t>(r.segment)];
            const int32_t* t = s.tokens.data();
            int32_t lo = r.lo;
            for (int32_t groups = 0; lo < r.hi && groups < kMaxGroupsPerRange; ++groups) {
                const int32_t token = t[s.sa[static_cast<size_t>(lo)] + offset];
                const auto end = std::partition_point(s.sa.begin() + lo, s.sa.begin() + r.hi,
                                                      [&](int32_t p) { return t[p + offset] <= token; });
                const auto hi = static_cast<int32_t>(end - s.sa.begin());
                if (token >= 0) {
                    Node& c = out[token];
                    c.ranges.push_back({r.segment, lo, hi});
                    c.count += hi - lo;
                    for (int32_t k = lo; k < std::min(hi, lo + kRecencyScan); ++k)
                        c.recency = std::max(c.recency,
                                             recencyOf(static_cast<size_t>(r.segment), s.sa[static_cast<size_t>(k)]));
                }
                lo = hi;
            }
        }
        for (int32_t e : n.contextEnds) {
            const auto at = static_cast<size_t>(e + n.depth);
            if (at >= context.size()) continue;
            Node& c = out[context[at]];
            c.contextEnds.push_back(e);
            ++c.count;
            c.recency = std::max(c.recency, recencyOf(segments.size(), e));
        }
        return out;
    }

    // Best first by probability: the likeliest unexpanded node grows next.
    void grow(const SuffixLookupOptions& o) {
        auto worse = [this](int32_t a, int32_t b) {
            return nodes[static_cast<size_t>(a)].prob < nodes[static_cast<size_t>(b)].prob;
        };
        std::priority_queue<int32_t, std::vector<int32_t>, decltype(worse)> open(worse);
        open.push(0);
        while (!open.empty() && std::ssize(nodes) < o.maxNodes) {
            const int32_t i = open.top();
            open.pop();
            const Node& n = nodes[static_cast<size_t>(i)];
            if (n.depth >= o.maxDepth || n.prob < o.minProb) continue;
            std::map<int32_t, Node> kids = children(i);
            std::vector<std::pair<int32_t, Node*>> byCount;
            for (auto& [token, c] : kids) byCount.emplace_back(token, &c);
            std::stable_sort(byCount.begin(), byCount.end(), [](const auto& a, const auto& b) {
                if (a.second->count != b.second->count) return a.second->count > b.second->count;
                return a.second->recency > b.second->recency;
            });
            const Node parent = nodes[static_cast<size_t>(i)];
            for (auto& [token, c] : byCount) {
                if (std::ssize(nodes) >= o.maxNodes) break;
                nodes[static_cast<size_t>(i)].expanded = true;
                c->parent = i;
                c->token = token;
                c->depth = parent.depth + 1;
                c->prob = parent.prob * c->count / std::max(1, parent.count);
                nodes.push_back(std::move(*c));
                open.push(static_cast<int32_t>(nodes.size() - 1));
            }
        }
    }

    SuffixContinuation path(int32_t leaf) const {
        SuffixContinuation c;
        c.count = nodes[static_cast<size_t>(leaf)].count;
        c.recency = nodes[static_cast<size_t>(leaf)].recency;
        for (int32_t i = leaf; i > 0; i = nodes[static_cast<size_t>(i)].parent) {
            c.tokens.push_back(nodes[static_cast<size_t>(i)].token);
            c.prob.push_back(nodes[static_cast<size_t>(i)].prob);
        }
        std::reverse(c.tokens.begin(), c.tokens.end());
        std::reverse(c.prob.begin(), c.prob.end());
        return c;
    }
};

}  // namespace

double SuffixContinuation::expectedAccepted() const { return std::accumulate(prob.begin(), prob.end(), 0.0); }

SuffixIndex::SuffixIndex(SuffixIndexConfig config) : config_(config) {
    config_.sortDepth = std::max(2, config_.sortDepth);
    config_.maxMatch = std::clamp(config_.maxMatch, 1, config_.sortDepth - 1);
    config_.capTokens = std::max<int64_t>(1, config_.capTokens);
}
SuffixIndex::~SuffixIndex() = default;
SuffixIndex::SuffixIndex(SuffixIndex&&) noexcept = default;
SuffixIndex& SuffixIndex::operator=(SuffixIndex&&) noexcept = default;

void SuffixIndex::add(std::span<const int32_t> tokens) {
    if (std::ssize(tokens) > config_.capTokens) tokens = tokens.last(static_cast<size_t>(config_.capTokens));
    Segment s = makeSegment(tokens, config_.sortDepth);
    if (s.nTokens == 0) return;
    segments_.push_back(std::move(s));
    // Merge while the previous segment is no larger (a binary counter), up to an eighth of the cap.
    const int64_t maxSegment = std::max<int64_t>(config_.capTokens / 8, 1);
    while (segments_.size() >= 2) {
        const Segment& older = segments_[segments_.size() - 2];
        const Segment& newer = segments_.back();
        if (older.nTokens > newer.nTokens || older.nTokens + newer.nTokens > maxSegment) break;
        Segment merged = mergeSegments(older, newer, config_.sortDepth);
        segments_.pop_back();
        segments_.back() = std::move(merged);
    }
    evict();
}

void SuffixIndex::evict() {
    int64_t total = nTokens();
    while (total > config_.capTokens && !segments_.empty()) {
        total -= segments_.front().nTokens;
        segments_.erase(segments_.begin());
    }
}

void SuffixIndex::clear() { segments_.clear(); }

int64_t SuffixIndex::nTokens() const {
    int64_t n = 0;
    for (const Segment& s : segments_) n += s.nTokens;
    return n;
}

int64_t SuffixIndex::nDocuments() const {
    int64_t n = 0;
    for (const Segment& s : segments_) n += s.nDocuments;
    return n;
}

int32_t SuffixIndex::nSegments() const { return static_cast<int32_t>(segments_.size()); }

size_t SuffixIndex::memoryBytes() const {
    size_t bytes = sizeof(*this) + segments_.capacity() * sizeof(Segment);
    for (const Segment& s : segments_) bytes += (s.tokens.capacity() + s.sa.capacity()) * sizeof(int32_t);
    return bytes;
}

int64_t SuffixIndex::count(std::span<const int32_t> pattern) const {
    if (pattern.empty() || std::ssize(pattern) > config_.sortDepth) return 0;
    int64_t n = 0;
    for (const Segment& s : segments_) {
        const auto [lo, hi] = findRange(s, pattern);
        n += hi - lo;
    }
    return n;
}

SuffixLookup SuffixIndex::lookup(std::span<const int32_t> context, const SuffixLookupOptions& options) const {
    SuffixLookup out;
    SuffixLookupOptions o = options;
    const auto maxLen = static_cast<int32_t>(std::min<int64_t>(config_.maxMatch, std::ssize(context)));
    if (maxLen <= 0 || o.maxDepth <= 0) return out;
    // The longest match over every source; only sources that reach it contribute occurrences.
    std::vector<int32_t> segLen(segments_.size(), 0);
    int32_t best = 0;
    for (size_t i = 0; i < segments_.size(); ++i)
        best = std::max(best, segLen[i] = longestInSegment(segments_[i], context, maxLen));
    std::vector<int32_t> ctxLen;
    if (o.includeContext) {
        ctxLen = contextMatchLengths(context, maxLen);
        for (int32_t l : ctxLen) best = std::max(best, l);
    }
    if (best < std::max(1, o.minMatch)) return out;
    o.maxDepth = std::min(o.maxDepth, config_.sortDepth - best);
    TreeBuilder tree{segments_, context, best, {}};
    Node root;
    const std::span<const int32_t> suffix = context.last(static_cast<size_t>(best));
    for (size_t i = 0; i < segments_.size(); ++i) {
        if (segLen[i] < best) continue;
        const auto [lo, hi] = findRange(segments_[i], suffix);
        root.ranges.push_back({static_cast<int32_t>(i), lo, hi});
        root.count += hi - lo;
    }
    for (size_t e = 0; e < ctxLen.size(); ++e)
        if (ctxLen[e] >= best) root.contextEnds.push_back(static_cast<int32_t>(e));
    root.count += static_cast<int32_t>(root.contextEnds.size());
    out.matchLength = best;
    out.nOccurrences = root.count;
    tree.nodes.push_back(std::move(root));
    tree.grow(o);
    for (int32_t i = 1; i < std::ssize(tree.nodes); ++i)
        if (!tree.nodes[static_cast<size_t>(i)].expanded) out.continuations.push_back(tree.path(i));
    std::sort(out.continuations.begin(), out.continuations.end(), [](const auto& a, const auto& b) {
        const double ea = a.expectedAccepted(), eb = b.expectedAccepted();
        if (ea != eb) return ea > eb;
        if (a.count != b.count) return a.count > b.count;
        if (a.recency != b.recency) return a.recency > b.recency;
        return a.tokens < b.tokens;
    });
    if (std::ssize(out.continuations) > o.maxContinuations)
        out.continuations.resize(static_cast<size_t>(std::max(0, o.maxContinuations)));
    return out;
}

}  // namespace hearth
