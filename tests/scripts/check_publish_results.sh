#!/usr/bin/env bash
# scripts/publish-results on a fake reproduction: the reports' links to docs/NAME.md are rewritten
# for docs/results/GROUP/, RUN.md takes the OpenBLAS kernel from the report (and says so when the
# report has none), times of a resumed run are summed (or replaced when told), and results.csv,
# the selection tables and figures are copied. Then its bad inputs (one row each): every one
# exits 2 (1 for a failure after the checks) with a line naming the input, and leaves the
# published results, a folder outside them and the results folder's listing exactly as they were
# (no temporary folder left).
#   check_publish_results.sh SOURCE_DIR WORK_DIR
set -euo pipefail
src=$1 work=$2
rm -rf "$work" && mkdir -p "$work/out/e1/figures/data" "$work/pub"
fail() { echo "FAIL: $*" >&2; exit 1; }
publish() { PUBLISH_RESULTS_DIR="${PUBLISH_RESULTS_DIR:-$work/pub}" "$src/scripts/publish-results" "$@"; }
printf '# attnlab reproduce g\n\n1 of 2 claims pass, 1 inconclusive. attnlab 0.1.0 (abc), OpenBLAS core Haswell.\n| x | c ([why](../../home/docs/constructions.md#m-prime-against-q)) | y |\n' > "$work/out/report.md"
printf '<p><a href="../home/docs/sanford2023.md#a">why</a></p>\n' > "$work/out/report.html"
echo 'run_id,seed' > "$work/out/e1/results.csv"
echo 'run_id,seed,candidates' > "$work/out/e1/selected.csv"
echo 'group,run_id,val_loss' > "$work/out/e1/selection.csv"
echo '{}' > "$work/out/e1/figures/data/p.json"
echo png > "$work/out/e1/figures/p.png"
printf '\tUser time (seconds): 10.0\n\tSystem time (seconds): 2.0\n\tElapsed (wall clock) time (h:mm:ss or m:ss): 0:12.00\n\tMaximum resident set size (kbytes): 1000\n' > "$work/time.txt"
publish demo "$work/out" "$work/time.txt" abc1234 > /dev/null
d=$work/pub/demo
grep -qF '([why](../../constructions.md#m-prime-against-q))' "$d/report.md" || fail "report.md link not rewritten: $(grep why "$d/report.md")"
grep -qF 'href="../../sanford2023.md#a"' "$d/report.html" || fail "report.html link not rewritten"
grep -qF '| OpenBLAS kernel set | Haswell |' "$d/RUN.md" || fail "RUN.md lacks the kernel: $(grep -i openblas "$d/RUN.md")"
grep -qF '| commit | `abc1234` |' "$d/RUN.md" || fail "RUN.md lacks the commit"
[ -f "$d/e1/results.csv" ] && [ -f "$d/e1/figures/p.png" ] && [ -f "$d/e1/figures/data/p.json" ] || fail "files not copied"
cmp -s "$work/out/e1/selected.csv" "$d/e1/selected.csv" && cmp -s "$work/out/e1/selection.csv" "$d/e1/selection.csv" ||
  fail "selection tables not copied"
# A report that does not record the kernel: RUN.md says so instead of guessing.
sed -i 's/, OpenBLAS core Haswell//' "$work/out/report.md"
publish demo "$work/out" "$work/time.txt" abc1234 > /dev/null
grep -qF '| OpenBLAS kernel set | not recorded by this report |' "$d/RUN.md" || fail "RUN.md guessed a kernel"
grep -qF '| wall time | 0:00:12 |' "$d/RUN.md" || fail "RUN.md wall time: $(grep 'wall time' "$d/RUN.md")"
# A run resumed once: two records, times summed, the larger peak memory.
printf 'start\n\tUser time (seconds): 100.5\n\tSystem time (seconds): 1.5\n\tElapsed (wall clock) time (h:mm:ss or m:ss): 1:02:03\n\tMaximum resident set size (kbytes): 3000000\n' >> "$work/time.txt"
publish demo "$work/out" "$work/time.txt" abc1234 > /dev/null
grep -qF '| wall time | 1:02:15 (h:mm:ss, the sum of 2 segments: the run was resumed once) |' "$d/RUN.md" ||
  fail "RUN.md wall time of two segments: $(grep 'wall time' "$d/RUN.md")"
grep -qF '| CPU time | 110 s user + 4 s system = 0.03 core-hours |' "$d/RUN.md" ||
  fail "RUN.md CPU time of two segments: $(grep 'CPU time' "$d/RUN.md")"
grep -qF '| peak memory (largest process) | 2.86 GiB |' "$d/RUN.md" || fail "RUN.md peak memory: $(grep peak "$d/RUN.md")"
# Cells the records cannot give (a stopped segment's record lacks its workers' CPU) are replaced.
PUBLISH_CPU_TIME='about 5 core-hours (sampled)' PUBLISH_PEAK_MEMORY='0.69 GB (from the store)' \
  PUBLISH_WALL_TIME='5:01:02 (four segments)' publish demo "$work/out" "$work/time.txt" abc1234 > /dev/null
grep -qF '| CPU time | about 5 core-hours (sampled) |' "$d/RUN.md" || fail "RUN.md CPU override: $(grep 'CPU time' "$d/RUN.md")"
grep -qF '| peak memory (largest process) | 0.69 GB (from the store) |' "$d/RUN.md" ||
  fail "RUN.md peak-memory override: $(grep peak "$d/RUN.md")"
grep -qF '| wall time | 5:01:02 (four segments) |' "$d/RUN.md" ||
  fail "RUN.md wall-time override: $(grep 'wall time' "$d/RUN.md")"
# Notes and a commit with words after the hash; a file left in the old folder does not survive
# the swap, and no temporary folder is left beside it.
echo 'Ran alone.' > "$work/notes.md"
touch "$d/stale.txt"
publish demo "$work/out" "$work/time.txt" 'abc1234 (src/ as in def5678)' "$work/notes.md" > /dev/null
grep -qF 'Ran alone.' "$d/RUN.md" && grep -qF '| commit | `abc1234 (src/ as in def5678)` |' "$d/RUN.md" ||
  fail "RUN.md lacks the notes or the commit words"
[ ! -e "$d/stale.txt" ] || fail "the old folder's files survived the swap"
[ "$(ls -A "$work/pub")" = demo ] || fail "left beside the results: $(ls -A "$work/pub")"
# A publish killed by SIGKILL left a half-assembled folder (removed by the next publish) or,
# between its two renames, the old results beside a missing group folder (moved back first, so
# nothing published is lost even if the next publish then fails its checks).
mkdir -p "$work/pub/.demo.new.999999/e1" "$work/pub/.fu2023.new.999999"
publish demo "$work/out" "$work/time.txt" abc1234 > /dev/null
[ "$(ls -A "$work/pub")" = "$(printf '.fu2023.new.999999\ndemo')" ] ||
  fail "a killed publish's folder was not removed (or another group's was): $(ls -A "$work/pub")"
rmdir "$work/pub/.fu2023.new.999999"
mv -T "$d" "$work/pub/.demo.old.999999"
PUBLISH_FAIL_BEFORE_SWAP=1 publish demo "$work/out" "$work/time.txt" abc1234 > /dev/null 2>&1 &&
  fail "PUBLISH_FAIL_BEFORE_SWAP did not fail"
[ -f "$d/RUN.md" ] && [ "$(ls -A "$work/pub")" = demo ] ||
  fail "the killed publish's old results were not moved back: $(ls -A "$work/pub")"

# A -dirty build's report is published when told to.
mkdir -p "$work/dirty-ok" && cp -r "$work/out/e1" "$work/dirty-ok/"
sed 's/attnlab 0.1.0 (abc)/attnlab 0.1.0 (abc-dirty)/' "$work/out/report.md" > "$work/dirty-ok/report.md"
PUBLISH_ALLOW_DIRTY=1 publish demo "$work/dirty-ok" "$work/time.txt" abc1234 > /dev/null ||
  fail "PUBLISH_ALLOW_DIRTY=1 did not publish a -dirty report"
grep -qF 'abc-dirty' "$d/report.md" || fail "the -dirty report was not published"
publish demo "$work/out" "$work/time.txt" abc1234 > /dev/null

# ---- bad inputs ------------------------------------------------------------------------------
# Published state: demo (just written) and a second group; a folder outside the results.
mkdir -p "$work/pub/fu2023" "$work/victim"
echo keep > "$work/pub/fu2023/RUN.md"
echo keep > "$work/victim/data.txt"
state() { (cd "$work" && find pub victim -printf '%p %y %s\n' | sort && find pub victim -type f -exec md5sum {} + | sort); }
# Each row starts from this state (a row that wrecked it does not spoil the next).
keep() { rm -rf "$work/pristine" && mkdir "$work/pristine" && cp -a "$work/pub" "$work/victim" "$work/pristine/" && before=$(state); }
keep
printf 'nothing timed\n' > "$work/empty.txt"
printf '\tElapsed (wall clock) time (h:mm:ss or m:ss): 0:12.00\n' > "$work/wall-only.txt"
sed 's/User time (seconds): 10.0/User time (seconds): ten/' "$work/time.txt" > "$work/bad-user.txt"
sed 's/0:12.00/twelve/' "$work/time.txt" > "$work/bad-wall.txt"
failures=() rows=0
# row NAME RC TEXT ARGS...: publish-results ARGS exits RC, stderr holds TEXT, nothing changed.
row() {
  local name=$1 want=$2 text=$3 rc=0
  shift 3
  rows=$((rows + 1))
  rm -rf "$work/pub" "$work/victim" && cp -a "$work/pristine/pub" "$work/pristine/victim" "$work/"
  publish "$@" > /dev/null 2> "$work/err.txt" || rc=$?
  local now
  now=$(state)
  if [ "$rc" -ne "$want" ]; then failures+=("$name: exit $rc (want $want): $(head -c 300 "$work/err.txt")")
  elif ! grep -qF -- "$text" "$work/err.txt"; then failures+=("$name: message lacks '$text': $(cat "$work/err.txt")")
  elif [ "$now" != "$before" ]; then failures+=("$name: changed the published results or the folder outside them")
  fi
}
T=$work/time.txt O=$work/out
row group_empty 2 "GROUP '' is not a group name" '' "$O" "$T" abc1234
row group_dotdot_path 2 "GROUP '../victim' is not a group name" ../victim "$O" "$T" abc1234
row group_deep_path 2 "is not a group name" ../../../../../../../..$work/victim "$O" "$T" abc1234
row group_dot 2 "GROUP '.' is not a group name" . "$O" "$T" abc1234
row group_dotdot 2 "GROUP '..' is not a group name" .. "$O" "$T" abc1234
row group_slash 2 "GROUP 'demo/sub' is not a group name" demo/sub "$O" "$T" abc1234
row group_hidden 2 "is not a group name" .demo "$O" "$T" abc1234
row group_unknown 2 "GROUP 'nosuch' is not a shipped group" nosuch "$O" "$T" abc1234
row group_glob 2 "is not a group name" 'de*' "$O" "$T" abc1234
row time_no_record 2 'holds no /usr/bin/time -v record' demo "$O" "$work/empty.txt" abc1234
row time_wall_only 2 'set PUBLISH_CPU_TIME' demo "$O" "$work/wall-only.txt" abc1234
row time_bad_number 2 "a 'User time (seconds)' value is not a number" demo "$O" "$work/bad-user.txt" abc1234
row time_bad_wall 2 "is not h:mm:ss" demo "$O" "$work/bad-wall.txt" abc1234
row time_missing 2 'nosuch.txt is missing' demo "$O" "$work/nosuch.txt" abc1234
row time_is_dir 2 '/out is missing' demo "$O" "$work/out" abc1234
row notes_missing 2 "NOTES_FILE '$work/nosuch.md' is missing" demo "$O" "$T" abc1234 "$work/nosuch.md"
row notes_empty_arg 2 "NOTES_FILE '' is missing" demo "$O" "$T" abc1234 ''
row notes_is_dir 2 'NOTES_FILE' demo "$O" "$T" abc1234 "$work/out"
row commit_empty 2 "COMMIT '' does not start with a commit hash" demo "$O" "$T" ''
row commit_not_hex 2 'does not start with a commit hash' demo "$O" "$T" HEAD
row commit_pipe 2 "must be one line without '|'" demo "$O" "$T" 'abc1234 | x'
row commit_newline 2 'must be one line' demo "$O" "$T" $'abc1234\nx'
row commit_backtick 2 'must be one line' demo "$O" "$T" 'abc1234 `x`'
row report_missing 2 'report.md is missing' demo "$work/nosuch" "$T" abc1234
# A report of a -dirty build (refused unless PUBLISH_ALLOW_DIRTY=1), or one showing this machine's
# absolute paths.
mkdir -p "$work/dirty" "$work/abs" && cp -r "$work/out/e1" "$work/dirty/" && cp -r "$work/out/e1" "$work/abs/"
sed 's/attnlab 0.1.0 (abc)/attnlab 0.1.0 (24e34b5c79b1-dirty)/' "$work/out/report.md" > "$work/dirty/report.md"
grep -qF -- '-dirty' "$work/dirty/report.md" || fail "the dirty fixture has no -dirty version"
printf 'Spec `/work/main/experiments/demo/baselines.toml`; results in `/work/x/baselines`; 1 runs ok, 0 failed.\n' |
  cat "$work/out/report.md" - > "$work/abs/report.md"
row report_dirty 2 'was made by a -dirty build (24e34b5c79b1-dirty)' demo "$work/dirty" "$T" abc1234
row report_abs_paths 2 'shows absolute paths of this machine' demo "$work/abs" "$T" abc1234
PUBLISH_CPU_TIME='' row cpu_override_empty 2 'PUBLISH_CPU_TIME is set but empty' demo "$O" "$T" abc1234
PUBLISH_CPU_TIME='1 h | 2 h' row cpu_override_pipe 2 'PUBLISH_CPU_TIME must be one line' demo "$O" "$T" abc1234
PUBLISH_PEAK_MEMORY=$'1 GB\n2 GB' row memory_override_newline 2 'PUBLISH_PEAK_MEMORY must be one line' demo "$O" "$T" abc1234
PUBLISH_PEAK_MEMORY=' ' row memory_override_blank 2 'PUBLISH_PEAK_MEMORY is set but empty' demo "$O" "$T" abc1234
PUBLISH_WALL_TIME='' row wall_override_empty 2 'PUBLISH_WALL_TIME is set but empty' demo "$O" "$T" abc1234
PUBLISH_WALL_TIME='1 h | 2 h' row wall_override_pipe 2 'PUBLISH_WALL_TIME must be one line' demo "$O" "$T" abc1234
row too_few_args 2 'publish-results GROUP OUT_DIR' demo "$O" "$T"
# The results folder itself: missing, or GROUP's entry a file or a link out of it.
PUBLISH_RESULTS_DIR=$work/nosuch-root row results_root_missing 2 'is not a directory' demo "$O" "$T" abc1234
[ ! -e "$work/nosuch-root" ] || failures+=("results_root_missing: created $work/nosuch-root")
ln -s "$work/victim" "$work/pub/constructions" && keep
row dest_symlink 2 'exists and is not a folder' constructions "$O" "$T" abc1234
rm -rf "$work/pub/constructions" && echo text > "$work/pub/constructions" && keep
row dest_file 2 'exists and is not a folder' constructions "$O" "$T" abc1234
rm -rf "$work/pub/constructions" && keep
# A failure after the checks (the new folder assembled, not yet swapped in): exit 1, the old
# results untouched, the temporary folder removed.
PUBLISH_FAIL_BEFORE_SWAP=1 row fail_before_swap 1 'is as it was' demo "$O" "$T" fedcba9
[ "${#failures[@]}" -eq 0 ] || { printf 'FAIL: %s\n' "${failures[@]}" >&2; exit 1; }
echo "publish-results: links, kernel, times and files as expected; $rows bad inputs refused, nothing changed"
