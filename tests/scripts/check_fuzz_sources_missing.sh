#!/usr/bin/env bash
# scripts/check-fuzz-sources on a copy of fuzz/CMakeLists.txt without core/step_meter.cpp: it must
# exit 1 and name the file and who includes its header.
#   check_fuzz_sources_missing.sh PYTHON SOURCE_DIR WORK_DIR
set -uo pipefail
python=$1 src=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
sed 's| ${S}/core/step_meter.cpp||' "$src/fuzz/CMakeLists.txt" > "$work/CMakeLists.txt"
if cmp -s "$src/fuzz/CMakeLists.txt" "$work/CMakeLists.txt"; then
  echo "FAIL: fuzz/CMakeLists.txt no longer lists \${S}/core/step_meter.cpp; update this test" >&2
  exit 1
fi
"$python" "$src/scripts/check-fuzz-sources" --cmakelists "$work/CMakeLists.txt" 2> "$work/err"
rc=$?
want='spec_fuzz lacks core/step_meter.cpp (train/trainer.cpp includes its header)'
[ $rc -eq 1 ] || { echo "FAIL: exit $rc, expected 1" >&2; cat "$work/err" >&2; exit 1; }
grep -qF "$want" "$work/err" || { echo "FAIL: no line '$want'" >&2; cat "$work/err" >&2; exit 1; }
echo "check-fuzz-sources names the missing file: $(cat "$work/err")"
