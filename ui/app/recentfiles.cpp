// SPDX-License-Identifier: MIT
#include "app/recentfiles.h"

#include <QFileInfo>
#include <QSettings>

namespace stagecraft {

namespace {
    const QString kKey = QStringLiteral("recentFiles");
}

RecentFiles::RecentFiles(bool persistent, QObject* parent)
    : QObject(parent)
    , m_persistent(persistent)
{
    if (m_persistent)
        m_files = QSettings().value(kKey).toStringList().mid(0, kMaxFiles);
}

RecentFiles::~RecentFiles() = default;

QStringList RecentFiles::files() const
{
    return m_files;
}

void RecentFiles::add(const QString& path)
{
    const QString absolute = QFileInfo(path).absoluteFilePath();
    m_files.removeAll(absolute);
    m_files.prepend(absolute);
    while (m_files.size() > kMaxFiles)
        m_files.removeLast();
    store();
}

void RecentFiles::remove(const QString& path)
{
    if (m_files.removeAll(path) > 0)
        store();
}

void RecentFiles::clear()
{
    m_files.clear();
    store();
}

void RecentFiles::store()
{
    if (m_persistent)
        QSettings().setValue(kKey, m_files);
    Q_EMIT changed();
}

} // namespace stagecraft
