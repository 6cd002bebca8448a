// SPDX-License-Identifier: MIT
#pragma once

#include "config/diagnostic.h"

#include <QAbstractListModel>
#include <QIcon>
#include <QList>
#include <array>

namespace stagecraft {

/// A flat list of diagnostics (config problems, synthesis failures). DisplayRole is "12:5  key: message".
class DiagnosticModel : public QAbstractListModel
{
    Q_OBJECT
public:
    enum Role
    {
        SeverityRole = Qt::UserRole, ///< int(Severity)
        LineRole, ///< 1-based, 0 = unknown
        ColumnRole, ///< 1-based, 0 = unknown
        KeyPathRole, ///< "parallelism.tp", empty when not tied to a key
        MessageRole,
    };
    Q_ENUM(Role)

    explicit DiagnosticModel(QObject* parent = nullptr);
    ~DiagnosticModel() override;

    void setDiagnostics(QList<Diagnostic> diagnostics);
    const QList<Diagnostic>& diagnostics() const;
    int errorCount() const;
    int warningCount() const;

    int rowCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;

private:
    QList<Diagnostic> m_diagnostics;
    mutable std::array<QIcon, 3> m_icons; ///< per Severity, drawn on first use
};

} // namespace stagecraft
