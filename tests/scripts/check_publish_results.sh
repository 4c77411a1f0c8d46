#!/usr/bin/env bash
# scripts/publish-results on a fake reproduction: the reports' links to docs/NAME.md are rewritten
# for docs/results/GROUP/, RUN.md takes the OpenBLAS kernel from the report (and says so when the
# report has none), times of a resumed run are summed (or replaced when told), and results.csv and
# figures are copied.
#   check_publish_results.sh SOURCE_DIR WORK_DIR
set -euo pipefail
src=$1 work=$2
rm -rf "$work" && mkdir -p "$work/out/e1/figures/data"
fail() { echo "FAIL: $*" >&2; exit 1; }
printf '# attnlab reproduce g\n\n1 of 2 claims pass, 1 inconclusive. attnlab 0.1.0 (abc), OpenBLAS core Haswell.\n| x | c ([why](../../home/docs/constructions.md#m-prime-against-q)) | y |\n' > "$work/out/report.md"
printf '<p><a href="../home/docs/sanford2023.md#a">why</a></p>\n' > "$work/out/report.html"
echo 'run_id,seed' > "$work/out/e1/results.csv"
echo '{}' > "$work/out/e1/figures/data/p.json"
echo png > "$work/out/e1/figures/p.png"
printf '\tUser time (seconds): 10.0\n\tSystem time (seconds): 2.0\n\tElapsed (wall clock) time (h:mm:ss or m:ss): 0:12.00\n\tMaximum resident set size (kbytes): 1000\n' > "$work/time.txt"
PUBLISH_RESULTS_DIR="$work/pub" "$src/scripts/publish-results" g "$work/out" "$work/time.txt" abc123 > /dev/null
d=$work/pub/g
grep -qF '([why](../../constructions.md#m-prime-against-q))' "$d/report.md" || fail "report.md link not rewritten: $(grep why "$d/report.md")"
grep -qF 'href="../../sanford2023.md#a"' "$d/report.html" || fail "report.html link not rewritten"
grep -qF '| OpenBLAS kernel set | Haswell |' "$d/RUN.md" || fail "RUN.md lacks the kernel: $(grep -i openblas "$d/RUN.md")"
grep -qF '| commit | `abc123` |' "$d/RUN.md" || fail "RUN.md lacks the commit"
[ -f "$d/e1/results.csv" ] && [ -f "$d/e1/figures/p.png" ] && [ -f "$d/e1/figures/data/p.json" ] || fail "files not copied"
# A report that does not record the kernel: RUN.md says so instead of guessing.
sed -i 's/, OpenBLAS core Haswell//' "$work/out/report.md"
PUBLISH_RESULTS_DIR="$work/pub" "$src/scripts/publish-results" g "$work/out" "$work/time.txt" abc123 > /dev/null
grep -qF '| OpenBLAS kernel set | not recorded by this report |' "$d/RUN.md" || fail "RUN.md guessed a kernel"
grep -qF '| wall time | 0:00:12 |' "$d/RUN.md" || fail "RUN.md wall time: $(grep 'wall time' "$d/RUN.md")"
# A run resumed once: two records, times summed, the larger peak memory.
printf 'start\n\tUser time (seconds): 100.5\n\tSystem time (seconds): 1.5\n\tElapsed (wall clock) time (h:mm:ss or m:ss): 1:02:03\n\tMaximum resident set size (kbytes): 3000000\n' >> "$work/time.txt"
PUBLISH_RESULTS_DIR="$work/pub" "$src/scripts/publish-results" g "$work/out" "$work/time.txt" abc123 > /dev/null
grep -qF '| wall time | 1:02:15 (h:mm:ss, the sum of 2 segments: the run was resumed once) |' "$d/RUN.md" ||
  fail "RUN.md wall time of two segments: $(grep 'wall time' "$d/RUN.md")"
grep -qF '| CPU time | 110 s user + 4 s system = 0.03 core-hours |' "$d/RUN.md" ||
  fail "RUN.md CPU time of two segments: $(grep 'CPU time' "$d/RUN.md")"
grep -qF '| peak memory (largest process) | 2.86 GiB |' "$d/RUN.md" || fail "RUN.md peak memory: $(grep peak "$d/RUN.md")"
# Cells the records cannot give (a stopped segment's record lacks its workers' CPU) are replaced.
PUBLISH_CPU_TIME='about 5 core-hours (sampled)' PUBLISH_PEAK_MEMORY='0.69 GB (from the store)' \
  PUBLISH_RESULTS_DIR="$work/pub" "$src/scripts/publish-results" g "$work/out" "$work/time.txt" abc123 > /dev/null
grep -qF '| CPU time | about 5 core-hours (sampled) |' "$d/RUN.md" || fail "RUN.md CPU override: $(grep 'CPU time' "$d/RUN.md")"
grep -qF '| peak memory (largest process) | 0.69 GB (from the store) |' "$d/RUN.md" ||
  fail "RUN.md peak-memory override: $(grep peak "$d/RUN.md")"
printf 'nothing timed\n' > "$work/empty.txt"
rc=0
PUBLISH_RESULTS_DIR="$work/pub" "$src/scripts/publish-results" g "$work/out" "$work/empty.txt" abc123 2> "$work/err.txt" || rc=$?
[ "$rc" -eq 2 ] && grep -qF 'holds no /usr/bin/time -v record' "$work/err.txt" ||
  fail "a time file without a record: exit $rc, $(cat "$work/err.txt")"
echo "publish-results: links, kernel, times and files as expected"
