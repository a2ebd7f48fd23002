// hearth-cli's command-line options without Qt: the option table (OptionSpec), a read-only view
// of parsed options (OptionView, which the Qt build also implements over QCommandLineParser)
// and the parser of the Qt-free core (ArgParser), which follows QCommandLineParser's rules as
// hearth-cli uses them: --name VALUE, --name=VALUE, flags, "--" ends the options, the last
// value wins, an unset option reads as its default; the same error texts.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace hearth::cli::core {

struct OptionSpec {
    std::string name;
    std::string description;
    std::string valueName;  // empty: a flag
    std::string defaultValue = {};
};

// What the commands read: whether an option was given, its value (the last one given, else its
// default), all values given.
class OptionView {
public:
    virtual ~OptionView() = default;
    [[nodiscard]] virtual bool isSet(std::string_view name) const = 0;
    [[nodiscard]] virtual std::string value(std::string_view name) const = 0;
    [[nodiscard]] virtual std::vector<std::string> values(std::string_view name) const = 0;
};

class ArgParser final : public OptionView {
public:
    explicit ArgParser(std::vector<OptionSpec> specs) : specs_(std::move(specs)) {}
    // args: the program name first. False on an error (errorText() says which).
    [[nodiscard]] bool parse(const std::vector<std::string>& args);
    [[nodiscard]] const std::string& errorText() const { return error_; }
    [[nodiscard]] const std::vector<std::string>& positionalArguments() const { return positional_; }

    [[nodiscard]] bool isSet(std::string_view name) const override;
    [[nodiscard]] std::string value(std::string_view name) const override;
    [[nodiscard]] std::vector<std::string> values(std::string_view name) const override;

private:
    [[nodiscard]] const OptionSpec* find(std::string_view name) const;
    std::vector<OptionSpec> specs_;
    std::vector<std::pair<std::string, std::string>> given_;  // (name, value) in order
    std::vector<std::string> positional_;
    std::string error_;
};

}  // namespace hearth::cli::core
