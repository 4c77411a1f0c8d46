#!/usr/bin/env bash
# A whole reproduction group timed end to end (issue #21): `attnlab reproduce GROUP -j JOBS`
# under /usr/bin/time -v, grouped (the default) and, with --compare, again run by run
# (--no-groups) by the same binary into a second directory. Prints per side the wall time,
# the CPU time, the peak memory of the largest process, the OpenBLAS kernel set the report
# recorded, and when each experiment finished (from the timestamped log); with --compare, the
# ratio of the two sides and whether they stored the same runs with the same statuses.
# Benchmarks measure, they never pass or fail: the exit code only reports a broken run.
#
# Usage: bench/full_reproduction.sh GROUP [--quick] [--compare] [--jobs N] [--out DIR]
#                                   [--keep-blas-env]
#   GROUP            a folder of experiments/ (fu2023, sanford2023, constructions, demo)
#   --quick          each spec's [quick] overrides (minutes, not hours)
#   --compare        also time the run-by-run path (--no-groups): at full size this costs
#                    several times the grouped run (docs/performance.md)
#   --jobs N         runs at once (default 2)
#   --out DIR        where the runs go (default a temp dir). A DIR holding part of a run is
#                    resumed: the times printed then cover only what this call ran
#                    (each experiment's line says how many runs were already done)
#   --keep-blas-env  keep OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE; by default both are unset
#                    for the timed commands (only there), so OpenBLAS picks its kernel itself
# Writes DIR/SIDE.log (each output line after its Unix time and UTC time of day) and DIR/SIDE.time
# (/usr/bin/time -v), SIDE = grouped or no_groups. A resumed call appends to both, so every
# segment's record is kept: the log gets a `=== segment` line at each call's start, SIDE.time one
# record per call (a segment stopped by a signal leaves a record of its wall time only).
# Needs build/attnlab (ATTNLAB_BUILD to use another build folder) and /usr/bin/time.
set -euo pipefail
shopt -s inherit_errexit  # a failing command inside $(...) stops the script too

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ATTNLAB=${ATTNLAB_BUILD:-$ROOT/build}/attnlab
group="" quick=() compare=0 jobs=2 out="" keep_env=0
while [[ $# -gt 0 ]]; do
  case $1 in
    --quick) quick=(--quick); shift ;;
    --compare) compare=1; shift ;;
    --jobs) jobs=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --keep-blas-env) keep_env=1; shift ;;
    -h|--help) awk 'NR > 1 && /^#/ { print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    -*) echo "full_reproduction.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) [[ -z $group ]] || { echo "full_reproduction.sh: one GROUP only (see --help)" >&2; exit 2; }
       group=$1; shift ;;
  esac
done
[[ -n $group ]] || { echo "full_reproduction.sh: name a GROUP (see --help)" >&2; exit 2; }
[[ $jobs =~ ^[1-9][0-9]*$ ]] || { echo "full_reproduction.sh: --jobs wants a whole number >= 1" >&2; exit 2; }
[[ -x $ATTNLAB ]] || { echo "full_reproduction.sh: $ATTNLAB not built" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "full_reproduction.sh: /usr/bin/time is missing (apt install time)" >&2; exit 2; }
if [[ -z $out ]]; then out=$(mktemp -d); fi
mkdir -p "$out"
envcmd=(env)
if [[ $keep_env == 0 ]]; then envcmd=(env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE); fi

source "$ROOT/scripts/time-record.sh"
field() {  # $1: time file, $2: label of a /usr/bin/time -v line; prints the last record's value
  time_values "$1" "$2" | tail -1
}
side() {  # $1: grouped | no_groups; rest: extra flags. Prints "label wall_s cpu_s peak_gib core"
  local label=$1; shift
  local dir=$out/$label
  # This call's record goes to its own file first (the checks below read only it), then is
  # appended to SIDE.time, which keeps the records of earlier segments of a resumed run.
  local record=$out/$label.time.segment
  printf '%s %s === segment: %s%s -j %s (%s) ===\n' "$(date -u +%s)" "$(date -u +%T)" \
    "$group" "${quick[*]:+ --quick}" "$jobs" "$("$ATTNLAB" --version 2>/dev/null | head -1)" \
    >> "$out/$label.log"
  "${envcmd[@]}" /usr/bin/time -v -o "$record" \
    "$ATTNLAB" reproduce "$group" "${quick[@]}" -j "$jobs" -o "$dir" "$@" 2>&1 |
    while IFS= read -r line; do printf '%s %s %s\n' "$(date -u +%s)" "$(date -u +%T)" "$line"; done \
      >> "$out/$label.log" || true
  cat "$record" >> "$out/$label.time"
  # Exit 1 or 3 (claims failing or undecided) is a finished run, still timed; 2 or a signal is
  # not (GNU time then writes "Command terminated by signal N" and "Exit status: 0").
  if grep -q 'Command terminated by signal' "$record"; then
    echo "full_reproduction.sh: reproduce was killed: $(grep 'terminated by signal' "$record")" >&2
    exit 1
  fi
  local status
  status=$(field "$record" 'Exit status')
  [[ $status == 0 || $status == 1 || $status == 3 ]] ||
    { echo "full_reproduction.sh: reproduce exited with $status ($out/$label.log)" >&2; exit 1; }
  [[ -f $dir/report.md ]] || { echo "full_reproduction.sh: no report in $dir ($out/$label.log)" >&2; exit 1; }
  local wall cpu peak core
  wall=$(field "$record" 'Elapsed (wall clock) time' | time_seconds)
  cpu=$(awk -v u="$(field "$record" 'User time (seconds)')" \
            -v s="$(field "$record" 'System time (seconds)')" 'BEGIN { printf "%.1f", u + s }')
  peak=$(time_kib_gib "$(field "$record" 'Maximum resident set size (kbytes)')")
  rm -f "$record"
  core=$(grep -o -m1 'OpenBLAS core [A-Za-z0-9_]*' "$dir/report.md" | sed 's/OpenBLAS core //' || true)
  echo "$label $wall $cpu $peak ${core:-unrecorded}"
}
per_experiment() {  # $1: log; when each experiment's last run was stored, from the start of
  # the last segment (experiments overlap: a worker freed by one starts the next one's runs)
  awk '/^[0-9]+ [0-9:]+ === segment: / { start = $1; n = 0; next }
       NR == 1 { start = $1 }
       / runs: .* already done$/ { line = $0; sub(/^[^ ]+ [^ ]+ /, "", line)
                                   out[++n] = sprintf("  done at %7d s  %s", $1 - start, line) }
       END { for (i = 1; i <= n; ++i) print out[i] }' "$1"
}

echo "$("$ATTNLAB" --version 2>/dev/null | head -1); $group${quick:+ --quick}, -j $jobs;" \
     "$(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg); BLAS env $([[ $keep_env == 1 ]] && echo kept || echo unset)"
grouped=$(side grouped)
lines=("$grouped")
if [[ $compare == 1 ]]; then lines+=("$(side no_groups --no-groups)"); fi
t_grouped=$(cut -d' ' -f2 <<<"$grouped")
c_grouped=$(cut -d' ' -f3 <<<"$grouped")
printf "%-10s %10s %10s %11s %10s %10s  %s\n" side wall_s cpu_s cpu/grouped peak_GiB core_h openblas
for line in "${lines[@]}"; do
  read -r label wall cpu peak core <<<"$line"
  printf "%-10s %10.1f %10.1f %11.2f %10s %10.2f  %s\n" "$label" "$wall" "$cpu" \
    "$(echo "$cpu / $c_grouped" | bc -l)" "$peak" "$(echo "$cpu / 3600" | bc -l)" "$core"
  per_experiment "$out/$label.log"
done
if [[ $compare == 1 ]]; then
  printf "wall time, run by run / grouped: %.3f\n" "$(echo "$(cut -d' ' -f2 <<<"${lines[1]}") / $t_grouped" | bc -l)"
  same=1
  for csv in "$out"/grouped/*/results.csv; do
    name=$(basename "$(dirname "$csv")")
    cmp -s <(cut -d, -f1-3 "$csv" | sort) <(cut -d, -f1-3 "$out/no_groups/$name/results.csv" | sort) || {
      echo "$name: run ids or statuses differ between the sides" >&2; same=0; }
  done
  [[ $same == 1 ]] || exit 1
  echo "same run ids and statuses on both sides"
fi
echo "logs and /usr/bin/time records in $out"
