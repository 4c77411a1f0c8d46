#!/usr/bin/env bash
# A/B of the copies of the float kernels (src/ops/isa.h): bench_nn_train (configs a, b, c),
# bench_vmath and bench_sparse_rows run with ATTNLAB_ISA set to each of COPIES in turn, alternated
# ROUNDS times in one invocation (the order rotates each round), so that load from other processes
# on a shared machine biases no copy. Prints each run's training steps per second of wall time
# (nn_a …) and of process CPU time (nn_a_cpu …; the robust figure on a loaded machine) and the
# kernels' CPU µs per call (bench_vmath; bench_sparse_rows, the sparse side only), then the
# median and range over the rounds.
# OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE are unset for every run (OpenBLAS autodetects its
# kernel; each run prints it) and glibc malloc runs with bench/run_sanford2023_train.sh's
# tunables. Benchmarks measure, they never pass or fail.
#
# Usage: bench/isa_ab.sh [--copies avx2,avx512] [--rounds 4] [--reps 5] [--out DIR]
# Needs: cmake -DATTNLAB_BENCH=ON (ATTNLAB_BUILD picks the build directory, default build/).
# Takes about 1 minute per copy and round.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${ATTNLAB_BUILD:-$ROOT/build}
copies=avx2,avx512 rounds=4 reps=5 out=""
while [[ $# -gt 0 ]]; do
  case $1 in
    --copies) copies=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) awk 'NR > 1 && /^#/ { print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "isa_ab.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
for b in bench_nn_train bench_vmath bench_sparse_rows; do
  [[ -x $BUILD/bench/$b ]] || { echo "isa_ab.sh: $BUILD/bench/$b is not built (cmake -DATTNLAB_BENCH=ON)" >&2; exit 2; }
done
if [[ -z $out ]]; then out=$(mktemp -d "${TMPDIR:-/tmp}/isa_ab.XXXXXX"); fi
mkdir -p "$out"
cp "$BUILD/bench/bench_nn_train" "$BUILD/bench/bench_vmath" "$BUILD/bench/bench_sparse_rows" "$out/"  # a rebuild cannot interfere
IFS=, read -r -a list <<<"$copies"
run_env=(env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE
         "GLIBC_TUNABLES=glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=268435456")

echo "# isa A/B, $(date -u '+%Y-%m-%d %H:%M UTC'), attnlab $(git -C "$ROOT" rev-parse --short=12 HEAD 2>/dev/null || echo unknown), outputs $out"
: >"$out/rows.txt"
for ((r = 1; r <= rounds; ++r)); do
  for ((k = 0; k < ${#list[@]}; ++k)); do
    isa=${list[$(((k + r - 1) % ${#list[@]}))]}
    f=$out/nn_${isa}_r$r.txt
    echo "== round $r $isa (load $(cut -d' ' -f1-3 /proc/loadavg))"
    "${run_env[@]}" ATTNLAB_ISA="$isa" "$out/bench_nn_train" --configs a,b,c --reps "$reps" >"$f"
    sed -n 's/.*openblas_core=\([^ ]*\) isa=\([^ ]*\).*/   bench_nn_train: openblas_core=\1 isa=\2/p' "$f"
    awk -v r="$r" -v isa="$isa" '/^result/ { for (i = 2; i <= NF; ++i) { split($i, kv, "="); v[kv[1]] = kv[2] }
         printf "   nn %s %s steps/s, %s per CPU-s\n", v["config"], v["steps_per_s"], v["cpu_steps_per_s"]
         print r, isa, "nn_" v["config"], v["steps_per_s"] >> "'"$out/rows.txt"'"
         print r, isa, "nn_" v["config"] "_cpu", v["cpu_steps_per_s"] >> "'"$out/rows.txt"'" }' "$f"
    for b in vmath sparse_rows; do  # Google Benchmark, CPU time per call
      f=$out/${b}_${isa}_r$r.txt
      "${run_env[@]}" ATTNLAB_ISA="$isa" "$out/bench_$b" --benchmark_filter='Sigmoid|Tanh|Exp|Sparse' \
        --benchmark_format=csv >"$f" 2>"$f.err"
      sed -n 's/^\(attnlab_isa\|openblas_core\): */   bench_'$b': \1=/p' "$f.err" | tr '\n' ' '; echo
      awk -F, -v r="$r" -v isa="$isa" '/^"BM_/ { gsub(/"/, "", $1); sub(/^BM_/, "", $1)
           printf "   %s %.2f us\n", $1, $4 / 1000; print r, isa, $1, $4 / 1000 >> "'"$out/rows.txt"'" }' "$f"
    done
  done
done
# Median and range over the rounds per copy (nn_*: steps/s, higher is faster; the rest: µs per call).
echo
echo "median (min-max) over $rounds rounds"
awk '{ key = $3; seen[key] = 1; n[key, $2]++; v[key, $2, n[key, $2]] = $4; copies[$2] = 1 }
  function med(key, isa,   m, i, j, t, a) {
    m = n[key, isa]; for (i = 1; i <= m; ++i) a[i] = v[key, isa, i]
    for (i = 2; i <= m; ++i) for (j = i; j > 1 && a[j - 1] > a[j]; --j) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
    return sprintf("%9.2f (%.2f-%.2f)", m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2, a[1], a[m])
  }
  END { for (key in seen) { line = sprintf("%-18s", key); for (c in copies) line = line sprintf("  %s %s", c, med(key, c)); print line } }' \
  "$out/rows.txt" | sort -t/ -k1,1 -k2,2n
