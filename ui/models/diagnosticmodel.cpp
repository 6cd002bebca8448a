// SPDX-License-Identifier: MIT
#include "models/diagnosticmodel.h"

#include <QColor>
#include <QIcon>
#include <QPainter>
#include <QPixmap>
#include <algorithm>

namespace stagecraft {

namespace {

    QColor severityColor(Severity severity)
    {
        switch (severity) {
        case Severity::Error:
            return QColor(0xc6, 0x28, 0x28);
        case Severity::Warning:
            return QColor(0xe6, 0x8a, 0x00);
        case Severity::Note:
            break;
        }
        return QColor(0x15, 0x65, 0xc0);
    }

    QIcon severityIcon(Severity severity)
    {
        QPixmap pixmap(16, 16);
        pixmap.fill(Qt::transparent);
        QPainter painter(&pixmap);
        painter.setRenderHint(QPainter::Antialiasing);
        painter.setPen(Qt::NoPen);
        painter.setBrush(severityColor(severity));
        painter.drawEllipse(QRectF(2.5, 2.5, 11, 11));
        painter.setPen(QPen(Qt::white, 1.8, Qt::SolidLine, Qt::RoundCap));
        if (severity == Severity::Error) {
            painter.drawLine(QPointF(5.8, 5.8), QPointF(10.2, 10.2));
            painter.drawLine(QPointF(10.2, 5.8), QPointF(5.8, 10.2));
        } else {
            painter.drawLine(QPointF(8, 5), QPointF(8, 8.8));
            painter.drawPoint(QPointF(8, 11));
        }
        return QIcon(pixmap);
    }

} // namespace

DiagnosticModel::DiagnosticModel(QObject* parent)
    : QAbstractListModel(parent)
{
}

DiagnosticModel::~DiagnosticModel() = default;

void DiagnosticModel::setDiagnostics(QList<Diagnostic> diagnostics)
{
    beginResetModel();
    m_diagnostics = std::move(diagnostics);
    endResetModel();
}

const QList<Diagnostic>& DiagnosticModel::diagnostics() const
{
    return m_diagnostics;
}

int DiagnosticModel::errorCount() const
{
    return static_cast<int>(std::count_if(
        m_diagnostics.begin(), m_diagnostics.end(), [](const Diagnostic& d) { return d.severity == Severity::Error; }));
}

int DiagnosticModel::warningCount() const
{
    return static_cast<int>(std::count_if(m_diagnostics.begin(), m_diagnostics.end(),
        [](const Diagnostic& d) { return d.severity == Severity::Warning; }));
}

int DiagnosticModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_diagnostics.size());
}

void DiagnosticModel::setPrimaryFile(const QString& file)
{
    if (file == m_primaryFile)
        return;
    m_primaryFile = file;
    if (!m_diagnostics.isEmpty())
        Q_EMIT dataChanged(index(0), index(int(m_diagnostics.size()) - 1), { Qt::DisplayRole });
}

QVariant DiagnosticModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Diagnostic& d = m_diagnostics[index.row()];
    switch (role) {
    case Qt::DisplayRole: {
        QString text;
        const QString file = QString::fromStdString(d.file);
        if (d.line > 0 && !file.isEmpty() && !file.startsWith(QLatin1Char('<')) && file != m_primaryFile)
            text = file.section(QLatin1Char('/'), -1) + QLatin1Char(':');
        if (d.line > 0)
            text += QString::number(d.line) + QLatin1Char(':') + QString::number(d.column) + QStringLiteral("  ");
        if (!d.keyPath.empty())
            text += QString::fromStdString(d.keyPath) + QStringLiteral(": ");
        text += QString::fromStdString(d.message);
        return text;
    }
    case Qt::ToolTipRole:
        return QString::fromStdString(d.toString());
    case Qt::DecorationRole: {
        QIcon& icon = m_icons[static_cast<size_t>(std::clamp(static_cast<int>(d.severity), 0, 2))];
        if (icon.isNull())
            icon = severityIcon(d.severity);
        return icon;
    }
    case SeverityRole:
        return static_cast<int>(d.severity);
    case LineRole:
        return d.line;
    case ColumnRole:
        return d.column;
    case KeyPathRole:
        return QString::fromStdString(d.keyPath);
    case MessageRole:
        return QString::fromStdString(d.message);
    case FileRole:
        return QString::fromStdString(d.file);
    default:
        return {};
    }
}

} // namespace stagecraft
