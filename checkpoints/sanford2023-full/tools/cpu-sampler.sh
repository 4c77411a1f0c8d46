#!/usr/bin/env bash
# Every 60 s: UTC time, summed utime+stime (s) of processes whose cmdline matches $1, and /proc/loadavg.
pat=$1
while true; do
  tot=0
  for p in $(pgrep -f "$pat"); do [[ $p == $$ ]] && continue
    [[ -r /proc/$p/stat ]] || continue
    t=$(awk '{print $14+$15+$16+$17}' /proc/$p/stat 2>/dev/null) || continue
    tot=$((tot + t))
  done
  echo "$(date -u +%FT%TZ) $(awk -v t=$tot 'BEGIN{printf "%.0f", t/100}') $(cut -d' ' -f1-3 /proc/loadavg)" >> /work/fullrun/cpu-samples.txt
  sleep 60
done
