#!/usr/bin/env bash
# Lockstep groups against the run-by-run path (issue #21): a slice of sanford2023 E1 that
# draws from one task stream (qsa N = 32, q = 4, d' = 4; attention, m = 1, 2, 4, 8, 16, 32;
# one seed; E1's batch 256 and eval.n 2000; STEPS steps instead of 20 000, since a step
# costs the same at step 1 000 as at 20 000), timed grouped and with --no-groups by the same
# binary, and with --torch also PyTorch training the same six models one after another
# (bench/sanford2023_group_torch.py, Debian's /usr/bin/python3). Prints wall and CPU seconds
# (user + sys of the whole command) of each side and their ratios; CPU time is the robust
# figure on a loaded machine. With --rounds R the sides run R times, alternated (the order
# rotates each round), and a summary gives the median and the range over the rounds of
# each side's time and of the per-round ratios. Checks that both attnlab paths store the
# same values (every column of results.csv but the timings and memory).
# Benchmarks measure, they never pass or fail: the exit code only reports a broken run.
#
# Usage: bench/lockstep_slice.sh [--out DIR] [--steps STEPS] [--rounds R] [--torch]
#          [--keep-blas-env]
#   --out DIR        keep the specs and result directories there (default: a temp dir)
#   --steps STEPS    training steps per run (default 1000)
#   --rounds R       run every side R times, alternated (default 1)
#   --torch          add PyTorch training the same set in turn. Every side then runs with the
#                    glibc malloc tunables of bench/run_sanford2023_train.sh (mmap threshold
#                    32 MB, trim threshold 256 MB: PyTorch at its best, see
#                    docs/performance.md), attnlab too, so that both get the same environment
#   --keep-blas-env  keep OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE; by default both are unset
#                    for every timed command (only there), so all use the autodetected kernel
# Needs: build/attnlab (ATTNLAB_BUILD picks the build directory). Takes about 4 minutes on
# one core at the default steps, and about 2 more per round with --torch.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ATTNLAB=${ATTNLAB_BUILD:-$ROOT/build}/attnlab
out="" keep_env=0 steps=1000 rounds=1 torch=0
while [[ $# -gt 0 ]]; do
  case $1 in
    --out) out=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --torch) torch=1; shift ;;
    --keep-blas-env) keep_env=1; shift ;;
    -h|--help) awk 'NR > 1 && /^#/ { print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "lockstep_slice.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
[[ -x $ATTNLAB ]] || { echo "lockstep_slice.sh: $ATTNLAB not built" >&2; exit 2; }
[[ $steps =~ ^[1-9][0-9]*$ ]] || { echo "lockstep_slice.sh: --steps needs a positive whole number, not '$steps'" >&2; exit 2; }
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "lockstep_slice.sh: --rounds needs a positive whole number, not '$rounds'" >&2; exit 2; }
PY=/usr/bin/python3 TORCH_SCRIPT=$ROOT/bench/sanford2023_group_torch.py
if [[ $torch == 1 ]] && ! $PY -c "import torch" 2>/dev/null; then
  echo "lockstep_slice.sh: --torch needs $PY with torch (python3-torch)" >&2; exit 2
fi
if [[ -z $out ]]; then out=$(mktemp -d); fi
mkdir -p "$out"
envcmd=(env)
if [[ $keep_env == 0 ]]; then envcmd=(env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE); fi
if [[ $torch == 1 ]]; then
  envcmd+=("GLIBC_TUNABLES=glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=268435456")
fi

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

timed() {  # $1: label, $2: output stem, rest: the command; prints "label wall cpu"
  local label=$1 stem=$2; shift 2
  local t0 t1
  t0=$(date +%s.%N)
  "${envcmd[@]}" /usr/bin/time -f "%U %S" -o "$stem.time" "$@" >"$stem.out"
  t1=$(date +%s.%N)
  echo "$label $(echo "$t1 - $t0" | bc) $(awk '{ print $1 + $2 }' "$stem.time")"
}
side() {  # $1: side, $2: round; prints "side wall cpu"
  local dir=$out/r_$1
  case $1 in
    no_groups|grouped)
      rm -rf "$dir"
      local flags=(); [[ $1 == no_groups ]] && flags=(--no-groups)
      timed "$1" "$dir.$2" "$ATTNLAB" run "$out/slice.toml" "${flags[@]}" --out "$dir" --jobs 1 -q ;;
    torch) timed torch "$dir.$2" $PY "$TORCH_SCRIPT" --steps "$steps" --eval-every 1000 ;;
  esac
}

echo "$("$ATTNLAB" --version 2>/dev/null | head -1); steps $steps; rounds $rounds;" \
     "environment: OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE-<unset>} OPENBLAS_L2_SIZE=${OPENBLAS_L2_SIZE-<unset>};" \
     "every side runs with: ${envcmd[*]}"
sides=(no_groups grouped); [[ $torch == 1 ]] && sides+=(torch)
printf "%-6s %-10s %9s %9s  %s\n" round side wall_s cpu_s load
: >"$out/times.txt"
for ((r = 1; r <= rounds; ++r)); do
  for ((k = 0; k < ${#sides[@]}; ++k)); do  # the order rotates by one each round
    s=${sides[$(((k + r - 1) % ${#sides[@]}))]}
    load=$(cut -d' ' -f1 /proc/loadavg)
    read -r label w c <<<"$(side "$s" "$r")"
    echo "$r $label $w $c" >>"$out/times.txt"
    printf "%-6s %-10s %9.1f %9.1f  %s\n" "$r" "$label" "$w" "$c" "$load"
  done
done
if [[ $torch == 1 ]]; then
  grep -h "openblas_core\|^total" "$out/r_torch.$rounds.out" | sed 's/^/torch: /'
  # The same models (trainable parameters) and what they learned (test MSE, last round).
  printf "%-4s %14s %14s %16s %16s\n" m params_attnlab params_torch test_mse_attnlab test_mse_torch
  awk -F, 'NR == 1 { for (i = 1; i <= NF; ++i) col[$i] = i; next }
           FNR == NR { p[$col["model.m"]] = $col["params"]; t[$col["model.m"]] = $col["test_mse"]; next }
           /^model / { for (i = 2; i <= NF; ++i) { split($i, kv, "="); v[kv[1]] = kv[2] }
             printf "%-4s %14s %14s %16.5f %16.5f\n", v["m"], p[v["m"]], v["params"], t[v["m"]], v["test_mse"] }' \
    "$out/r_grouped/results.csv" FS=' ' "$out/r_torch.$rounds.out"
fi
# Medians and ranges over the rounds: each side's times, and the per-round ratios of each side
# to no_groups (and to torch with --torch).
awk -v torch="$torch" '
  function median(a, n,   i, j, t) {
    for (i = 2; i <= n; ++i) for (j = i; j > 1 && a[j - 1] > a[j]; --j) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  function stats(what,   n, i, a, lo, hi) {
    n = 0; lo = 1e300; hi = -1e300
    for (i = 1; i <= R; ++i) if ((what, i) in v) { a[++n] = v[what, i]; if (a[n] < lo) lo = a[n]; if (a[n] > hi) hi = a[n] }
    return n ? sprintf("%8.2f (%.2f-%.2f)", median(a, n), lo, hi) : "-"
  }
  { w[$2, $1] = $3; c[$2, $1] = $4; if ($1 > R) R = $1; seen[$2] = 1 }
  END {
    split(torch ? "no_groups grouped torch" : "no_groups grouped", S, " ")
    printf "\n%-22s %-24s %-24s\n", "median (range)", "wall_s", "cpu_s"
    for (k = 1; k in S; ++k) {
      for (i = 1; i <= R; ++i) { v["w", i] = w[S[k], i]; v["c", i] = c[S[k], i] }
      printf "%-22s %-24s %-24s\n", S[k], stats("w"), stats("c")
    }
    nb = torch ? 2 : 1; split("no_groups torch", B, " ")
    for (b = 1; b <= nb; ++b)
      for (k = 1; k in S; ++k) {
        if (S[k] == B[b]) continue
        for (i = 1; i <= R; ++i) { v["w", i] = w[S[k], i] / w[B[b], i]; v["c", i] = c[S[k], i] / c[B[b], i] }
        printf "%-22s %-24s %-24s\n", S[k] "/" B[b], stats("w"), stats("c")
      }
  }' "$out/times.txt"
# Both paths store the same values: results.csv without its timing and memory columns.
strip() {
  awk -F, 'NR == 1 { for (i = 1; i <= NF; ++i) skip[i] = ($i ~ /seconds|peak_rss/) }
           { s = ""; for (i = 1; i <= NF; ++i) if (!skip[i]) s = s $i ","; print s }' "$1" | sort
}
if cmp -s <(strip "$out/r_grouped/results.csv") <(strip "$out/r_no_groups/results.csv"); then
  echo "same stored values in both paths (all results.csv columns but timings and memory)"
else
  echo "stored values differ between the paths" >&2
  exit 1
fi
