#!/usr/bin/env bash
# Every script of scripts/ and bench/*.sh that takes --help prints its whole header comment (the
# lines after the #! line up to the first that is not a comment) and exits 0, so that a header
# that grows is never cut short by a hard-coded line range.
#   check_script_help.sh SOURCE_DIR
set -uo pipefail
src=$1
fail=0 checked=0
for f in "$src"/scripts/* "$src"/bench/*.sh; do
  [ -f "$f" ] && grep -q -- '-h|--help)' "$f" || continue
  want=$(awk 'NR > 1 && /^#/ { c++; next } NR > 1 { exit } END { print c + 0 }' "$f")
  out=$(bash "$f" --help 2>&1)
  rc=$?
  got=$(printf '%s\n' "$out" | wc -l)
  if [ $rc -ne 0 ] || [ "$got" -ne "$want" ]; then
    echo "FAIL: ${f#"$src"/} --help: exit $rc, $got lines, its header has $want" >&2
    fail=1
  fi
  checked=$((checked + 1))
done
[ $checked -ge 9 ] || { echo "FAIL: only $checked scripts with --help found under $src" >&2; exit 1; }
[ $fail -eq 0 ] && echo "$checked scripts print their whole header for --help"
exit $fail
