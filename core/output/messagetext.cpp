// SPDX-License-Identifier: MIT
#include "output/messagetext.h"

#include <cstdint>

namespace stagecraft {

namespace {

    /// The length of the valid UTF-8 sequence at the start of `s` and its code point, or 0 when the first byte does
    /// not start one (a stray continuation byte, an overlong form, a surrogate, a value past U+10FFFF, a cut
    /// sequence). RFC 3629, section 4 (the UTF8-octets grammar).
    size_t decodeUtf8(std::string_view s, uint32_t& codePoint)
    {
        const auto b = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
        const unsigned char c = b(0);
        if (c < 0x80) {
            codePoint = c;
            return 1;
        }
        size_t length = 0;
        uint32_t minimum = 0;
        if (c >= 0xC2 && c <= 0xDF) {
            length = 2;
            codePoint = c & 0x1Fu;
            minimum = 0x80;
        } else if (c >= 0xE0 && c <= 0xEF) {
            length = 3;
            codePoint = c & 0x0Fu;
            minimum = 0x800;
        } else if (c >= 0xF0 && c <= 0xF4) {
            length = 4;
            codePoint = c & 0x07u;
            minimum = 0x10000;
        } else {
            return 0;
        }
        if (s.size() < length)
            return 0;
        for (size_t i = 1; i < length; ++i) {
            if ((b(i) & 0xC0) != 0x80)
                return 0;
            codePoint = (codePoint << 6) | (b(i) & 0x3Fu);
        }
        if (codePoint < minimum || codePoint > 0x10FFFF || (codePoint >= 0xD800 && codePoint <= 0xDFFF))
            return 0;
        return length;
    }

    const char kHex[] = "0123456789ABCDEF";

    void appendByteEscape(std::string& out, unsigned char c)
    {
        out += "\\x";
        out += kHex[c >> 4];
        out += kHex[c & 15];
    }

    /// Appends the escaped form of the character at the start of `s`; returns the bytes it consumed.
    size_t appendEscaped(std::string& out, std::string_view s)
    {
        uint32_t cp = 0;
        const size_t n = decodeUtf8(s, cp);
        if (n == 0) {
            appendByteEscape(out, static_cast<unsigned char>(s[0]));
            return 1;
        }
        if (n == 1) {
            switch (cp) {
            case '\n':
                out += "\\n";
                return 1;
            case '\r':
                out += "\\r";
                return 1;
            case '\t':
                out += "\\t";
                return 1;
            case 0x1B:
                out += "\\e";
                return 1;
            case 0:
                out += "\\0";
                return 1;
            default:
                break;
            }
            if (cp < 0x20 || cp == 0x7F)
                appendByteEscape(out, static_cast<unsigned char>(cp));
            else
                out += static_cast<char>(cp);
            return 1;
        }
        // C1 controls (CSI U+009B is a terminal escape on its own) and the bidirectional overrides that reorder
        // what a reader sees.
        if ((cp >= 0x80 && cp <= 0x9F) || (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069)) {
            out += "\\u{";
            for (int shift = 12; shift >= 0; shift -= 4)
                out += kHex[(cp >> shift) & 15];
            out += '}';
            return n;
        }
        out.append(s.data(), n);
        return n;
    }

} // namespace

std::string escapedText(std::string_view text)
{
    std::string out;
    out.reserve(text.size());
    while (!text.empty())
        text.remove_prefix(appendEscaped(out, text));
    return out;
}

std::string messageExcerpt(std::string_view text, size_t maxChars)
{
    std::string out;
    size_t chars = 0;
    while (!text.empty() && chars < maxChars) {
        text.remove_prefix(appendEscaped(out, text));
        ++chars;
    }
    if (!text.empty())
        out += "...";
    return out;
}

bool looksLikeText(std::string_view bytes)
{
    bytes = bytes.substr(0, size_t { 64 } << 10);
    const size_t total = bytes.size();
    size_t controls = 0;
    while (!bytes.empty()) {
        uint32_t cp = 0;
        size_t n = decodeUtf8(bytes, cp);
        if (n == 0) {
            // A sequence cut by the 64 KiB window (a lead byte and only continuation bytes after it, fewer than it
            // needs) is not evidence of binary data.
            const auto lead = static_cast<unsigned char>(bytes[0]);
            const size_t needed = lead >= 0xC2 && lead <= 0xDF ? 2
                : lead >= 0xE0 && lead <= 0xEF                 ? 3
                : lead >= 0xF0 && lead <= 0xF4                 ? 4
                                                               : 0;
            bool cut = needed > bytes.size();
            for (size_t i = 1; cut && i < bytes.size(); ++i)
                cut = (static_cast<unsigned char>(bytes[i]) & 0xC0) == 0x80;
            if (cut)
                break;
            return false;
        }
        if (cp == 0)
            return false;
        if ((cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\r' && cp != '\f') || cp == 0x7F
            || (cp >= 0x80 && cp <= 0x9F))
            ++controls;
        bytes.remove_prefix(n);
    }
    return controls * 64 <= total;
}

} // namespace stagecraft
