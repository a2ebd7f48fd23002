// Seeded templates for the history workload: three code shapes to rename in, a passage about
// a person to summarise, a passage about a shop to answer questions on. Each instance draws
// its own names and numbers, so set B shares phrasing and structure with set A, not content.
#include "app/cli/history_workload.h"

#include <array>

namespace hearth::cli {
namespace {

// xorshift64*: the same stream on every platform (std:: distributions are not portable).
struct Rng {
    uint64_t s;
    uint32_t next() {
        s ^= s >> 12;
        s ^= s << 25;
        s ^= s >> 27;
        return static_cast<uint32_t>((s * 2685821657736338717ULL) >> 32);
    }
    template <size_t N>
    std::string pick(const std::array<const char*, N>& a) {
        return a[next() % N];
    }
    int between(int lo, int hi) { return lo + static_cast<int>(next() % static_cast<uint32_t>(hi - lo + 1)); }
};

constexpr std::array<const char*, 12> kVerbs{"compute", "count", "merge", "scale", "filter", "collect",
                                             "update",  "build", "parse", "score", "load",   "sum"};
constexpr std::array<const char*, 12> kNouns{"prices", "orders", "scores", "values", "items", "records",
                                             "events", "totals", "points", "steps",  "rows",  "weights"};
constexpr std::array<const char*, 10> kNames{"Mara",  "Tomas",  "Ingrid", "Kofi", "Leila",
                                             "Pavel", "Sunita", "Owen",   "Yuki", "Bruno"};
constexpr std::array<const char*, 8> kJobs{"baker",    "nurse", "carpenter", "teacher",
                                           "gardener", "pilot", "librarian", "fisher"};
constexpr std::array<const char*, 8> kTowns{"Alderwick", "Brightmoor", "Castlebay", "Dunmore",
                                            "Eastholm",  "Fairhaven",  "Glenrock",  "Highcliff"};
constexpr std::array<const char*, 7> kDays{"Monday", "Tuesday",  "Wednesday", "Thursday",
                                           "Friday", "Saturday", "Sunday"};
constexpr std::array<const char*, 8> kItems{"apples",  "candles",  "notebooks", "lanterns",
                                            "teapots", "blankets", "maps",      "umbrellas"};
constexpr std::array<const char*, 6> kPlaces{"market", "harbour", "library", "bakery", "station", "park"};
constexpr std::array<const char*, 6> kMonths{"March", "April", "June", "August", "October", "December"};
constexpr std::array<const char*, 6> kOps{">", "<", ">=", "<=", "==", "!="};

std::string replaceAll(std::string s, const std::string& from, const std::string& to) {
    for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
        s.replace(at, from.size(), to);
    return s;
}

std::string fill(std::string t, const std::vector<std::pair<std::string, std::string>>& values) {
    for (const auto& [key, value] : values) t = replaceAll(std::move(t), "{" + key + "}", value);
    return t;
}

HistoryTask codeEdit(Rng& r) {
    static const std::array<const char*, 3> shapes{
        "def {f}({a}):\n    total = 0\n    for item in {a}:\n        if item {op} {k}:\n"
        "            total += item * {m}\n    return total\n",
        "def {f}({a}, step):\n    result = []\n    for index in range({a}):\n        value = index * step + {k}\n"
        "        if value % {m} == 0:\n            result.append(value)\n    return result\n",
        "class Tracker:\n    def __init__(self, {a}):\n        self.{a} = {a}\n        self.count = {k}\n\n"
        "    def {f}(self):\n        self.count += {m}\n        return self.{a} * self.count\n"};
    const std::string shape = shapes[r.next() % shapes.size()];
    const std::string f = r.pick(kVerbs) + "_" + r.pick(kNouns), a = r.pick(kNouns);
    std::string f2 = r.pick(kVerbs) + "_" + r.pick(kNouns), a2 = "new_" + r.pick(kNouns);
    if (f2 == f) f2 += "_v2";
    const std::vector<std::pair<std::string, std::string>> common{
        {"op", r.pick(kOps)}, {"k", std::to_string(r.between(2, 99))}, {"m", std::to_string(r.between(2, 9))}};
    std::vector<std::pair<std::string, std::string>> before = common, after = common;
    before.insert(before.end(), {{"f", f}, {"a", a}});
    after.insert(after.end(), {{"f", f2}, {"a", a2}});
    return {"code-edit",
            "Rename `" + f + "` to `" + f2 + "` and `" + a + "` to `" + a2 +
                "` in this Python code. Reply with the complete updated code only.\n\n```python\n" +
                fill(shape, before) + "```",
            "```python\n" + fill(shape, after) + "```"};
}

std::vector<std::pair<std::string, std::string>> person(Rng& r) {
    return {{"name", r.pick(kNames)},
            {"job", r.pick(kJobs)},
            {"town", r.pick(kTowns)},
            {"day", r.pick(kDays)},
            {"place", r.pick(kPlaces)},
            {"item", r.pick(kItems)},
            {"n", std::to_string(r.between(3, 40))},
            {"year", std::to_string(r.between(1975, 2015))},
            {"month", r.pick(kMonths)},
            {"h", std::to_string(r.between(6, 10))},
            {"h2", std::to_string(r.between(4, 9))}};
}

HistoryTask summary(Rng& r) {
    const auto v = person(r);
    const std::string passage = fill(
        "{name} is a {job} who has lived in {town} since {year}. Every {day}, {name} walks to the {place} to buy "
        "{item}, and usually comes home with {n} of them. The neighbours say that {name} knows everyone in {town} by "
        "name. In {month}, {name} organised a small fair at the {place}, where people traded {item} and stories. Most "
        "evenings {name} writes letters to old friends who moved away from {town}.",
        v);
    return {"summary", "Summarize the following passage in two sentences.\n\n" + passage,
            fill("{name} is a {job} in {town} who buys {item} at the {place} every {day}. {name} is well known in "
                 "{town}, organised a fair in {month} and writes letters to old friends.",
                 v)};
}

HistoryTask questionAnswer(Rng& r) {
    const auto v = person(r);
    const std::string passage = fill(
        "{name} runs a small shop near the {place} in {town}. The shop opens at {h} o'clock in the morning and "
        "closes at {h2} o'clock in the evening, except on {day}, when it stays closed. Last {month}, {name} sold {n} "
        "{item} and hired two new helpers. The shop has been in the family since {year}.",
        v);
    return {"qa",
            "Answer the question using the passage.\n\nPassage: " + passage +
                fill("\n\nQuestion: How many {item} did {name} sell last {month}, and when does the shop open?", v),
            fill("{name} sold {n} {item} last {month}. The shop opens at {h} o'clock in the morning.", v)};
}

}  // namespace

HistoryWorkload makeHistoryWorkload(int instances, uint32_t seed) {
    Rng r{0x9E3779B97F4A7C15ULL ^ seed};
    HistoryWorkload w;
    for (int set = 0; set < 2; ++set) {
        std::vector<HistoryTask>& out = set == 0 ? w.setA : w.setB;
        for (int i = 0; i < instances; ++i) {
            out.push_back(codeEdit(r));
            out.push_back(summary(r));
            out.push_back(questionAnswer(r));
        }
    }
    return w;
}

}  // namespace hearth::cli
