// SPDX-License-Identifier: MIT
#include "widgets/reportview.h"

#include "report/report.h"

#include <QFontDatabase>
#include <QPlainTextEdit>
#include <QRegularExpression>
#include <QResizeEvent>
#include <QScrollBar>
#include <QVBoxLayout>

namespace stagecraft {

namespace {

    /// Whether `line` is a row of one of the report's tables (columns apart by runs of spaces): those keep their
    /// alignment and scroll sideways rather than wrap.
    bool isTableRow(const QString& line)
    {
        static const QRegularExpression gap(QStringLiteral("\\S {2,}(?=\\S)"));
        qsizetype gaps = 0;
        for (auto it = gap.globalMatch(line); it.hasNext(); it.next())
            ++gaps;
        return gaps >= 3;
    }

    /// `text` with every line that is not a table row wrapped at spaces to `columns` characters; a continuation is
    /// indented under the line's text ("note: " and "warning: " lines under their message).
    QString reflowed(const QString& text, int columns)
    {
        static const QRegularExpression lead(QStringLiteral("^( *)((?:note|warning|assumed [a-z]+): )?"));
        QStringList out;
        for (const QString& line : text.split(QLatin1Char('\n'))) {
            if (line.size() <= columns || isTableRow(line)) {
                out << line;
                continue;
            }
            const QRegularExpressionMatch m = lead.match(line);
            const int indent = static_cast<int>(std::min<qsizetype>(m.capturedLength(0), columns / 2));
            const QString pad(indent, QLatin1Char(' '));
            QString rest = line;
            bool first = true;
            while (!rest.isEmpty()) {
                const int room = first ? columns : columns - indent;
                if (rest.size() <= room) {
                    out << (first ? rest : pad + rest);
                    break;
                }
                qsizetype cut = rest.lastIndexOf(QLatin1Char(' '), room);
                if (cut <= (first ? indent : 0))
                    cut = room; // a word longer than the line: cut it
                out << (first ? rest.left(cut) : pad + rest.left(cut));
                rest = rest.mid(cut).trimmed();
                first = false;
            }
        }
        return out.join(QLatin1Char('\n'));
    }

} // namespace

ReportView::ReportView(QWidget* parent)
    : ResultView(parent)
    , m_text(new QPlainTextEdit(this))
{
    m_text->setObjectName(QStringLiteral("reportText"));
    m_text->setReadOnly(true);
    m_text->setLineWrapMode(QPlainTextEdit::NoWrap);
    m_text->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_text->setFrameShape(QFrame::NoFrame);
    m_text->document()->setDocumentMargin(10);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_text);
}

ReportView::~ReportView() = default;

void ReportView::setResult(std::shared_ptr<const SynthesisResult> result)
{
    if (!result)
        return;
    m_report = QString::fromStdString(reportText(*result));
    m_columns = 0;
    reflow();
}

int ReportView::columns() const
{
    const QFontMetricsF metrics(m_text->font());
    const double margin = 2 * m_text->document()->documentMargin() + m_text->verticalScrollBar()->sizeHint().width();
    return std::max(
        40, static_cast<int>((m_text->viewport()->width() - margin) / metrics.horizontalAdvance(QLatin1Char('0'))));
}

void ReportView::reflow()
{
    const int columns = this->columns();
    if (m_report.isEmpty() || columns == m_columns)
        return;
    m_columns = columns;
    // Keep the reader's place when the report is regenerated after an edit.
    const int vertical = m_text->verticalScrollBar()->value();
    const int horizontal = m_text->horizontalScrollBar()->value();
    m_text->setPlainText(reflowed(m_report, columns));
    m_text->verticalScrollBar()->setValue(vertical);
    m_text->horizontalScrollBar()->setValue(horizontal);
}

void ReportView::resizeEvent(QResizeEvent* event)
{
    ResultView::resizeEvent(event);
    reflow();
}

QPlainTextEdit* ReportView::textEdit() const
{
    return m_text;
}

} // namespace stagecraft
