// A small JSON value for hearth-cli's --json output without Qt. compact() writes what
// QJsonDocument::toJson(QJsonDocument::Compact) writes for the same value (keys in sorted
// order, integers as integers, doubles in their shortest form, UTF-8 text unescaped), so the
// Linux and Windows builds print the same bytes (tests/app/cli_core compares the two).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

namespace hearth::cli::core {

class Json {
public:
    using Array = std::vector<Json>;
    using Object = std::map<std::string, Json>;

    Json() = default;  // null
    Json(bool b) : v_(b) {}  // NOLINT: implicit, as QJsonValue
    Json(int i) : v_(static_cast<int64_t>(i)) {}  // NOLINT
    Json(int64_t i) : v_(i) {}  // NOLINT
    Json(double d) : v_(d) {}  // NOLINT
    Json(float f) : v_(static_cast<double>(f)) {}  // NOLINT
    Json(const char* s) : v_(std::string(s)) {}  // NOLINT
    Json(std::string s) : v_(std::move(s)) {}  // NOLINT
    Json(Array a) : v_(std::make_shared<Array>(std::move(a))) {}  // NOLINT
    Json(Object o) : v_(std::make_shared<Object>(std::move(o))) {}  // NOLINT

    // The value as compact JSON text.
    [[nodiscard]] std::string compact() const;
    // Adds or replaces a member (this must be an object).
    void insert(const std::string& key, Json value);

private:
    void write(std::string& out) const;
    std::variant<std::monostate, bool, int64_t, double, std::string, std::shared_ptr<Array>, std::shared_ptr<Object>>
        v_;
};

// A JSON string literal of text (quotes included), escaped as QJsonDocument escapes it.
void appendJsonString(std::string& out, const std::string& text);

}  // namespace hearth::cli::core
