#!/usr/bin/env bash
# Run groups against the run-by-run path (issue #21): the 24-run slice of fu2023 E1 that
# shares its inputs (rf_target d = 8, N = 8; rfa, 512 heads; train.n = 1024, 2048, 4096,
# 8192 × the 6 target/p pairs of E1; one seed; E1's eval.n = 10000 and [train] defaults),
# timed grouped and with --no-groups by the same binary, and one run at the largest n.
# Prints wall times, the ratio of each slice to the one run, and the peak memory of a run
# (the largest peak_rss_mb in results.csv; a group's worker holds the whole group).
# Benchmarks measure, they never pass or fail: the exit code only reports a broken run.
#
# Usage: bench/run_groups_slice.sh [--out DIR] [--keep-blas-env]
#   --out DIR        keep the specs and result directories there (default: a temp dir)
#   --keep-blas-env  keep OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE; by default both are unset
#                    for every timed command (only there), so all use the autodetected kernel
# Needs: build/attnlab. Takes about 8 minutes on one core.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ATTNLAB=${ATTNLAB_BUILD:-$ROOT/build}/attnlab
out="" keep_env=0
while [[ $# -gt 0 ]]; do
  case $1 in
    --out) out=$2; shift 2 ;;
    --keep-blas-env) keep_env=1; shift ;;
    -h|--help) awk 'NR > 1 && /^#/ { print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "run_groups_slice.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
[[ -x $ATTNLAB ]] || { echo "run_groups_slice.sh: $ATTNLAB not built" >&2; exit 2; }
if [[ -z $out ]]; then out=$(mktemp -d); fi
mkdir -p "$out"
envcmd=(env)
if [[ $keep_env == 0 ]]; then envcmd=(env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE); fi

spec() {  # $1: file, $2: train.n list, $3: targets, $4: p values
  cat > "$1" <<SPEC
[experiment]
name = "groups_slice"
seeds = 1
[task]
name = "rf_target"
d = 8
N = 8
[model]
name = "rfa"
heads = 512
[eval]
n = 10000
[sweep]
"train.n" = $2
[[sweep.zip]]
"task.target" = $3
"task.p" = $4
SPEC
}
spec "$out/slice.toml" "[1024, 2048, 4096, 8192]" \
  '["pair_power", "pair_power", "pair_power", "pair_value", "keys_power", "query_power"]' \
  "[1, 2, 3, 2, 2, 2]"
spec "$out/one.toml" "[8192]" '["pair_power"]' "[1]"

peak_mb() {  # the largest peak_rss_mb of a results.csv
  awk -F, 'NR == 1 { for (i = 1; i <= NF; ++i) if ($i == "peak_rss_mb") c = i; next }
           c && $c > m { m = $c } END { printf "%.0f", m }' "$1/results.csv"
}
timed() {  # $1: label, $2: dir, rest: extra flags; prints "label seconds peak_mb"
  local label=$1 dir=$2; shift 2
  rm -rf "$dir"
  local t0 t1
  t0=$(date +%s.%N)
  "${envcmd[@]}" "$ATTNLAB" run "${@}" --out "$dir" --jobs 1 -q >/dev/null
  t1=$(date +%s.%N)
  echo "$label $(echo "$t1 - $t0" | bc) $(peak_mb "$dir")"
}

echo "attnlab $("$ATTNLAB" --version 2>/dev/null | head -1); load $(cut -d' ' -f1-3 /proc/loadavg)"
one=$(timed one "$out/r_one" "$out/one.toml")
grouped=$(timed grouped "$out/r_grouped" "$out/slice.toml")
single=$(timed no_groups "$out/r_single" "$out/slice.toml" --no-groups)
t_one=$(echo "$one" | cut -d' ' -f2)
printf "%-10s %9s %8s %9s\n" what seconds ratio peak_MB
for line in "$one" "$grouped" "$single"; do
  read -r label t mb <<<"$line"
  printf "%-10s %9.1f %8.2f %9s\n" "$label" "$t" "$(echo "$t / $t_one" | bc -l)" "$mb"
done
# The two slices store the same values (every metric but fit_seconds, bit for bit).
if cmp -s <(cut -d, -f1-3 "$out/r_grouped/results.csv" | sort) \
          <(cut -d, -f1-3 "$out/r_single/results.csv" | sort); then
  echo "same run ids and statuses in both slices"
else
  echo "run ids or statuses differ between the slices" >&2
  exit 1
fi
