// SPDX-License-Identifier: MIT
#include "kineto/messagequote.h"

namespace stagecraft {

namespace {

    /// Length of the valid UTF-8 sequence at text[i] (1-4), or 0 when the bytes there are not one (overlong forms,
    /// surrogates and code points past U+10FFFF included).
    size_t utf8Length(std::string_view text, size_t i)
    {
        const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
        const unsigned char c = byte(i);
        size_t n = 0;
        unsigned char lo = 0x80, hi = 0xBF;
        if (c >= 0xC2 && c <= 0xDF)
            n = 2;
        else if (c >= 0xE0 && c <= 0xEF) {
            n = 3;
            lo = c == 0xE0 ? 0xA0 : 0x80;
            hi = c == 0xED ? 0x9F : 0xBF;
        } else if (c >= 0xF0 && c <= 0xF4) {
            n = 4;
            lo = c == 0xF0 ? 0x90 : 0x80;
            hi = c == 0xF4 ? 0x8F : 0xBF;
        } else
            return 0;
        if (i + n > text.size())
            return 0;
        if (byte(i + 1) < lo || byte(i + 1) > hi)
            return 0;
        for (size_t k = 2; k < n; ++k)
            if (byte(i + k) < 0x80 || byte(i + k) > 0xBF)
                return 0;
        return n;
    }

} // namespace

std::string quoteForMessage(std::string_view text, size_t maxBytes)
{
    static const char* hex = "0123456789ABCDEF";
    std::string out;
    size_t i = 0;
    while (i < text.size()) {
        if (out.size() >= maxBytes) {
            out += "...";
            break;
        }
        const auto c = static_cast<unsigned char>(text[i]);
        if (c == '\\') {
            out += "\\\\";
            ++i;
        } else if (c >= 0x20 && c < 0x7F) {
            out += static_cast<char>(c);
            ++i;
        } else if (const size_t n = c >= 0x80 ? utf8Length(text, i) : 0; n > 0) {
            out.append(text.substr(i, n));
            i += n;
        } else {
            out += "\\x";
            out += hex[c >> 4];
            out += hex[c & 15];
            ++i;
        }
    }
    return out;
}

} // namespace stagecraft
