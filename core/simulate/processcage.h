// SPDX-License-Identifier: MIT
#pragma once

#include <string>
#include <sys/types.h>

namespace stagecraft {

/// Ties the lifetime of a child process and everything it starts to ours (the ASTRA-sim run of `simulate`).
///
/// Three layers, each covering what the one before misses:
///   1. the child leads its own process group, which killAll() signals;
///   2. the child gets PR_SET_PDEATHSIG(SIGKILL): if the thread that started it ends (stagecraft killed with
///      SIGKILL, the OOM killer), the kernel kills the child;
///   3. where a cgroup v2 folder can be made under our own cgroup (root, or a delegated cgroup), the child is put
///      into a cgroup of its own before exec; every process it starts stays in it, even one that calls setsid(2)
///      and so leaves the process group, and killAll() kills them all with cgroup.kill.
/// A watchdog process (forked, async-signal-safe only, holding no descriptor of ours but one pipe) waits for the
/// pipe to close: when we end without saying goodbye, it kills the cgroup, else the process group.
///
/// What remains possible: without a usable cgroup, a descendant that calls setsid and whose parent has died
/// escapes the group kill; a process that SIGKILLs both us and the watchdog leaves the run to itself.
class ProcessCage
{
public:
    /// Makes the cgroup when possible (hasCgroup()).
    ProcessCage();
    /// killAll(SIGKILL), removes the cgroup, dismisses the watchdog.
    ~ProcessCage();
    ProcessCage(const ProcessCage&) = delete;
    ProcessCage& operator=(const ProcessCage&) = delete;

    /// Called in the child between fork and exec (async-signal-safe calls only): its own process group, the
    /// parent-death signal, the cgroup. `parent` is the parent's pid before the fork: if it is already gone,
    /// the child exits.
    void enterFromChild(pid_t parent) const noexcept;
    /// Called in the parent after the fork: records the child's process group and starts the watchdog.
    void watch(pid_t child);
    /// Signals the process group and, with SIGKILL, kills the cgroup. Never throws.
    void killAll(int sig) noexcept;
    /// Whether the child runs in a cgroup of its own.
    bool hasCgroup() const
    {
        return !m_cgroup.empty();
    }

private:
    std::string m_cgroup; ///< the cgroup folder, empty without one
    std::string m_procsPath, m_killPath;
    pid_t m_group = -1;
    pid_t m_watchdog = -1;
    int m_watchPipe = -1; ///< write end; closed with a byte = goodbye, without = we died
};

} // namespace stagecraft
