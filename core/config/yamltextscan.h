// SPDX-License-Identifier: MIT
#pragma once

#include <string>
#include <string_view>

namespace stagecraft {

/// What a line-by-line look at YAML text finds before yaml-cpp parses it. yaml-cpp 0.7 accepts a quoted value
/// left open on the last line (`name: "abc` + newline reads as "abc "), and one left open mid-file swallows the
/// rest of the file into one misleading error; it also reads only the first of several documents. Plain value.
struct YamlTextScan
{
    /// 1-based position of the opening quote of the first quoted scalar ('...' or "...") that does not close on
    /// the line it opens; 0 when every quoted scalar does. Config values are one line each, so a quote that spans
    /// lines is reported even though YAML would fold it.
    int openQuoteLine = 0;
    int openQuoteColumn = 0;
    char openQuote = 0;
    /// Dotted path of the block-mapping keys that lead to that quote ("cluster.gpu"); empty when not known.
    std::string openQuoteKeyPath;
    /// 1-based position of the `---` (or of the content after `...`) that starts a second document; 0 when the
    /// text holds at most one document (a leading `---` only starts the first).
    int secondDocumentLine = 0;
    int secondDocumentColumn = 0;
};

/// Scans `text`: quoted scalars, comments, flow brackets, block scalars (`|`, `>`, whose content is skipped) and
/// document markers. It does not validate YAML (yaml-cpp does that afterwards); it stops at the first open quote.
/// Linear in the text size; never throws.
YamlTextScan scanYamlText(std::string_view text);

} // namespace stagecraft
