// SPDX-License-Identifier: MIT
#include "simulate/processcage.h"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <fcntl.h>
#include <fstream>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace stagecraft {

namespace {

    std::atomic<unsigned> s_counter { 0 };

    /// The folder of our own cgroup v2 ("0::/path" in /proc/self/cgroup, under the cgroup2 mount), or empty.
    std::string ownCgroupFolder()
    {
        std::ifstream cgroup("/proc/self/cgroup");
        std::string line, path;
        while (std::getline(cgroup, line))
            if (line.rfind("0::", 0) == 0)
                path = line.substr(3);
        if (path.empty())
            return {};
        // mountinfo: "id parent major:minor root mountpoint options - fstype source superoptions"
        std::ifstream mounts("/proc/self/mountinfo");
        while (std::getline(mounts, line)) {
            const size_t dash = line.find(" - cgroup2 ");
            if (dash == std::string::npos)
                continue;
            char root[4096] = {}, point[4096] = {};
            if (std::sscanf(line.c_str(), "%*s %*s %*s %4095s %4095s", root, point) != 2)
                continue;
            const std::string mountRoot = root;
            if (path.rfind(mountRoot, 0) != 0)
                continue;
            std::string rest = path.substr(mountRoot == "/" ? 0 : mountRoot.size());
            if (rest == "/")
                rest.clear();
            return std::string(point) + rest;
        }
        return {};
    }

    bool writeText(const std::string& path, const char* text)
    {
        const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
        if (fd < 0)
            return false;
        size_t n = 0;
        while (text[n])
            ++n;
        const bool ok = ::write(fd, text, n) == static_cast<ssize_t>(n);
        ::close(fd);
        return ok;
    }

} // namespace

ProcessCage::ProcessCage()
{
    const std::string own = ownCgroupFolder();
    if (own.empty())
        return;
    const std::string folder =
        own + "/stagecraft-run-" + std::to_string(::getpid()) + "-" + std::to_string(s_counter++);
    if (::mkdir(folder.c_str(), 0755) != 0)
        return; // not root and not delegated, read-only, cgroup v1 only: the other two layers remain
    // cgroup.kill arrived in Linux 5.14; without it the cgroup is not worth having.
    if (::access((folder + "/cgroup.kill").c_str(), W_OK) != 0) {
        ::rmdir(folder.c_str());
        return;
    }
    m_cgroup = folder;
    m_procsPath = folder + "/cgroup.procs";
    m_killPath = folder + "/cgroup.kill";
}

ProcessCage::~ProcessCage()
{
    killAll(SIGKILL);
    if (m_watchPipe >= 0) {
        const char bye = 'x';
        [[maybe_unused]] const ssize_t ignored = ::write(m_watchPipe, &bye, 1);
        ::close(m_watchPipe);
    }
    if (m_watchdog > 0) {
        int status = 0;
        while (::waitpid(m_watchdog, &status, 0) < 0 && errno == EINTR) { }
    }
    if (!m_cgroup.empty()) {
        // The cgroup can go once the kernel has taken its last process out (a moment after cgroup.kill).
        for (int attempt = 0; attempt < 200 && ::rmdir(m_cgroup.c_str()) != 0 && errno == EBUSY; ++attempt)
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
}

void ProcessCage::enterFromChild(pid_t parent) const noexcept
{
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent)
        ::_exit(127); // the parent died before the death signal was armed
    if (!m_procsPath.empty()) {
        // "0" moves the writing process (cgroup v2): before exec, so every process it starts is inside.
        const int fd = ::open(m_procsPath.c_str(), O_WRONLY | O_CLOEXEC);
        if (fd >= 0) {
            [[maybe_unused]] const ssize_t ignored = ::write(fd, "0", 1);
            ::close(fd);
        }
    }
}

void ProcessCage::watch(pid_t child)
{
    m_group = child;
    ::setpgid(child, child); // also in the parent: no window in which a kill of the group misses the child
    int fds[2] = { -1, -1 };
    if (::pipe2(fds, O_CLOEXEC) != 0)
        return;
    // Everything the watchdog needs, prepared before the fork.
    const std::string killPath = m_killPath, folder = m_cgroup;
    const char* killFile = killPath.empty() ? nullptr : killPath.c_str();
    const char* cgroup = folder.c_str();
    const pid_t group = child;
    const pid_t pid = ::fork();
    if (pid < 0) {
        ::close(fds[0]);
        ::close(fds[1]);
        return;
    }
    if (pid == 0) {
        // The watchdog: async-signal-safe calls only. It survives what ends us (signals to our terminal's group
        // are ignored) and holds no descriptor of ours (a copy would keep a folder lock or a pipe alive).
        ::signal(SIGINT, SIG_IGN);
        ::signal(SIGHUP, SIG_IGN);
        ::signal(SIGTERM, SIG_IGN);
        ::signal(SIGQUIT, SIG_IGN);
        if (::dup2(fds[0], 3) < 0)
            ::_exit(1);
        ::syscall(SYS_close_range, 4u, ~0u, 0u);
        char byte = 0;
        ssize_t n = 0;
        do
            n = ::read(3, &byte, 1);
        while (n < 0 && errno == EINTR);
        if (n == 1)
            ::_exit(0); // goodbye: the parent cleaned up itself
        // The parent is gone without a word: end the run.
        if (killFile) {
            const int fd = ::open(killFile, O_WRONLY);
            if (fd >= 0) {
                [[maybe_unused]] const ssize_t ignored = ::write(fd, "1", 1);
                ::close(fd);
            }
        }
        ::kill(-group, SIGKILL);
        if (killFile) {
            // The folder goes once the kernel has taken its last process out.
            const struct timespec delay
            {
                0, 5'000'000
            };
            for (int attempt = 0; attempt < 400 && ::rmdir(cgroup) != 0 && errno == EBUSY; ++attempt)
                ::nanosleep(&delay, nullptr);
        }
        ::_exit(0);
    }
    ::close(fds[0]);
    m_watchPipe = fds[1];
    m_watchdog = pid;
}

void ProcessCage::killAll(int sig) noexcept
{
    if (m_group > 0)
        ::kill(-m_group, sig);
    if (sig == SIGKILL && !m_killPath.empty())
        writeText(m_killPath, "1");
}

} // namespace stagecraft
