// SPDX-License-Identifier: MIT
#include "cliapp.h"

#include "command.h"
#include "config/programsize.h"
#include "output/messagetext.h"
#include "version.h"

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <streambuf>
#include <unistd.h>

namespace stagecraft::cli {

namespace {

    /// std::cout's buffer, written to descriptor 1 with write(2): it keeps the reason of the first failed write
    /// (ENOSPC on a full disk or /dev/full, EPIPE, EIO), which a FILE loses, so that the message can name it.
    class CheckedStdout final : public std::streambuf
    {
    public:
        CheckedStdout()
        {
            setp(m_buffer, m_buffer + sizeof m_buffer);
        }
        /// errno of the first failed write, 0 when every byte arrived.
        int error() const
        {
            return m_errno;
        }

    protected:
        int_type overflow(int_type c) override
        {
            if (!drain())
                return traits_type::eof();
            if (!traits_type::eq_int_type(c, traits_type::eof())) {
                *pptr() = traits_type::to_char_type(c);
                pbump(1);
            }
            return traits_type::not_eof(c);
        }
        int sync() override
        {
            return drain() ? 0 : -1;
        }

    private:
        bool drain()
        {
            const char* p = pbase();
            size_t left = static_cast<size_t>(pptr() - pbase());
            setp(m_buffer, m_buffer + sizeof m_buffer);
            while (left > 0 && m_errno == 0) {
                const ssize_t n = ::write(STDOUT_FILENO, p, left);
                if (n < 0 && errno == EINTR)
                    continue;
                if (n <= 0) {
                    m_errno = n < 0 ? errno : EIO;
                    break;
                }
                p += n;
                left -= static_cast<size_t>(n);
            }
            return m_errno == 0;
        }

        char m_buffer[1 << 16];
        int m_errno = 0;
    };

    int runCommand(int argc, char** argv);

} // namespace

int run(int argc, char** argv)
{
    // Every command prints through std::cout: a write that failed is a failed command, whatever it returned, so
    // that `stagecraft report --json > file` on a full disk does not exit 0 with a cut file.
    CheckedStdout out;
    std::streambuf* previous = std::cout.rdbuf(&out);
    const int code = runCommand(argc, argv);
    std::cout.flush();
    std::cout.rdbuf(previous);
    std::fflush(stdout); // anything printed with stdio (nothing should be)
    const int err = out.error() != 0 ? out.error() : std::ferror(stdout) ? EIO : 0;
    if (err == 0)
        return code;
    std::cout.clear();
    std::cerr << "stagecraft: cannot write to standard output: " << std::strerror(err) << "\n";
    return code == ExitOk ? ExitBadInput : code;
}

namespace {

    int runCommand(int argc, char** argv)
    {
        CLI::App app { "Stagecraft: synthesize per-GPU execution traces of distributed LLM training", "stagecraft" };
        app.set_version_flag("--version", versionString());
        app.get_formatter()->column_width(32); // the longest flags plus their type stay clear of their description
        app.require_subcommand(1);
        app.footer(
            "Exit codes: 0 ok, 2 bad input (config, flags, file), 1 internal error (for simulate: a run that did not "
            "pass).");
        std::vector<Command> commands;
        commands.push_back(addSynthCommand(app));
        commands.push_back(addReportCommand(app));
        commands.push_back(addSweepCommand(app));
        commands.push_back(addInspectCommand(app));
        commands.push_back(addSimulateCommand(app));
        commands.push_back(addPresetsCommand(app));
        commands.push_back(addImportHfCommand(app));
        commands.push_back(addCalibrateCommand(app));
        commands.push_back(addCompareTraceCommand(app));
        // The program-size limit's message names the flag that raises it (the GUI has no such flag).
        setProgramLimitAdvice("raise the limit with --max-nodes");
        try {
            app.parse(argc, argv);
        } catch (const CLI::ParseError& e) {
            return app.exit(e) == 0 ? ExitOk : ExitBadInput;
        }
        try {
            for (const Command& c : commands)
                if (c.app && c.app->parsed())
                    return c.run();
        } catch (const std::exception& e) {
            std::cerr << "stagecraft: internal error: " << escapedText(e.what()) << "\n";
            return ExitInternal;
        }
        return ExitOk;
    }

} // namespace

} // namespace stagecraft::cli
