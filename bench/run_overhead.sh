#!/usr/bin/env bash
# Per-run overhead of `attnlab run` against the plan size: trivial runs (the mean model on
# qsa, N=4, --jobs 1) in a plan of 200 points and in one of 10^5 points, of which a shard
# runs only a few; old binary against new, side by side. The ms per run is the marginal
# cost, (time of 2R runs - time of R runs) / R on the same plan, so the one-off cost of
# expanding and storing the plan cancels; the totals are printed too.
# Benchmarks measure, they never pass or fail: the exit code only reports a broken run.
#
# Usage: bench/run_overhead.sh [--old /work/main/build/attnlab] [--new build/attnlab]
#          [--runs 100] [--big 100000] [--out DIR]
# Both programs run with OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE unset.
set -euo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
old=/work/main/build/attnlab
new="$here/build/attnlab"
runs=100
big=100000
out=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --old) old="$2"; shift 2 ;;
    --new) new="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --big) big="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    *) echo "run_overhead.sh: unknown option $1 (see the usage at the top of the script)" >&2; exit 2 ;;
  esac
done
for b in "$old" "$new"; do
  [[ -x "$b" ]] || { echo "run_overhead.sh: $b is not an executable attnlab; pass --old/--new" >&2; exit 2; }
done
if [[ -z "$out" ]]; then
  out="$(mktemp -d)"
  trap 'rm -rf "$out"' EXIT
fi

# spec PLAN_POINTS: a plan of that many points (seeds) of a trivial run.
spec() {
  cat > "$out/spec_$1.toml" <<SPEC
[experiment]
name = "run_overhead"
seeds = $1
[task]
name = "qsa"
N = 4
[model]
name = "mean"
[train]
n = 50
[eval]
n = 50
SPEC
  echo "$out/spec_$1.toml"
}

# seconds BINARY SPEC SHARD: wall time of one run into a fresh directory.
seconds() {
  local dir="$out/run_$RANDOM$RANDOM"
  local t0 t1
  t0=$(date +%s.%N)
  env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE ATTNLAB_NO_PROGRESS=1 \
    "$1" run "$2" --out "$dir" --jobs 1 -q --shard "$3" > "$out/last.log" 2>&1 ||
    { cat "$out/last.log" >&2; exit 1; }
  t1=$(date +%s.%N)
  rm -rf "$dir"
  echo "$t1 - $t0" | bc -l
}

printf '%-12s %-8s %12s %12s %12s\n' "plan" "binary" "R runs [s]" "2R runs [s]" "ms/run"
for plan in 200 "$big"; do
  s="$(spec "$plan")"
  # Shards of the plan with R and 2R points.
  k1=$((plan / runs)); k2=$((plan / (2 * runs)))
  for which in old new; do
    b="$old"; [[ $which == new ]] && b="$new"
    t1=$(seconds "$b" "$s" "0/$k1")
    t2=$(seconds "$b" "$s" "0/$k2")
    ms=$(echo "($t2 - $t1) * 1000 / $runs" | bc -l)
    printf '%-12s %-8s %12.2f %12.2f %12.1f\n' "$plan" "$which" "$t1" "$t2" "$ms"
  done
done
