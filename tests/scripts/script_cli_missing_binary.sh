#!/usr/bin/env bash
# scripts/script_cli.py's run_cli, reached through retrieval_floor.py, given a binary that does
# not exist: exit 2 and one line naming it (no Python traceback).
#   script_cli_missing_binary.sh PYTHON SOURCE_DIR WORK_DIR
set -uo pipefail
python=$1 src=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
"$python" "$src/scripts/retrieval_floor.py" relu_net --fewer --attnlab "$work/no-such-attnlab" \
  > "$work/out" 2> "$work/err"
rc=$?
want="retrieval_floor: cannot run $work/no-such-attnlab: No such file or directory"
[ $rc -eq 2 ] || { echo "FAIL: exit $rc, expected 2" >&2; cat "$work/err" >&2; exit 1; }
[ "$(wc -l < "$work/err")" -eq 1 ] || { echo "FAIL: not one line:" >&2; cat "$work/err" >&2; exit 1; }
grep -qF "$want" "$work/err" || { echo "FAIL: no line '$want'" >&2; cat "$work/err" >&2; exit 1; }
echo "one line, exit 2: $(cat "$work/err")"
