// StopMatcher: finds stop strings in a stream of generated text, across token boundaries, and
// holds back text that could still be the start of one until it is disambiguated.
// Thread-safety: one per sequence, engine thread only.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace hearth {

class StopMatcher {
public:
    // Empty strings in `stops` are ignored. Stop strings are UTF-8 text.
    explicit StopMatcher(std::vector<std::string> stops = {});

    struct Output {
        std::string text;  // safe to show: never part of a stop string
        bool stopped = false;  // a stop string was found; text ends right before it
    };
    // text: whole UTF-8 characters (as Utf8Stream gives them). The output is whole characters
    // too: what is held back starts where a stop string would start. After `stopped`, the
    // matcher is done and further pushes return nothing.
    Output push(std::string_view text);
    // The text still held back (the stream ended without a match); empties the matcher.
    std::string flush();

private:
    size_t holdBackFrom() const;

    std::vector<std::string> stops_;
    std::string held_;
    bool stopped_ = false;
};

}  // namespace hearth
