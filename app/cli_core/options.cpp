// The Qt-free option parser (options.h).
#include "app/cli_core/options.h"

#include <algorithm>

namespace hearth::cli::core {

const OptionSpec* ArgParser::find(std::string_view name) const {
    for (const OptionSpec& s : specs_)
        if (s.name == name) return &s;
    return nullptr;
}

bool ArgParser::parse(const std::vector<std::string>& args) {
    given_.clear();
    positional_.clear();
    error_.clear();
    std::vector<std::string> unknown;
    bool failed = false;
    bool optionsEnded = false;
    for (size_t i = 1; i < args.size(); ++i) {
        const std::string& arg = args[i];
        if (optionsEnded || arg.size() < 2 || arg[0] != '-') {
            positional_.push_back(arg);
            continue;
        }
        if (arg == "--") {
            optionsEnded = true;
            continue;
        }
        if (arg[1] != '-') {
            // Single-dash words are compacted short options; hearth-cli has none.
            unknown.push_back(arg.substr(1, 1));
            failed = true;
            continue;
        }
        const std::string body = arg.substr(2);
        const size_t eq = body.find('=');
        const std::string name = body.substr(0, eq);
        const OptionSpec* spec = find(name);
        if (spec == nullptr) {
            unknown.push_back(name);
            failed = true;
            continue;
        }
        if (spec->valueName.empty()) {
            if (eq != std::string::npos) {
                error_ = "Unexpected value after '--" + name + "'.";
                failed = true;
                continue;
            }
            given_.emplace_back(name, std::string());
            continue;
        }
        if (eq != std::string::npos) {
            given_.emplace_back(name, body.substr(eq + 1));
        } else if (i + 1 < args.size()) {
            given_.emplace_back(name, args[++i]);
        } else {
            error_ = "Missing value after '--" + name + "'.";
            failed = true;
        }
    }
    if (error_.empty() && !unknown.empty()) {
        if (unknown.size() == 1) {
            error_ = "Unknown option '" + unknown.front() + "'.";
        } else {
            error_ = "Unknown options: ";
            for (size_t i = 0; i < unknown.size(); ++i) error_ += (i ? ", " : "") + unknown[i];
            error_ += ".";
        }
    }
    return !failed;
}

bool ArgParser::isSet(std::string_view name) const {
    return std::any_of(given_.begin(), given_.end(), [&](const auto& g) { return g.first == name; });
}

std::string ArgParser::value(std::string_view name) const {
    for (auto it = given_.rbegin(); it != given_.rend(); ++it)
        if (it->first == name) return it->second;
    const OptionSpec* spec = find(name);
    return spec ? spec->defaultValue : std::string();
}

std::vector<std::string> ArgParser::values(std::string_view name) const {
    std::vector<std::string> out;
    const OptionSpec* spec = find(name);
    if (spec == nullptr || spec->valueName.empty()) return out;  // a flag has no values
    for (const auto& [n, v] : given_)
        if (n == name) out.push_back(v);
    if (out.empty() && !spec->defaultValue.empty()) out.push_back(spec->defaultValue);
    return out;
}

}  // namespace hearth::cli::core
