// String building for error messages (g++ 12 has no <format>): strCat("key ", k, " = ", v).
#pragma once

#include <sstream>
#include <string>

namespace hearth {

template <class... Parts>
std::string strCat(const Parts&... parts) {
    std::ostringstream out;
    out.precision(9);
    (out << ... << parts);
    return out.str();
}

}  // namespace hearth
