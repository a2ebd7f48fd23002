// SuffixIndex (engine/spec/suffix_index.h) against a brute-force search on random token
// sequences over a small alphabet (many repeats): the longest match, its occurrences, every
// continuation's count and probability, the next-token counts; with merges and eviction
// exercised by small caps; and the memory cap.
#include <QtTest>

#include <map>
#include <set>
#include <random>

#include "engine/spec/suffix_index.h"

using namespace hearth;

namespace {

using Seq = std::vector<int32_t>;

Seq randomSeq(std::mt19937& rng, int32_t alphabet, int32_t minLen, int32_t maxLen) {
    Seq s(static_cast<size_t>(std::uniform_int_distribution<int32_t>(minLen, maxLen)(rng)));
    for (int32_t& t : s) t = std::uniform_int_distribution<int32_t>(0, alphabet - 1)(rng);
    return s;
}

bool matchesAt(const Seq& s, size_t at, std::span<const int32_t> p) {
    return at + p.size() <= s.size() && std::equal(p.begin(), p.end(), s.begin() + static_cast<std::ptrdiff_t>(at));
}

// Occurrences of pattern in the documents.
int64_t bruteCount(const std::vector<Seq>& docs, std::span<const int32_t> pattern) {
    int64_t n = 0;
    for (const Seq& d : docs)
        for (size_t i = 0; i < d.size(); ++i) n += matchesAt(d, i, pattern);
    return n;
}

// The context's own occurrences of its last `len` tokens ending before its end, followed by then.
int64_t bruteContextCount(const Seq& ctx, size_t len, std::span<const int32_t> then) {
    int64_t n = 0;
    const std::span<const int32_t> suffix = std::span(ctx).last(len);
    for (size_t e = len; e < ctx.size(); ++e) n += matchesAt(ctx, e - len, suffix) && matchesAt(ctx, e, then);
    return n;
}

struct Brute {
    int32_t matchLength = 0;
    int64_t occurrences = 0;
};

Brute bruteLongest(const std::vector<Seq>& docs, const Seq& ctx, int32_t maxMatch, bool withContext) {
    Brute b;
    const auto maxLen = static_cast<int32_t>(std::min<size_t>(static_cast<size_t>(maxMatch), ctx.size()));
    for (int32_t len = 1; len <= maxLen; ++len) {
        const std::span<const int32_t> suffix = std::span(ctx).last(static_cast<size_t>(len));
        const int64_t n = bruteCount(docs, suffix) + (withContext ? bruteContextCount(ctx, size_t(len), {}) : 0);
        if (n == 0) break;
        b = {len, n};
    }
    return b;
}

// Every claim of one lookup checked by brute force.
void checkLookup(const SuffixIndex& index, const std::vector<Seq>& docs, const Seq& ctx, const SuffixLookupOptions& o) {
    const SuffixLookup got = index.lookup(ctx, o);
    const Brute want = bruteLongest(docs, ctx, index.config().maxMatch, o.includeContext);
    if (want.matchLength < o.minMatch) {
        QVERIFY(got.continuations.empty());
        QCOMPARE(got.matchLength, 0);
        return;
    }
    QCOMPARE(got.matchLength, want.matchLength);
    QCOMPARE(int64_t(got.nOccurrences), want.occurrences);
    const Seq suffix(ctx.end() - want.matchLength, ctx.end());
    std::set<Seq> seen;
    for (const SuffixContinuation& c : got.continuations) {
        QVERIFY(!c.tokens.empty());
        QVERIFY(std::ssize(c.tokens) <= o.maxDepth);
        QVERIFY2(seen.insert(c.tokens).second, "continuations are distinct");
        Seq full = suffix;
        full.insert(full.end(), c.tokens.begin(), c.tokens.end());
        const int64_t n =
            bruteCount(docs, full) + (o.includeContext ? bruteContextCount(ctx, suffix.size(), c.tokens) : 0);
        QCOMPARE(int64_t(c.count), n);
        // The product of conditional frequencies telescopes to count / occurrences.
        QVERIFY(std::abs(c.prob.back() - double(n) / double(want.occurrences)) < 1e-9);
    }
    for (size_t i = 1; i < got.continuations.size(); ++i)
        QVERIFY(got.continuations[i - 1].expectedAccepted() >= got.continuations[i].expectedAccepted());
}

// Depth 1, room for every child: exactly the next tokens that followed, with their counts.
void checkNextTokens(const SuffixIndex& index, const std::vector<Seq>& docs, const Seq& ctx) {
    SuffixLookupOptions o;
    o.maxDepth = 1;
    o.maxContinuations = 1000;
    o.maxNodes = 1000;
    o.minMatch = 1;
    const SuffixLookup got = index.lookup(ctx, o);
    if (got.matchLength == 0) return;
    const Seq suffix(ctx.end() - got.matchLength, ctx.end());
    std::map<int32_t, int64_t> want;
    for (const Seq& d : docs)
        for (size_t i = 0; i + suffix.size() < d.size(); ++i)
            if (matchesAt(d, i, suffix)) ++want[d[i + suffix.size()]];
    for (size_t e = suffix.size(); e < ctx.size(); ++e)
        if (matchesAt(ctx, e - suffix.size(), suffix)) ++want[ctx[e]];
    std::map<int32_t, int64_t> have;
    for (const SuffixContinuation& c : got.continuations) have[c.tokens[0]] = c.count;
    QCOMPARE(have, want);
}

// The documents an index holds: the newest nDocuments() of those added.
std::vector<Seq> retained(const std::vector<Seq>& added, const SuffixIndex& index) {
    return {added.end() - index.nDocuments(), added.end()};
}

}  // namespace

class TestSuffixIndex : public QObject {
    Q_OBJECT
private slots:
    void againstBruteForce_data() {
        QTest::addColumn<int>("alphabet");
        QTest::addColumn<qint64>("cap");
        QTest::newRow("3 tokens, no eviction") << 3 << qint64(1);
        QTest::newRow("6 tokens, no eviction") << 6 << qint64(1);
        QTest::newRow("4 tokens, small cap (merges, eviction)") << 4 << qint64(600);
    }
    void againstBruteForce() {
        QFETCH(int, alphabet);
        QFETCH(qint64, cap);
        std::mt19937 rng(1234u + static_cast<unsigned>(alphabet));
        SuffixIndexConfig config;
        config.maxMatch = 10;
        config.sortDepth = 24;
        if (cap > 1) config.capTokens = cap;
        SuffixIndex index(config);
        std::vector<Seq> added;
        int checks = 0;
        for (int round = 0; round < 120; ++round) {
            added.push_back(randomSeq(rng, alphabet, 1, 30));
            index.add(added.back());
            QVERIFY(index.nTokens() <= config.capTokens);
            const std::vector<Seq> docs = retained(added, index);
            int64_t total = 0;
            for (const Seq& d : docs) total += std::ssize(d);
            QCOMPARE(index.nTokens(), total);
            for (int q = 0; q < 4; ++q) {
                Seq ctx = randomSeq(rng, alphabet, 1, 25);
                // Half the contexts end with a piece of a stored document (long matches).
                if (q % 2 == 0 && !docs.empty()) {
                    const Seq& d = docs[std::uniform_int_distribution<size_t>(0, docs.size() - 1)(rng)];
                    const size_t end = std::uniform_int_distribution<size_t>(1, d.size())(rng);
                    ctx.insert(ctx.end(), d.begin(), d.begin() + static_cast<std::ptrdiff_t>(end));
                }
                SuffixLookupOptions o;
                o.maxDepth = 1 + q * 3;
                o.minMatch = 1 + q % 3;
                o.maxNodes = 8 + 20 * q;
                o.includeContext = q != 1;
                checkLookup(index, docs, ctx, o);
                checkNextTokens(index, docs, ctx);
                const size_t plen = std::min<size_t>(ctx.size(), 1 + size_t(q) * 2);
                QCOMPARE(index.count(std::span(ctx).last(plen)), bruteCount(docs, std::span(ctx).last(plen)));
                ++checks;
            }
            if (QTest::currentTestFailed()) return;
        }
        QVERIFY(index.nSegments() >= 2);
        std::printf("%d lookups checked; %lld documents in %d segments\n", checks,
                    static_cast<long long>(index.nDocuments()), index.nSegments());
    }

    void emptyAndDegenerate() {
        SuffixIndex index;
        QVERIFY(index.lookup(Seq{1, 2, 3}, {}).continuations.empty());  // nothing stored, no repeat
        index.add(Seq{});
        index.add(Seq{-5, -1});  // negative ids dropped: nothing stored
        QCOMPARE(index.nDocuments(), int64_t(0));
        index.add(Seq{7, 8, 9});
        QVERIFY(index.lookup(Seq{}, {}).continuations.empty());
        SuffixLookupOptions o;
        o.minMatch = 1;
        const SuffixLookup l = index.lookup(Seq{1, 7, 8}, o);
        QCOMPARE(l.matchLength, 2);
        QCOMPARE(l.continuations.size(), size_t(1));
        QCOMPARE(l.continuations[0].tokens, (Seq{9}));  // the document's end stops it
    }

    // The cap holds after every add; eviction drops at most an eighth of the cap (or one
    // document) more than needed; memory stays near 8 bytes per token.
    void memoryCap() {
        SuffixIndexConfig config;
        config.capTokens = 20000;
        SuffixIndex index(config);
        std::mt19937 rng(7);
        int32_t longest = 0;
        int64_t added = 0;
        for (int i = 0; i < 2000; ++i) {
            const Seq doc = randomSeq(rng, 1000, 1, 400);
            longest = std::max(longest, static_cast<int32_t>(doc.size()));
            index.add(doc);
            added += std::ssize(doc);
            QVERIFY(index.nTokens() <= config.capTokens);
            if (added > config.capTokens)
                QVERIFY(index.nTokens() > config.capTokens - std::max<int64_t>(config.capTokens / 8, longest));
        }
        const size_t bytes = index.memoryBytes();
        std::printf("%lld tokens in %d segments: %zu bytes (%.2f per token)\n", static_cast<long long>(index.nTokens()),
                    index.nSegments(), bytes, double(bytes) / double(index.nTokens()));
        QVERIFY(bytes < size_t(config.capTokens) * 9 + 64 * 1024);
        // A document longer than the cap keeps its last capTokens tokens.
        SuffixIndexConfig tiny;
        tiny.capTokens = 10;
        SuffixIndex small(tiny);
        small.add(Seq{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
        QCOMPARE(small.nTokens(), int64_t(10));
        QCOMPARE(small.count(Seq{3, 4}), int64_t(1));
        QCOMPARE(small.count(Seq{1, 2}), int64_t(0));
    }
};

QTEST_GUILESS_MAIN(TestSuffixIndex)
#include "test_suffix_index.moc"
