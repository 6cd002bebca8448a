// SPDX-License-Identifier: MIT
#include "session/outputsaver.h"

#include "output/outputfile.h"

namespace stagecraft {

bool saveOutputFile(const QString& path, const QByteArray& bytes, QString* error)
{
    try {
        writeOutputFile(path.toStdString(), std::string_view(bytes.constData(), static_cast<size_t>(bytes.size())));
        return true;
    } catch (const OutputError& e) {
        if (error)
            *error = QString::fromStdString(e.what());
        return false;
    }
}

} // namespace stagecraft
