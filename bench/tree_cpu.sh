#!/usr/bin/env bash
# CPU seconds (user + system) of a process and all its live descendants, their reaped children
# included (utime + stime + cutime + cstime of each, from /proc/PID/stat), printed as
# "UNIX_TIME UTC_TIME CPU_SECONDS" every INTERVAL seconds until the process exits. For a run that
# will be stopped by a signal: /usr/bin/time's record of such a run lacks its workers' CPU (they
# die unreaped), so the last sample before the stop is the segment's CPU time
# (docs/results/sanford2023/RUN.md). Reads /proc only: no load on the machine.
# Usage: bench/tree_cpu.sh PID [INTERVAL] >> FILE      (INTERVAL in seconds, default 60)
set -euo pipefail
root=${1:?usage: bench/tree_cpu.sh PID [INTERVAL]}
interval=${2:-60}
[[ $root =~ ^[0-9]+$ && $interval =~ ^[0-9]+$ && $interval -ge 1 ]] ||
  { echo "tree_cpu.sh: PID and INTERVAL must be whole numbers (see the header)" >&2; exit 2; }
[[ -r /proc/$root/stat ]] || { echo "tree_cpu.sh: no process $root" >&2; exit 2; }
tick=$(getconf CLK_TCK)
while [[ -r /proc/$root/stat ]]; do
  # Each stat line: "pid (comm) state ppid ... utime stime cutime cstime ..."; comm may hold
  # spaces, so the fields are counted after its closing parenthesis.
  # A process that exits between the glob and cat's read makes cat fail: not an error here
  # (before, pipefail then stopped the sampler at the first short-lived process).
  total=$({ cat /proc/[0-9]*/stat 2>/dev/null || true; } | awk -v root="$root" -v tick="$tick" '
    { pid = $1; rest = substr($0, index($0, ") ") + 2); split(rest, f, " ")
      parent[pid] = f[2]; cpu[pid] = f[12] + f[13] + f[14] + f[15] }
    END {
      sum = 0
      for (p in cpu) {  # p is in the tree when root is among its ancestors (or p is root)
        q = p
        while (q != "" && q != root && q != 0 && q != 1) q = parent[q]
        if (q == root) sum += cpu[p]
      }
      printf "%.2f", sum / tick
    }')
  printf '%s %s %s\n' "$(date -u +%s)" "$(date -u +%T)" "$total"
  sleep "$interval"
done
