// SPDX-License-Identifier: MIT
// The GUI's side of the core's output rule (core/output/outputfile.h): every file the user saves (a config, an
// SVG or PNG of the graph, a memory CSV) is written through it, so a symlink or a device is never replaced by a
// file and a failed write never leaves half a file.
#pragma once

#include <QByteArray>
#include <QString>

namespace stagecraft {

/// Writes `bytes` to `path`; on failure returns false and sets `*error` (if given) to a readable reason.
bool saveOutputFile(const QString& path, const QByteArray& bytes, QString* error);

} // namespace stagecraft
