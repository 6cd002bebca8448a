// SPDX-License-Identifier: MIT
// Shared by the core tests that synthesize presets: load with overrides, synthesize, fail loudly.
#pragma once

#include "config/configloader.h"
#include "synthesis/synthesis.h"

#include <QtTest>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace stagecraft::test {

/// The synthesis of `preset` with `sets` overrides; a config or synthesis error prints its diagnostics and aborts.
inline std::shared_ptr<const SynthesisResult> synth(const std::string& preset, const std::vector<std::string>& sets)
{
    ConfigResult loaded = loadConfigOrPreset(preset, sets);
    if (!loaded.config) {
        for (const Diagnostic& d : loaded.diagnostics)
            qWarning("%s", d.toString().c_str());
        qFatal("config %s does not load", preset.c_str());
    }
    SynthesisOutcome out = synthesize(*loaded.config);
    if (!out.result) {
        for (const Diagnostic& d : out.diagnostics)
            qWarning("%s", d.toString().c_str());
        qFatal("synthesis of %s failed", preset.c_str());
    }
    return out.result;
}

/// Overrides given as a QStringList (a QFETCH column), as the std::string list synth() takes.
inline std::vector<std::string> toOverrides(const QStringList& sets)
{
    std::vector<std::string> overrides;
    for (const QString& set : sets)
        overrides.push_back(set.toStdString());
    return overrides;
}

/// Override lists concatenate: base + plan.
inline std::vector<std::string> operator+(std::vector<std::string> a, const std::vector<std::string>& b)
{
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

/// The whole content of a file ("" if it cannot be read).
inline std::string readFile(const std::filesystem::path& p)
{
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

/// A fresh folder under /tmp, removed with everything in it when the object goes.
class TempDir
{
public:
    TempDir()
    {
        char pattern[] = "/tmp/stagecraft-test-XXXXXX";
        if (const char* made = mkdtemp(pattern))
            m_path = made;
        else
            qFatal("cannot create a temporary folder");
    }
    ~TempDir()
    {
        std::error_code ec;
        std::filesystem::remove_all(m_path, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const std::filesystem::path& path() const
    {
        return m_path;
    }

private:
    std::filesystem::path m_path;
};

} // namespace stagecraft::test
