// SPDX-License-Identifier: MIT
#pragma once

#include <QSyntaxHighlighter>
#include <QTextCharFormat>

namespace stagecraft {

/// Colours the YAML of a config: keys, comments, numbers, booleans and list brackets. Line-local (the configs
/// are block-style mappings), so no multi-line state is kept.
class YamlHighlighter : public QSyntaxHighlighter
{
    Q_OBJECT
public:
    explicit YamlHighlighter(QTextDocument* document);
    ~YamlHighlighter() override;

protected:
    void highlightBlock(const QString& text) override;

private:
    QTextCharFormat m_keyFormat;
    QTextCharFormat m_sectionFormat;
    QTextCharFormat m_commentFormat;
    QTextCharFormat m_numberFormat;
    QTextCharFormat m_literalFormat;
    QTextCharFormat m_stringFormat;
};

} // namespace stagecraft
