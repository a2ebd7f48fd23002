// Documents the tests write: a long text of varied generated sentences (seeded, so every run
// writes the same one) with one fact on one page only.
#pragma once

#include <iterator>
#include <random>
#include <string>

namespace hearth::test {

inline constexpr const char* kFact = "The night ferry to Vellmora island leaves from pier nineteen at 23:40.";

// ~3,000 characters per page of varied sentences (seeded), "Page N" first; the fact on page 150.
inline std::string longDocument(int pages, int factPage) {
    static const char* subjects[] = {"The committee", "A farmer",          "Our engineer",    "The old library",
                                     "Each student",  "The river delta",   "A quiet museum",  "The orchestra",
                                     "Every bakery",  "The mountain road", "A young painter", "The harbour crane"};
    static const char* verbs[] = {"reviewed", "painted", "measured", "described", "collected",    "repaired",
                                  "planted",  "studied", "counted",  "delivered", "photographed", "sorted"};
    static const char* objects[] = {"the copper pipes",     "seven wooden chairs",    "a map of the valley",
                                    "the spring harvest",   "forty blue tiles",       "the budget report",
                                    "a box of old letters", "the garden fence",       "three clay pots",
                                    "the weather records",  "a pile of maple leaves", "the school timetable"};
    static const char* endings[] = {
        "before lunch",      "during the festival", "with great care",  "in the rain",      "for the third time",
        "after the meeting", "without any help",    "near the station", "under a grey sky", "at dawn"};
    std::mt19937 rng(42);
    auto pick = [&rng](const auto& list) { return list[rng() % std::size(list)]; };
    std::string out;
    for (int page = 1; page <= pages; ++page) {
        std::string text = "Page " + std::to_string(page) + "\n\n";
        int sentences = 0;
        while (text.size() < 3000) {
            if (page == factPage && sentences == 12) text += std::string(kFact) + " ";
            text += std::string(pick(subjects)) + " " + pick(verbs) + " " + pick(objects) + " " + pick(endings) +
                ", recorded as item " + std::to_string(rng() % 10000) + ". ";
            if (++sentences % 6 == 0) text += "\n\n";
        }
        out += text + "\n\n";
    }
    return out;
}

}  // namespace hearth::test
