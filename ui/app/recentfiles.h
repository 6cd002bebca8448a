// SPDX-License-Identifier: MIT
#pragma once

#include <QObject>
#include <QStringList>

namespace stagecraft {

/// The most recently opened or saved config files, newest first, kept in QSettings ("recentFiles").
class RecentFiles : public QObject
{
    Q_OBJECT
public:
    static constexpr int kMaxFiles = 8;

    /// `persistent` = false keeps the list in memory only (tests, screenshots).
    explicit RecentFiles(bool persistent, QObject* parent = nullptr);
    ~RecentFiles() override;

    QStringList files() const;
    /// Moves `path` (made absolute) to the front; drops the oldest beyond kMaxFiles.
    void add(const QString& path);
    void remove(const QString& path);
    void clear();

Q_SIGNALS:
    void changed();

private:
    void store();

    bool m_persistent;
    QStringList m_files;
};

} // namespace stagecraft
