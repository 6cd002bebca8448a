// SPDX-License-Identifier: MIT
#include "simulate/astrasimrunner.h"

#include "chakra/chakrareader.h"
#include "export/atomictextfile.h"
#include "simulate/processcage.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace stagecraft {

namespace fs = std::filesystem;

namespace {

    constexpr auto kPollInterval = std::chrono::milliseconds(20);
    constexpr auto kTermGrace = std::chrono::seconds(2);

    std::atomic<unsigned> s_tempCounter { 0 };

    std::string quoted(const fs::path& p)
    {
        return "'" + p.string() + "'";
    }

    std::string systemError(const std::string& what, int err)
    {
        return what + ": " + std::strerror(err);
    }

    /// lstat() of `path`: 0 when it does not exist, else its st_mode; -1 with `error` on another failure.
    int64_t modeOf(const fs::path& path, std::string& error)
    {
        struct stat st
        {
        };
        if (::lstat(path.c_str(), &st) == 0)
            return static_cast<int64_t>(st.st_mode);
        if (errno == ENOENT)
            return 0;
        error = systemError("cannot inspect " + quoted(path), errno);
        return -1;
    }

    /// A temporary file next to `final` (".<name>.tmp-<pid>-<n>"), created exclusively. -1 with `error`.
    int createTemporary(const fs::path& final, mode_t mode, fs::path& tmp, std::string& error)
    {
        const std::string base = "." + final.filename().string() + ".tmp-" + std::to_string(::getpid()) + "-";
        for (int attempt = 0; attempt < 100; ++attempt) {
            tmp = final.parent_path() / (base + std::to_string(s_tempCounter++));
            const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
            if (fd >= 0)
                return fd;
            if (errno != EEXIST) {
                error = systemError("cannot create a temporary file for " + quoted(final), errno);
                return -1;
            }
        }
        error = "cannot create a temporary file for " + quoted(final) + ": too many stale temporary files";
        return -1;
    }

    /// Refuses to replace anything but a regular file at `final`.
    bool replaceable(const fs::path& final, std::string& error)
    {
        const int64_t mode = modeOf(final, error);
        if (mode < 0)
            return false;
        if (mode != 0 && !S_ISREG(static_cast<mode_t>(mode))) {
            error = "refusing to replace " + quoted(final) + ": it is not a regular file"
                + (S_ISLNK(static_cast<mode_t>(mode)) ? " (a symbolic link)" : "");
            return false;
        }
        return true;
    }

    std::string shellQuoted(const std::string& s)
    {
        std::string out = "'";
        for (char c : s)
            out += c == '\'' ? std::string("'\\''") : std::string(1, c);
        return out + "'";
    }

    /// Counts `sys[R] finished, ` lines in the growing stdout file, from a read descriptor of its own.
    class FinishCounter
    {
    public:
        explicit FinishCounter(const fs::path& path)
            : m_fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC))
        {
        }
        ~FinishCounter()
        {
            if (m_fd >= 0)
                ::close(m_fd);
        }
        FinishCounter(const FinishCounter&) = delete;
        FinishCounter& operator=(const FinishCounter&) = delete;

        int64_t poll()
        {
            if (m_fd < 0)
                return m_count;
            char buffer[65536];
            for (;;) {
                const ssize_t n = ::read(m_fd, buffer, sizeof buffer);
                if (n <= 0)
                    break;
                // Each byte is looked at once; a line is kept up to kMaxLineBytes (the rest is skipped), so a
                // 300 MB line without a newline costs neither time nor memory.
                std::string_view chunk(buffer, static_cast<size_t>(n));
                while (!chunk.empty()) {
                    const size_t nl = chunk.find('\n');
                    const std::string_view piece = chunk.substr(0, nl);
                    if (m_partial.size() < kMaxLineBytes)
                        m_partial.append(piece.substr(0, kMaxLineBytes - m_partial.size()));
                    if (nl == std::string_view::npos)
                        break;
                    if (m_partial.find("sys[") != std::string::npos
                        && m_partial.find("] finished, ") != std::string::npos)
                        ++m_count;
                    m_partial.clear();
                    chunk.remove_prefix(nl + 1);
                }
            }
            return m_count;
        }

    private:
        int m_fd;
        std::string m_partial;
        int64_t m_count = 0;
    };

    /// The run's stdout and stderr: temporary files while it runs, renamed when it ends.
    struct CapturedFile
    {
        fs::path final;
        fs::path tmp;
        int fd = -1;

        ~CapturedFile()
        {
            if (fd >= 0)
                ::close(fd);
            if (!tmp.empty())
                ::unlink(tmp.c_str());
        }

        bool open(const fs::path& path, std::string& error)
        {
            final = path;
            if (!replaceable(final, error))
                return false;
            fd = createTemporary(final, 0666, tmp, error);
            return fd >= 0;
        }

        bool commit(std::string& error)
        {
            if (fd >= 0 && ::close(fd) != 0) {
                fd = -1;
                error = systemError("cannot write " + quoted(tmp), errno);
                return false;
            }
            fd = -1;
            if (::rename(tmp.c_str(), final.c_str()) != 0) {
                error = systemError("cannot rename " + quoted(tmp) + " to " + quoted(final), errno);
                return false;
            }
            tmp.clear();
            return true;
        }
    };

    /// Stops at the first compute node and notes whether it lists its tensors.
    class TensorListProbe final : public ChakraTraceVisitor
    {
    public:
        bool onNode(ChakraNode&& node, const ChakraRecordInfo&) override
        {
            if (node.type != ChakraNodeType::Comp)
                return true;
            for (const ChakraAttribute& a : node.attrs)
                found = found || a.name == "inputs" || a.name == "outputs";
            return false;
        }
        bool found = false;
    };

    AstraSimResult badInput(AstraSimResult r, std::string reason)
    {
        r.status = AstraSimStatus::BadInput;
        r.passed = false;
        r.reason = std::move(reason);
        return r;
    }

} // namespace

const char* toString(AstraSimStatus status)
{
    switch (status) {
    case AstraSimStatus::Passed:
        return "passed";
    case AstraSimStatus::Failed:
        return "failed";
    case AstraSimStatus::BadInput:
        return "bad input";
    case AstraSimStatus::Cancelled:
        return "cancelled";
    }
    return "?";
}

std::optional<TraceSet> findTraceSet(const fs::path& directory, const std::string& name, std::string& error)
{
    std::error_code ec;
    if (!fs::is_directory(directory, ec)) {
        error = "'" + directory.string() + "' is not a folder";
        return std::nullopt;
    }
    // name -> rank numbers of its <name>.<rank>.et files
    std::map<std::string, std::vector<int64_t>> sets;
    for (fs::directory_iterator it(directory, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string file = it->path().filename().string();
        if (file.size() < 4 || file.compare(file.size() - 3, 3, ".et") != 0)
            continue;
        const std::string stem = file.substr(0, file.size() - 3);
        const size_t dot = stem.rfind('.');
        if (dot == std::string::npos || dot == 0 || dot + 1 == stem.size())
            continue;
        const std::string digits = stem.substr(dot + 1);
        if (digits.size() > 9 || !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })
            || (digits.size() > 1 && digits[0] == '0'))
            continue;
        const std::string setName = stem.substr(0, dot);
        if (!name.empty() && setName != name)
            continue;
        sets[setName].push_back(std::stoll(digits));
    }
    if (ec) {
        error = "cannot read folder '" + directory.string() + "': " + ec.message();
        return std::nullopt;
    }
    if (sets.empty()) {
        error = name.empty() ? "'" + directory.string() + "' holds no trace set (<name>.<rank>.et files)"
                             : "'" + directory.string() + "' holds no trace files " + name + ".<rank>.et";
        return std::nullopt;
    }
    if (sets.size() > 1) {
        std::string names;
        for (const auto& [n, ranks] : sets)
            names += (names.empty() ? "" : ", ") + n;
        error = "'" + directory.string() + "' holds several trace sets (" + names + "); choose one with --name";
        return std::nullopt;
    }
    auto& [setName, ranks] = *sets.begin();
    std::sort(ranks.begin(), ranks.end());
    for (size_t i = 0; i < ranks.size(); ++i) {
        if (ranks[i] != static_cast<int64_t>(i)) {
            error = "trace set '" + setName + "' in '" + directory.string()
                + "' is incomplete: " + std::to_string(ranks.size()) + " rank files, but rank " + std::to_string(i)
                + " is missing (a --ranks export not finished?)";
            return std::nullopt;
        }
    }
    TraceSet t;
    t.directory = fs::absolute(directory, ec).lexically_normal();
    if (ec)
        t.directory = directory;
    if (!t.directory.has_filename() && t.directory.has_parent_path())
        t.directory = t.directory.parent_path();
    t.name = setName;
    t.ranks = static_cast<int64_t>(ranks.size());
    if (fs::is_regular_file(t.directory / (setName + ".json"), ec))
        t.groupsPath = t.directory / (setName + ".json");
    if (fs::is_regular_file(t.directory / (setName + ".yaml"), ec))
        t.configPath = t.directory / (setName + ".yaml");
    return t;
}

bool traceHasTensorLists(const fs::path& rankFile, std::string& error)
{
    TensorListProbe probe;
    const ChakraReadStatus status = visitChakraFile(rankFile, probe);
    if (!status.ok()) {
        error = status.error;
        return false;
    }
    return probe.found;
}

std::optional<fs::path> resolveAstraSimBinary(const std::string& binary, std::string& error)
{
    if (binary.empty()) {
        error = "no ASTRA-sim binary given";
        return std::nullopt;
    }
    fs::path found;
    if (binary.find('/') == std::string::npos) {
        const char* path = std::getenv("PATH");
        std::string_view dirs = path ? path : "";
        while (found.empty() && !dirs.empty()) {
            const size_t colon = dirs.find(':');
            const std::string_view dir = dirs.substr(0, colon);
            dirs = colon == std::string_view::npos ? std::string_view() : dirs.substr(colon + 1);
            const fs::path candidate = fs::path(dir.empty() ? "." : std::string(dir)) / binary;
            if (::access(candidate.c_str(), X_OK) == 0)
                found = candidate;
        }
        if (found.empty()) {
            error = "ASTRA-sim binary '" + binary + "' not found in PATH";
            return std::nullopt;
        }
    } else {
        found = binary;
    }
    std::error_code ec;
    const fs::path absolute = fs::absolute(found, ec).lexically_normal();
    struct stat st
    {
    };
    if (::stat(absolute.c_str(), &st) != 0) {
        error = "ASTRA-sim binary '" + binary + "' not found";
        return std::nullopt;
    }
    if (!S_ISREG(st.st_mode) || ::access(absolute.c_str(), X_OK) != 0) {
        error = "ASTRA-sim binary '" + binary + "' is not an executable file";
        return std::nullopt;
    }
    return absolute;
}

std::string astraSimCommandScript(const AstraSimRunFiles& files)
{
    std::string script = "#!/bin/sh\n"
                         "# Repeats the ASTRA-sim run of `stagecraft simulate` with the configs of this folder; the\n"
                         "# simulator prints to the terminal (the recorded run is in stdout.txt and stderr.txt).\n";
    script += "cd " + shellQuoted(files.runDirectory.string()) + " || exit 2\nexec";
    for (const std::string& arg : files.command)
        script += " \\\n    " + shellQuoted(arg);
    return script + "\n";
}

std::optional<AstraSimRunFiles> writeAstraSimRunFiles(
    const TraceSet& traces, const AstraSimSetup& setup, const fs::path& binary, std::string& error)
{
    try {
        AstraSimRunFiles f;
        f.runDirectory = traces.directory / (traces.name + ".astrasim");
        const int64_t mode = modeOf(f.runDirectory, error);
        if (mode < 0)
            return std::nullopt;
        if (mode == 0) {
            if (::mkdir(f.runDirectory.c_str(), 0777) != 0 && errno != EEXIST) {
                error = systemError("cannot create the run folder " + quoted(f.runDirectory), errno);
                return std::nullopt;
            }
        } else if (!S_ISDIR(static_cast<mode_t>(mode))) {
            error = "refusing to use " + quoted(f.runDirectory) + " as the run folder: it is not a folder"
                + (S_ISLNK(static_cast<mode_t>(mode)) ? " (a symbolic link)" : "");
            return std::nullopt;
        }
        f.systemPath = f.runDirectory / "system.json";
        f.networkPath = f.runDirectory / "network.yml";
        f.memoryPath = f.runDirectory / "memory.json";
        f.commandPath = f.runDirectory / "cmd.sh";
        f.stdoutPath = f.runDirectory / "stdout.txt";
        f.stderrPath = f.runDirectory / "stderr.txt";
        f.logDirectory = f.runDirectory / "log";
        f.command = { binary.string(), "--workload-configuration=" + traces.prefix().string() };
        if (!traces.groupsPath.empty())
            f.command.push_back("--comm-group-configuration=" + traces.groupsPath.string());
        f.command.push_back("--system-configuration=" + f.systemPath.string());
        f.command.push_back("--remote-memory-configuration=" + f.memoryPath.string());
        f.command.push_back("--network-configuration=" + f.networkPath.string());
        f.command.push_back("--logging-folder=" + f.logDirectory.string());

        if (!writeTextFileAtomically(f.systemPath, astraSimSystemJson(setup), error)
            || !writeTextFileAtomically(f.networkPath, astraSimNetworkYaml(setup), error)
            || !writeTextFileAtomically(f.memoryPath, astraSimMemoryJson(), error)
            || !writeTextFileAtomically(f.commandPath, astraSimCommandScript(f), error, 0777))
            return std::nullopt;
        return f;
    } catch (const std::exception& e) {
        error = std::string("cannot write the run files: ") + e.what();
        return std::nullopt;
    }
}

AstraSimResult runAstraSim(
    const TraceSet& traces, const AstraSimSetup& setup, const AstraSimRunOptions& options, ProgressSink* progress)
{
    AstraSimResult r;
    r.npus = setup.npus;
    try {
        std::string error;
        const std::optional<fs::path> binary = resolveAstraSimBinary(options.binary, error);
        if (!binary)
            return badInput(std::move(r), error);
        if (traces.ranks != setup.npus)
            return badInput(std::move(r),
                "the trace set has " + std::to_string(traces.ranks) + " rank files but the config describes "
                    + std::to_string(setup.npus) + " ranks");
        if (setup.npus < 2)
            return badInput(std::move(r), "ASTRA-sim's analytical network needs at least 2 NPUs");
        if (setup.trackLocalMem) {
            const fs::path rank0 = traces.directory / (traces.name + ".0.et");
            if (!traceHasTensorLists(rank0, error))
                return badInput(std::move(r),
                    error.empty() ? "memory tracking needs traces with tensor lists (inputs/outputs): export them "
                                    "with --tensor-lists (or tick \"Tensor lists\" in the Export dialog)"
                                  : error);
        }
        if (!(options.timeoutS > 0))
            return badInput(std::move(r), "the time limit must be positive");
        // ASTRA-sim ignores a communicator-group file whose path contains "empty" (Workload::initialize_comm_groups
        // takes it for its "no file" default) and would then run every collective on the whole world.
        if (traces.groupsPath.string().find("empty") != std::string::npos)
            return badInput(std::move(r),
                "ASTRA-sim ignores a communicator-group file whose path contains \"empty\" ('"
                    + traces.groupsPath.string() + "'); move or rename the trace folder");
        std::optional<AstraSimRunFiles> files = writeAstraSimRunFiles(traces, setup, *binary, error);
        if (!files)
            return badInput(std::move(r), error);
        r.files = *files;

        CapturedFile out, err;
        if (!out.open(r.files.stdoutPath, error) || !err.open(r.files.stderrPath, error))
            return badInput(std::move(r), error);
        const int devNull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
        int execPipe[2] = { -1, -1 };
        if (devNull < 0 || ::pipe2(execPipe, O_CLOEXEC) != 0) {
            const int e = errno;
            if (devNull >= 0)
                ::close(devNull);
            return badInput(std::move(r), systemError("cannot prepare the simulator's process", e));
        }
        // Everything the child needs is built before fork(): between fork and exec only async-signal-safe calls.
        std::vector<char*> argv;
        for (std::string& arg : r.files.command)
            argv.push_back(arg.data());
        argv.push_back(nullptr);
        const std::string runDirectory = r.files.runDirectory.string();
        // The run's lifetime is tied to ours: process group, parent-death signal, a cgroup where one can be made,
        // and a watchdog for when we are killed outright (processcage.h).
        ProcessCage cage;
        const pid_t parent = ::getpid();
        const auto start = std::chrono::steady_clock::now();
        const pid_t pid = ::fork();
        if (pid < 0) {
            const int e = errno;
            ::close(devNull);
            ::close(execPipe[0]);
            ::close(execPipe[1]);
            return badInput(std::move(r), systemError("cannot start the simulator", e));
        }
        if (pid == 0) {
            cage.enterFromChild(parent);
            int failure = 0;
            if (::chdir(runDirectory.c_str()) != 0 || ::dup2(devNull, 0) < 0 || ::dup2(out.fd, 1) < 0
                || ::dup2(err.fd, 2) < 0)
                failure = errno;
            if (failure == 0) {
                ::execv(argv[0], argv.data());
                failure = errno;
            }
            [[maybe_unused]] const ssize_t ignored = ::write(execPipe[1], &failure, sizeof failure);
            ::_exit(127);
        }
        cage.watch(pid);
        ::close(devNull);
        ::close(execPipe[1]);
        int execError = 0;
        ssize_t got = 0;
        do
            got = ::read(execPipe[0], &execError, sizeof execError);
        while (got < 0 && errno == EINTR);
        ::close(execPipe[0]);

        FinishCounter counter(out.tmp);
        int status = 0;
        bool timedOut = false, cancelled = false, exited = false;
        std::optional<std::chrono::steady_clock::time_point> termSent;
        const auto deadline = start + std::chrono::duration<double>(options.timeoutS);
        int64_t lastFinished = -1;
        while (!exited) {
            const pid_t w = ::waitpid(pid, &status, WNOHANG);
            if (w == pid) {
                exited = true;
                break;
            }
            if (w < 0 && errno != EINTR) {
                exited = true; // reaped elsewhere; nothing left to wait for
                status = 0;
                break;
            }
            const auto now = std::chrono::steady_clock::now();
            if (!termSent) {
                if (progress && progress->cancelled())
                    cancelled = true;
                else if (now >= deadline)
                    timedOut = true;
                if (cancelled || timedOut) {
                    cage.killAll(SIGTERM);
                    termSent = now;
                }
            } else if (now - *termSent >= kTermGrace) {
                cage.killAll(SIGKILL);
            }
            if (progress && execError == 0) {
                const int64_t finished = std::min(counter.poll(), setup.npus);
                if (finished != lastFinished) {
                    lastFinished = finished;
                    progress->report(static_cast<double>(finished) / static_cast<double>(setup.npus), "simulating");
                }
            }
            std::this_thread::sleep_for(kPollInterval);
        }
        // Anything the simulator left behind (in its group, in its cgroup) ends with it.
        cage.killAll(SIGKILL);
        r.wallS = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (!out.commit(error) || !err.commit(error))
            return badInput(std::move(r), error);
        if (execError != 0)
            return badInput(std::move(r), systemError("cannot run '" + binary->string() + "'", execError));
        if (cancelled) {
            r.status = AstraSimStatus::Cancelled;
            r.reason = "cancelled";
            return r;
        }

        // Read as streams with a cap on what is kept: the output may be any size (astrasimoutput.h).
        AstraSimOutput output = parseAstraSimOutputFile(r.files.stdoutPath.string());
        const AstraSimOutput errors = parseAstraSimOutputFile(r.files.stderrPath.string());
        for (const std::string& line : errors.errorLines)
            if (output.errorLines.size() < kMaxKeptErrorLines)
                output.errorLines.push_back(line);
        output.errorLineCount += errors.errorLineCount;
        if (!errors.tailLines.empty())
            output.tailLines.insert(output.tailLines.end(), errors.tailLines.begin(), errors.tailLines.end());
        AstraSimExit exit;
        exit.timedOut = timedOut;
        exit.timeoutS = options.timeoutS;
        if (WIFSIGNALED(status)) {
            exit.signalled = !timedOut;
            exit.signal = WTERMSIG(status);
        } else if (WIFEXITED(status)) {
            exit.exitCode = WEXITSTATUS(status);
        }
        const AstraSimVerdict verdict = judgeAstraSimRun(output, exit, setup.npus, setup.trackLocalMem);
        r.passed = verdict.passed;
        r.status = verdict.passed ? AstraSimStatus::Passed : AstraSimStatus::Failed;
        r.reason = verdict.reason;
        r.relevantLines = verdict.relevantLines;
        std::map<int64_t, AstraSimRankResult> ranks;
        for (const AstraSimFinishLine& f : output.finished) {
            if (f.rank < 0 || f.rank >= setup.npus || ranks.count(f.rank))
                continue;
            AstraSimRankResult rank;
            rank.rank = f.rank;
            rank.finishNs = static_cast<double>(f.finishCycles);
            rank.exposedCommunicationNs = static_cast<double>(f.exposedCycles);
            if (const auto m = output.peakMemoryBytes.find(f.rank); m != output.peakMemoryBytes.end())
                rank.peakMemoryBytes = m->second;
            ranks.emplace(f.rank, rank);
        }
        for (auto& [rank, value] : ranks)
            r.ranks.push_back(value);
        return r;
    } catch (const std::exception& e) {
        return badInput(std::move(r), std::string("internal error while running ASTRA-sim: ") + e.what());
    }
}

} // namespace stagecraft
