// SPDX-License-Identifier: MIT
// Text from outside (a file's bytes, a name, a path, a simulator's output line) made safe to put into a message that
// is printed on a terminal or in a log. The rules every reader and command follows (README.md, "Hostile input"):
//   - a message quotes at most a short excerpt of a file the user named, through messageExcerpt();
//   - it quotes nothing from a file that is not a config or trace at all (binary bytes, no key/value shape): check
//     with looksLikeText() first and say what the file is instead;
//   - every byte that could drive a terminal or fake an output line (ESC, BEL, CR, LF, NUL, DEL, C1 controls, bytes
//     that are not UTF-8) is shown escaped, so a hostile file cannot move the cursor, change colours or print a line
//     that looks like ours.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace stagecraft {

/// Default length of an excerpt, in characters (code points), before it is cut with "...".
inline constexpr size_t kMessageExcerptChars = 60;

/// `text` with every control or non-UTF-8 byte escaped: \n, \r, \t, \e (ESC), \0, \xHH for any
/// other C0 byte, DEL and each byte of an invalid UTF-8 sequence, \u{HHHH} for a C1 control (U+0080..U+009F) and
/// the bidirectional overrides (U+202A..U+202E, U+2066..U+2069). Printable ASCII (a backslash too: text that was
/// already quoted with quotedText() stays readable) and valid UTF-8 stay as they are.
/// Never throws except std::bad_alloc; pure.
std::string escapedText(std::string_view text);

/// escapedText() of at most the first `maxChars` characters of `text`, followed by "..." when it was cut. The cut
/// never splits a UTF-8 sequence or an escape. Pure.
std::string messageExcerpt(std::string_view text, size_t maxChars = kMessageExcerptChars);

/// Whether `bytes` look like a text file a human wrote (a YAML or JSON config, a CSV): no NUL byte, valid UTF-8,
/// and no more than 1 in 64 bytes a control character other than tab, CR, LF and form feed. A file that fails is
/// described ("binary data"), never quoted. Looks at most at the first 64 KiB. Pure.
bool looksLikeText(std::string_view bytes);

} // namespace stagecraft
