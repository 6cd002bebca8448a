// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace stagecraft {

/// `text` from an input file made safe to print inside a message: control bytes, DEL and bytes that are not
/// valid UTF-8 become \xNN, a backslash becomes \\; longer than `maxBytes`, it is cut at a character boundary and
/// "..." appended. The one place the Kineto reader escapes what it quotes, so a project-wide helper can replace it.
std::string quoteForMessage(std::string_view text, size_t maxBytes = 120);

} // namespace stagecraft
