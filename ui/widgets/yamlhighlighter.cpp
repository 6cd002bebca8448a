// SPDX-License-Identifier: MIT
#include "widgets/yamlhighlighter.h"

#include <QRegularExpression>

namespace stagecraft {

YamlHighlighter::YamlHighlighter(QTextDocument* document)
    : QSyntaxHighlighter(document)
{
    m_keyFormat.setForeground(QColor(0x1f, 0x4e, 0x8c));
    m_sectionFormat.setForeground(QColor(0x1f, 0x4e, 0x8c));
    m_sectionFormat.setFontWeight(QFont::Bold);
    m_commentFormat.setForeground(QColor(0x6a, 0x73, 0x7d));
    m_commentFormat.setFontItalic(true);
    m_numberFormat.setForeground(QColor(0x0b, 0x7a, 0x5c));
    m_literalFormat.setForeground(QColor(0x8e, 0x3c, 0x9e));
    m_stringFormat.setForeground(QColor(0xa3, 0x4a, 0x12));
}

YamlHighlighter::~YamlHighlighter() = default;

void YamlHighlighter::highlightBlock(const QString& text)
{
    // A '#' starts a comment at the line start or after whitespace, outside quotes.
    qsizetype commentStart = -1;
    QChar quote;
    for (qsizetype i = 0; i < text.size(); ++i) {
        const QChar c = text[i];
        if (!quote.isNull()) {
            if (c == quote)
                quote = QChar();
        } else if (c == QLatin1Char('"') || c == QLatin1Char('\'')) {
            quote = c;
        } else if (c == QLatin1Char('#') && (i == 0 || text[i - 1].isSpace())) {
            commentStart = i;
            break;
        }
    }
    const qsizetype codeEnd = commentStart < 0 ? text.size() : commentStart;
    if (commentStart >= 0)
        setFormat(static_cast<int>(commentStart), static_cast<int>(text.size() - commentStart), m_commentFormat);

    static const QRegularExpression keyPattern(QStringLiteral(R"(^(\s*)(- )?([A-Za-z_][\w.-]*)\s*:(?=\s|$))"));
    const QString code = text.left(codeEnd);
    qsizetype valueStart = 0;
    if (const QRegularExpressionMatch key = keyPattern.match(code); key.hasMatch()) {
        // A top-level key with nothing after the colon opens a section (model:, training:, ...).
        const bool section = key.capturedLength(1) == 0 && code.mid(key.capturedEnd(0)).trimmed().isEmpty();
        setFormat(static_cast<int>(key.capturedStart(3)), static_cast<int>(key.capturedLength(3)),
            section ? m_sectionFormat : m_keyFormat);
        valueStart = key.capturedEnd(0);
    }

    static const QRegularExpression valuePattern(QStringLiteral(
        R"(("[^"]*"|'[^']*')|\b(true|false|null|yes|no|on|off)\b|(-?\b\d[\d_]*(\.\d+)?([eE][-+]?\d+)?\b))"));
    auto it = valuePattern.globalMatch(code, valueStart);
    while (it.hasNext()) {
        const QRegularExpressionMatch m = it.next();
        const QTextCharFormat& format =
            m.capturedLength(1) > 0 ? m_stringFormat : (m.capturedLength(2) > 0 ? m_literalFormat : m_numberFormat);
        setFormat(static_cast<int>(m.capturedStart(0)), static_cast<int>(m.capturedLength(0)), format);
    }
}

} // namespace stagecraft
