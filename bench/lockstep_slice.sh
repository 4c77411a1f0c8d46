#!/usr/bin/env bash
# Lockstep groups against the run-by-run path (issue #21): a slice of sanford2023 E1 that
# draws from one task stream (qsa N = 32, q = 4, d' = 4; attention, m = 1, 2, 4, 8, 16, 32;
# one seed; E1's batch 256 and eval.n 2000; STEPS steps instead of 20 000, since a step
# costs the same at step 1 000 as at 20 000), timed grouped and with --no-groups by the same
# binary. Prints wall and CPU seconds (user + sys of the whole command) of each path and
# their ratios; CPU time is the robust figure on a loaded machine. Checks that both store
# the same values (every column of results.csv but the timings and memory).
# Benchmarks measure, they never pass or fail: the exit code only reports a broken run.
#
# Usage: bench/lockstep_slice.sh [--out DIR] [--steps STEPS] [--keep-blas-env]
#   --out DIR        keep the specs and result directories there (default: a temp dir)
#   --steps STEPS    training steps per run (default 1000)
#   --keep-blas-env  keep OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE; by default both are unset
#                    for every timed command (only there), so all use the autodetected kernel
# Needs: build/attnlab. Takes about 4 minutes on one core at the default steps.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ATTNLAB=${ATTNLAB_BUILD:-$ROOT/build}/attnlab
out="" keep_env=0 steps=1000
while [[ $# -gt 0 ]]; do
  case $1 in
    --out) out=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --keep-blas-env) keep_env=1; shift ;;
    -h|--help) awk 'NR > 1 && /^#/ { print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "lockstep_slice.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
[[ -x $ATTNLAB ]] || { echo "lockstep_slice.sh: $ATTNLAB not built" >&2; exit 2; }
[[ $steps =~ ^[1-9][0-9]*$ ]] || { echo "lockstep_slice.sh: --steps needs a positive whole number, not '$steps'" >&2; exit 2; }
if [[ -z $out ]]; then out=$(mktemp -d); fi
mkdir -p "$out"
envcmd=(env)
if [[ $keep_env == 0 ]]; then envcmd=(env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE); fi

cat > "$out/slice.toml" <<SPEC
[experiment]
name = "lockstep_slice"
seeds = 1
[task]
name = "qsa"
N = 32
q = 4
d_out = 4
[model]
name = "attention"
heads = 1
[train]
n = 0
steps = $steps
batch = 256
lr = 1e-3
eval_every = 1000
[eval]
n = 2000
[sweep]
"model.m" = [1, 2, 4, 8, 16, 32]
SPEC

timed() {  # $1: label, $2: dir, rest: extra flags; prints "label wall cpu"
  local label=$1 dir=$2; shift 2
  rm -rf "$dir"
  local t0 t1
  t0=$(date +%s.%N)
  "${envcmd[@]}" /usr/bin/time -f "%U %S" -o "$dir.time" "$ATTNLAB" run "$out/slice.toml" "${@}" \
    --out "$dir" --jobs 1 -q >/dev/null
  t1=$(date +%s.%N)
  echo "$label $(echo "$t1 - $t0" | bc) $(awk '{ print $1 + $2 }' "$dir.time")"
}

echo "attnlab $("$ATTNLAB" --version 2>/dev/null | head -1); load $(cut -d' ' -f1-3 /proc/loadavg)"
single=$(timed no_groups "$out/r_single" --no-groups)
grouped=$(timed grouped "$out/r_grouped")
read -r _ w_single c_single <<<"$single"
printf "%-10s %9s %9s %10s %10s\n" what wall_s cpu_s wall_ratio cpu_ratio
for line in "$single" "$grouped"; do
  read -r label w c <<<"$line"
  printf "%-10s %9.1f %9.1f %10.2f %10.2f\n" "$label" "$w" "$c" \
    "$(echo "$w / $w_single" | bc -l)" "$(echo "$c / $c_single" | bc -l)"
done
# Both paths store the same values: results.csv without its timing and memory columns.
strip() {
  awk -F, 'NR == 1 { for (i = 1; i <= NF; ++i) skip[i] = ($i ~ /seconds|peak_rss/) }
           { s = ""; for (i = 1; i <= NF; ++i) if (!skip[i]) s = s $i ","; print s }' "$1" | sort
}
if cmp -s <(strip "$out/r_grouped/results.csv") <(strip "$out/r_single/results.csv"); then
  echo "same stored values in both paths (all results.csv columns but timings and memory)"
else
  echo "stored values differ between the paths" >&2
  exit 1
fi
