#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs README.md's command-line examples as a reader would after `packaging/dev run`, so that they cannot drift:
# the five-minute tour's block, the STAGE-compatible example and the Slurm shard (as array task 0), verbatim, one
# after the other in one shell, from an empty working folder with TMPDIR pointing into this test's own temporary
# folder. The tour's `B=...` line is the one line replaced: B names the programs under test. The other blocks call
# plain `stagecraft`, found on PATH as after `cmake --install`. Fails when a command fails, and when the commands
# leave anything in the working folder (the README promises to write only into `mktemp -d` folders).
# The tour writes about 540 MB; the test removes everything it wrote when it ends.
#
# Usage: readme_commands.sh BIN_DIR README.md     (CTest: readme_commands)
set -euo pipefail

bin=$(cd "$1" && pwd)
readme=$2
[[ -x "$bin/stagecraft" ]] || { echo "readme_commands: no stagecraft in $bin" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/cwd" "$work/tmp" "$work/slurm"

# The lines of the first ```sh block after the first line that starts with $1.
block() {
    awk -v start="$1" '
        !found && index($0, start) == 1 { found = 1; next }
        found && !inside && /^```sh$/ { inside = 1; next }
        inside && /^```$/ { exit }
        inside { print }' "$readme"
}

tour=$(block 'The same from the command line.')
stage=$(block '## STAGE-compatible command line')
slurm=$(block '### Splitting a large export across machines')
for name in tour stage slurm; do
    [[ -n "${!name}" ]] || { echo "readme_commands: the $name block is not in $readme" >&2; exit 1; }
done
[[ $(grep -c '^B=' <<<"$tour") == 1 ]] || { echo "readme_commands: the tour must set B once" >&2; exit 1; }
[[ $(grep -c '^\$B/stagecraft ' <<<"$tour") -ge 8 ]] || { echo "readme_commands: the tour lost its commands" >&2; exit 1; }

script="$work/readme.sh"
{
    echo 'set -euo pipefail -x'
    sed "s|^B=.*|B=$(printf '%q' "$bin")|" <<<"$tour"
    echo "$stage"
    echo "SLURM_ARRAY_TASK_ID=0 SLURM_SUBMIT_DIR=$(printf '%q' "$work/slurm")"
    echo "$slurm"
} >"$script"

cd "$work/cwd"
if ! TMPDIR="$work/tmp" PATH="$bin:$PATH" bash "$script" >"$work/log" 2>&1; then
    tail -n 40 "$work/log" >&2
    echo "readme_commands: a README command failed (the commands ran from $script)" >&2
    exit 1
fi
if [[ -n "$(ls -A "$work/cwd")" ]]; then
    echo "readme_commands: the README commands wrote into the working folder:" >&2
    ls -A "$work/cwd" >&2
    exit 1
fi
# What the commands were meant to write is there.
for f in "$work"/tmp/tmp.*/traces/llama3-70b.1023.et "$work"/tmp/tmp.*/step.json \
    "$work"/tmp/tmp.*/stage/workload.json "$work/slurm/traces/llama3-70b.127.et"; do
    [[ -s "$f" ]] || { echo "readme_commands: $f was not written" >&2; exit 1; }
done
echo "readme_commands: $(grep -c '^+ ' "$work/log") commands of README.md ran as written"
