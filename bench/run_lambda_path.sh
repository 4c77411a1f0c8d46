#!/bin/sh
# The λ-path benchmark (bench_lambda_path) with both OpenBLAS kernels, rounds alternated:
# each round runs once with OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE unset (the kernel OpenBLAS
# picks itself) and once with this environment's Haswell setting, so a change in the
# machine's load hits both alike. Usage: bench/run_lambda_path.sh OUT_DIR [ROUNDS] [extra
# bench_lambda_path options]; writes OUT_DIR/auto_rR.txt and OUT_DIR/haswell_rR.txt.
set -eu
out=${1:?usage: bench/run_lambda_path.sh OUT_DIR [ROUNDS] [options]}
rounds=${2:-3}
[ $# -ge 2 ] && shift 2 || shift 1
bin=$(dirname "$0")/../build/bench/bench_lambda_path
mkdir -p "$out"
r=1
while [ "$r" -le "$rounds" ]; do
  env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE "$bin" --rounds 1 --rotate "$r" "$@" > "$out/auto_r$r.txt"
  env OPENBLAS_CORETYPE=Haswell OPENBLAS_L2_SIZE=512 "$bin" --rounds 1 --rotate "$r" "$@" > "$out/haswell_r$r.txt"
  r=$((r + 1))
done
