// SPDX-License-Identifier: MIT
#pragma once

#include "config/diagnostic.h"

#include <QAbstractListModel>
#include <QIcon>
#include <QList>
#include <array>

namespace stagecraft {

/// A flat list of diagnostics (config problems, synthesis failures). DisplayRole is "12:5  key: message", and
/// "config.json:12:5  key: message" for a diagnostic in a file other than the primary one (a Hugging Face
/// config.json named by model.hf_config).
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
        FileRole, ///< the file the line and column are in
    };
    Q_ENUM(Role)

    explicit DiagnosticModel(QObject* parent = nullptr);
    ~DiagnosticModel() override;

    void setDiagnostics(QList<Diagnostic> diagnostics);
    /// The file whose lines need no file name in DisplayRole (the YAML being edited).
    void setPrimaryFile(const QString& file);
    const QList<Diagnostic>& diagnostics() const;
    int errorCount() const;
    int warningCount() const;

    int rowCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;

private:
    QList<Diagnostic> m_diagnostics;
    QString m_primaryFile;
    mutable std::array<QIcon, 3> m_icons; ///< per Severity, drawn on first use
};

} // namespace stagecraft
