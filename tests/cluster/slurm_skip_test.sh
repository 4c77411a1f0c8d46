#!/usr/bin/env bash
# Checks tests/cluster/slurm_test.sh itself (ctest label "cluster"): a slurmd that cannot
# start on the machine is a skip (exit 77, "SKIP: slurmd cannot run ..." with slurmd's own
# error), while an attnlab that fails once the cluster is up is a failure (exit 1), never a
# skip. The first case runs a stand-in slurmd that exits as one without a cgroup
# filesystem does; the second a real cluster with /bin/false as attnlab.
#   tests/cluster/slurm_skip_test.sh SOURCE_DIR WORK_DIR [ATTNLAB_MPI]
# Exit 0 if both hold, 77 when slurm_test.sh skips for its usual reasons (not root, no Slurm).
set -uo pipefail
SRC=$(readlink -f "$1")
WORK=$2
TEST=$SRC/tests/cluster/slurm_test.sh
mkdir -p "$WORK/fakebin"
cat > "$WORK/fakebin/slurmd" <<'SH'
#!/bin/sh
echo "slurmd: error: cgroup_v1_init: cannot mount cgroup filesystem at /sys/fs/cgroup: No such file or directory" >&2
echo "slurmd: fatal: Unable to initialize cgroup plugin" >&2
exit 1
SH
chmod +x "$WORK/fakebin/slurmd"

out=$(SLURM_TEST_DEADLINE=60 PATH="$WORK/fakebin:$PATH" "$TEST" /bin/false "$SRC" "$WORK/no-slurmd" "${3:-ON}" 2>&1)
rc=$?
if [ "$rc" -eq 77 ] && ! grep -q '^SKIP: slurmd cannot run on this machine' <<<"$out"; then
  echo "$out" | tail -n 3
  exit 77  # skipped before starting slurmd: not root, Slurm or MPI missing
fi
[ "$rc" -eq 77 ] && grep -q '^SKIP: slurmd cannot run on this machine (it exited: .*cgroup' <<<"$out" ||
  { echo "FAIL: a slurmd that cannot start gave exit $rc, not a skip naming slurmd's error:"; echo "$out" | tail -n 20; exit 1; }
echo "ok: $(grep '^SKIP:' <<<"$out")"

out=$(SLURM_TEST_DEADLINE=120 "$TEST" /bin/false "$SRC" "$WORK/bad-attnlab" "${3:-ON}" 2>&1)
rc=$?
[ "$rc" -eq 1 ] && grep -q '^FAIL: ' <<<"$out" ||
  { echo "FAIL: an attnlab that fails on a working cluster gave exit $rc, not 1:"; echo "$out" | tail -n 20; exit 1; }
echo "ok: a failing attnlab fails the test: $(grep -m1 '^FAIL: ' <<<"$out")"
rm -rf "$WORK"
