// Who wrote a chat message: the one definition of message roles, used by the chat formats, the
// conversation store, the window, the CLI and the local server. Roles travel as this enum; their
// names ("system", "user", "assistant") appear only where text is read or written (the database,
// JSON, the templates' own role markers).
#pragma once

#include <string_view>

#include "engine/error.h"

namespace hearth {

enum class ChatRole { System, User, Assistant };

// "system", "user", "assistant": the names chat templates and OpenAI's API use.
[[nodiscard]] std::string_view chatRoleName(ChatRole role);
// The role named name (exactly one of chatRoleName's names); InvalidFormat naming the text otherwise.
[[nodiscard]] Result<ChatRole> parseChatRole(std::string_view name);

}  // namespace hearth
