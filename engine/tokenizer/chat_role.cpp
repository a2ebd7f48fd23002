// Role names, the only table of them.
#include "engine/tokenizer/chat_role.h"

#include <array>
#include <utility>

#include "engine/str_cat.h"

namespace hearth {

namespace {

constexpr std::array<std::pair<ChatRole, std::string_view>, 3> kRoleNames{{
    {ChatRole::System, "system"},
    {ChatRole::User, "user"},
    {ChatRole::Assistant, "assistant"},
}};

}  // namespace

std::string_view chatRoleName(ChatRole role) {
    for (const auto& [r, name] : kRoleNames)
        if (r == role) return name;
    return {};  // not an enumerator (a cast from a number): no name
}

Result<ChatRole> parseChatRole(std::string_view name) {
    for (const auto& [role, n] : kRoleNames)
        if (n == name) return role;
    return fail(ErrorCode::InvalidFormat,
                strCat("unknown message role \"", name, "\" (expected system, user or assistant)"));
}

}  // namespace hearth
