#!/usr/bin/env bash
# One segment of the full-size sanford2023 reproduction, autodetected OpenBLAS kernel.
# Usage: run-sanford.sh SEGMENT_NAME   (resumes the store in /work/fullrun/sanford2023)
set -u
seg=$1
cd /work/fullrun
echo "=== segment $seg start $(date -u +%FT%TZ) binary $(./attnlab --version | head -1)"
env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE ATTNLAB_HOME=/work/fullrun/home \
  /usr/bin/time -v -o times/$seg.time \
  ./attnlab reproduce sanford2023 -j 2 -o /work/fullrun/sanford2023 2>&1 |
  while IFS= read -r line; do printf '%s %s %s\n' "$(date -u +%s)" "$(date -u +%T)" "$line"; done
echo "=== segment $seg end $(date -u +%FT%TZ)"
