// Compact JSON text (json.h).
#include "app/cli_core/json.h"

#include <charconv>
#include <cmath>

#include "app/cli_core/text.h"

namespace hearth::cli::core {

void appendJsonString(std::string& out, const std::string& raw) {
    static const char kHex[] = "0123456789abcdef";
    const std::string text = validUtf8(raw);  // as a QString would hold it
    out += '"';
    for (const char ch : text) {
        const auto c = static_cast<unsigned char>(ch);
        switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\b': out += "\\b"; break;
        case '\f': out += "\\f"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        default:
            if (c < 0x20) {
                out += "\\u00";
                out += kHex[c >> 4];
                out += kHex[c & 15];
            } else {
                out += ch;
            }
        }
    }
    out += '"';
}

void Json::insert(const std::string& key, Json value) {
    if (auto* o = std::get_if<std::shared_ptr<Object>>(&v_)) (**o)[key] = std::move(value);
}

void Json::write(std::string& out) const {
    if (std::holds_alternative<std::monostate>(v_)) {
        out += "null";
    } else if (const bool* b = std::get_if<bool>(&v_)) {
        out += *b ? "true" : "false";
    } else if (const int64_t* i = std::get_if<int64_t>(&v_)) {
        out += std::to_string(*i);
    } else if (const double* d = std::get_if<double>(&v_)) {
        out += formatJsonDouble(*d);
    } else if (const std::string* s = std::get_if<std::string>(&v_)) {
        appendJsonString(out, *s);
    } else if (const auto* a = std::get_if<std::shared_ptr<Array>>(&v_)) {
        out += '[';
        bool first = true;
        for (const Json& item : **a) {
            if (!first) out += ',';
            first = false;
            item.write(out);
        }
        out += ']';
    } else if (const auto* o = std::get_if<std::shared_ptr<Object>>(&v_)) {
        out += '{';
        bool first = true;
        for (const auto& [key, item] : **o) {
            if (!first) out += ',';
            first = false;
            appendJsonString(out, key);
            out += ':';
            item.write(out);
        }
        out += '}';
    }
}

std::string Json::compact() const {
    std::string out;
    write(out);
    return out;
}

}  // namespace hearth::cli::core
