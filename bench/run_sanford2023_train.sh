#!/usr/bin/env bash
# Training steps/s of the sanford2023 networks, attnlab (bench_nn_train) against PyTorch
# (sanford2023_train_torch.py), 1 thread each, same models, same batches, same initial
# weights, same Adam; prints a table of steps/s and the ratios attnlab/PyTorch (> 1:
# attnlab faster). Configurations (issue #5): a = attention N 32, m 16, 1 head, d' 4,
# batch 64; b = attention N 32, m 64, 4 heads, batch 256; c = LSTM hidden 128, length 32,
# batch 256 (k: the same with the shipped head, width 128; l: k at length 16, sanford2023's
# largest LSTM); (issue #32) d, e = attention N 32, m 16 / 32, batch 256; f =
# third order N 16, m 16, batch 256; t2 … t5 = the k-hop causal transformer (m 128, 4 heads,
# 2 … 5 layers, N 64, batch 32). A second table gives CPU ms per
# step, the CPU ratio and attnlab's share of the 1-thread sgemm rate measured at the start of
# the same round. Benchmarks measure, they never pass or fail: the exit code only reports a
# broken run. The PyTorch side is skipped, with a message, where python3-torch is absent.
#
# Usage: bench/run_sanford2023_train.sh [--configs a,b,c] [--rounds 3] [--reps 7]
#          [--rep-seconds 1] [--out DIR] [--keep-blas-env] [--malloc tuned|default]
#   --rounds N       run attnlab and PyTorch alternately N times (each run: all configs,
#                    warm-up, --reps timed repetitions); the table gives the median over
#                    rounds and the range of the per-round ratio, so that load from other
#                    processes on a shared machine biases neither side
#   --out DIR        keep the raw outputs and attnlab's dump there (default: a temp dir)
#   --keep-blas-env  keep OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE; by default both are unset
#                    for both programs (only there), so both use the same, autodetected
#                    OpenBLAS kernel (as bench/run_fu2023_pipeline.sh does); where OpenBLAS
#                    falls back to kernels without AVX on a CPU it does not know, the bench
#                    re-executes with wider ones (core/blas_core.h) and PyTorch gets the same
#                    (OPENBLAS_CORETYPE set to the core the bench reports).
#   --malloc default keep glibc malloc's defaults. By default both programs run with
#                    GLIBC_TUNABLES fixing malloc's mmap threshold at 32 MB and its trim
#                    threshold at 256 MB: with the defaults PyTorch's per-step tensors above
#                    the (history-dependent) dynamic mmap threshold are mapped and unmapped
#                    every step, and its speed depends on what the process freed before
#                    (up to 7x here; see docs/performance.md). attnlab reuses its buffers.
# Needs: cmake -DATTNLAB_BENCH=ON and the target bench_nn_train (ATTNLAB_BUILD picks the
#   build directory, default build/); Debian's /usr/bin/python3 with python3-torch.
# Takes about 1 minute per round with a,b,c (3 minutes with the default 3 rounds); the
# issue #32 set (--configs d,e,f,t2,t3,t4,t5) about 1.5 minutes per round with --reps 3.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${ATTNLAB_BUILD:-$ROOT/build}
BENCH=$BUILD/bench/bench_nn_train
PY=/usr/bin/python3
TORCH_SCRIPT=$ROOT/bench/sanford2023_train_torch.py

configs=a,b,c rounds=3 reps=7 rep_seconds=1 out="" keep_env=0 malloc=tuned
while [[ $# -gt 0 ]]; do
  case $1 in
    --configs) configs=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --rep-seconds) rep_seconds=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --keep-blas-env) keep_env=1; shift ;;
    --malloc) malloc=$2; shift 2 ;;
    -h|--help) awk 'NR > 1 && /^#/ { print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "run_sanford2023_train.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
if [[ ! -x $BENCH ]]; then
  echo "run_sanford2023_train.sh: $BENCH is missing; build it with: cmake --preset default" \
       "-DATTNLAB_BENCH=ON && cmake --build build -j2 --target bench_nn_train" >&2
  exit 2
fi
if [[ -z $out ]]; then out=$(mktemp -d "${TMPDIR:-/tmp}/sanford2023_train.XXXXXX"); fi
mkdir -p "$out/dump"
cp "$BENCH" "$out/bench_nn_train" && BENCH=$out/bench_nn_train  # a rebuild cannot interfere

run_env=(env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE)
[[ $keep_env == 1 ]] && run_env=(env)
if [[ $malloc == tuned ]]; then
  run_env+=("GLIBC_TUNABLES=glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=268435456")
elif [[ $malloc != default ]]; then
  echo "run_sanford2023_train.sh: --malloc must be tuned or default" >&2; exit 2
fi
common=(--configs "$configs" --reps "$reps" --rep-seconds "$rep_seconds")

echo "# sanford2023 training benchmark, $(date -u '+%Y-%m-%d %H:%M UTC'), attnlab $(git -C "$ROOT" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)"
echo "machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) CPUs;" \
     "flags: $(for f in avx2 fma avx512f; do grep -qw $f /proc/cpuinfo && printf '%s ' $f || printf 'no-%s ' $f; done)"
echo "environment: OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE-<unset>} OPENBLAS_L2_SIZE=${OPENBLAS_L2_SIZE-<unset>};" \
     "both programs run with: ${run_env[*]}$([[ $keep_env == 0 ]] && echo " (PyTorch also with OPENBLAS_CORETYPE set to the core the bench reports)")"
echo "outputs: $out"

for ((r = 1; r <= rounds; ++r)); do
  echo "== round $r: attnlab   (load $(cut -d' ' -f1-3 /proc/loadavg))"
  dump=(); [[ $r == 1 ]] && dump=(--dump "$out/dump")
  cmd=("${run_env[@]}" "$BENCH" "${common[@]}" "${dump[@]}")
  echo "\$ ${cmd[*]}" > "$out/attnlab_r$r.txt"
  "${cmd[@]}" >> "$out/attnlab_r$r.txt" || { echo "attnlab run failed" >&2; exit 1; }
  grep -E '^(sgemm|bench_nn_train|result|rate)' "$out/attnlab_r$r.txt" | cut -c1-160
  echo "== round $r: PyTorch   (load $(cut -d' ' -f1-3 /proc/loadavg))"
  # PyTorch's BLAS is OpenBLAS too: give it the kernels attnlab's bench ran (the same as
  # OpenBLAS's own choice, except where that was a fallback without AVX the bench replaced,
  # core/blas_core.h).
  core=$(sed -n 's/.*openblas_core=\([^ ]*\).*/\1/p' "$out/attnlab_r$r.txt" | head -1)
  torch_env=("${run_env[@]}")
  [[ $keep_env == 0 && -n $core ]] && torch_env+=("OPENBLAS_CORETYPE=$core")
  cmd=("${torch_env[@]}" "$PY" "$TORCH_SCRIPT" "${common[@]}" --data "$out/dump")
  echo "\$ ${cmd[*]}" > "$out/torch_r$r.txt"
  "${cmd[@]}" >> "$out/torch_r$r.txt" || { echo "PyTorch run failed" >&2; exit 1; }
  grep -E '^(sgemm|sanford2023|result|rate|check|.*skipped)' "$out/torch_r$r.txt" | cut -c1-160
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"

"$PY" - "$out" "$rounds" <<'EOF'
import statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
GOAL = {"a": 10.0, "b": 1.5, "c": 1.5, "d": 2.0, "e": 2.0, "f": 2.0, "k": 2.0, "l": 2.0,
        "t2": 2.0, "t3": 2.0, "t4": 2.0, "t5": 2.0}
WHAT = {"a": "attention N=32 m=16 H=1 d'=4 B=64", "b": "attention N=32 m=64 H=4 d'=4 B=256",
        "c": "LSTM hidden=128 T=32 d'=4 B=256", "d": "attention N=32 m=16 H=1 d'=4 B=256",
        "e": "attention N=32 m=32 H=1 d'=4 B=256", "f": "third order N=16 m=16 H=1 d'=4 B=256",
        "g": "attention N=64 m=128 H=1 d'=4 B=256", "h": "attention N=64 m=64 H=1 d'=4 B=256",
        "i": "attention N=16 m=64 H=1 d'=4 B=256",  # g, h, i: sanford2023 E1's shapes, no goal
        "k": "LSTM hidden=128 T=32 head 128 d'=4 B=256",
        "l": "LSTM hidden=128 T=16 head 128 d'=4 B=256"}
for _l in (2, 3, 4, 5):
    WHAT[f"t{_l}"] = f"causal transformer L={_l} m=128 H=4 N=64 B=32"
def parse(path):
    res = {}
    for line in open(path):
        kind, *kv = line.split() or [""]
        if kind == "sgemm":
            res["sgemm"] = float(dict(x.split("=", 1) for x in kv if "=" in x)["gflops"])
        elif kind in ("result", "phases", "check", "rate"):
            d = dict(x.split("=", 1) for x in kv if "=" in x)
            if kind == "check": d["status"] = "ok" if "ok" in kv else "MISMATCH"
            res.setdefault(d["config"], {})[kind] = d
    return res
A = [parse(f"{out}/attnlab_r{r}.txt") for r in range(1, rounds + 1)]
T = [parse(f"{out}/torch_r{r}.txt") for r in range(1, rounds + 1)]
med = statistics.median
def col(runs, c, key):
    return [float(x[c]["result"][key]) for x in runs if "result" in x.get(c, {})]
print(f"\n| config | params attnlab / torch | attnlab steps/s | torch steps/s | ratio (range over "
      f"{rounds} rounds) | attnlab steps/CPU-s | torch steps/CPU-s | ratio CPU | goal |")
print("|---|---|---:|---:|---:|---:|---:|---:|---|")
for c in A[0]:
    if c == "sgemm":
        continue
    pa = A[0][c]["result"]["params"]
    aw, ac = col(A, c, "steps_per_s"), col(A, c, "cpu_steps_per_s")
    tw, tc = col(T, c, "steps_per_s"), col(T, c, "cpu_steps_per_s")
    goal = f"≥ {GOAL[c]:g}×" if c in GOAL else "none set"
    if not tw:
        print(f"| {c}: {WHAT[c]} | {pa} / — | {med(aw):.1f} | — | — | {med(ac):.1f} | — | — | "
              f"{goal} (no PyTorch) |")
        continue
    pt = T[0][c]["result"]["params"]
    same = "" if pa == pt else " **DIFFER**"
    per_round = [x / y for x, y in zip(aw, tw)]
    ratio, ratio_cpu = med(aw) / med(tw), med(ac) / med(tc)
    met = ("met" if ratio >= GOAL[c] else f"missed ({GOAL[c] / ratio:.1f}× short)") if c in GOAL \
        else "—"
    print(f"| {c}: {WHAT[c]} | {pa} / {pt}{same} | {med(aw):.1f} | {med(tw):.1f} | **{ratio:.2f}×** "
          f"({min(per_round):.2f}–{max(per_round):.2f}) | {med(ac):.1f} | {med(tc):.1f} | {ratio_cpu:.2f}× | "
          f"{goal}: {met} |")
print(f"\nCPU ms per step (median over rounds), the CPU ratio per round, and the share of the "
      f"1-thread sgemm rate (attnlab's OpenBLAS, 2048³, measured at the start of each attnlab run; "
      f"torch: its torch.mm rate) that the model's flops make:\n")
print("| config | flops/step | attnlab ms | torch ms | CPU ratio (range) | attnlab share of sgemm "
      "| torch share of its mm | targets: ≥ 2× and ≥ 60 % |")
print("|---|---:|---:|---:|---:|---:|---:|---|")
for c in A[0]:
    if c in ("sgemm",) or "rate" not in A[0][c]:
        continue
    am = [float(x[c]["rate"]["cpu_ms_per_step"]) for x in A if "rate" in x.get(c, {})]
    ash = [float(x[c]["rate"]["share_of_sgemm"]) for x in A if "rate" in x.get(c, {})]
    tm = [float(x[c]["rate"]["cpu_ms_per_step"]) for x in T if "rate" in x.get(c, {})]
    tsh = [float(x[c]["rate"]["gflops"]) / x["sgemm"] for x in T
           if "rate" in x.get(c, {}) and "sgemm" in x]
    fl = float(A[0][c]["rate"]["flops_per_step"])
    if tm:
        pr = [t / a for a, t in zip(am, tm)]
        r = med(tm) / med(am)
        verdict = ("met" if r >= 2 and med(ash) >= 0.6 else
                   f"{'ratio met' if r >= 2 else 'ratio missed'}, "
                   f"{'share met' if med(ash) >= 0.6 else 'share missed'}")
        print(f"| {c}: {WHAT[c]} | {fl:.3g} | {med(am):.2f} | {med(tm):.2f} | **{r:.2f}×** "
              f"({min(pr):.2f}–{max(pr):.2f}) | {100 * med(ash):.0f} % "
              f"({100 * min(ash):.0f}–{100 * max(ash):.0f}) | "
              f"{100 * med(tsh):.0f} % | {verdict} |")
    else:
        print(f"| {c}: {WHAT[c]} | {fl:.3g} | {med(am):.2f} | — | — | {100 * med(ash):.0f} % | — | — |")
print("\nms per step by phase (round 1, one extra repetition; backward includes zero_grad):\n")
print("| config | program | forward | loss | backward | optimiser | total |")
print("|---|---|---:|---:|---:|---:|---:|")
for c in A[0]:
    if c == "sgemm":
        continue
    for name, res in (("attnlab", A[0]), ("torch", T[0])):
        p = res.get(c, {}).get("phases")
        if p:
            print(f"| {c} | {name} | " + " | ".join(f"{float(p[k]):.3f}" for k in
                  ("forward_ms", "loss_ms", "backward_ms", "optimizer_ms", "total_ms")) + " |")
checks = [f"{c}: {T[0][c]['check']['status']} (largest relative difference {T[0][c]['check']['max_rel_diff']})"
          for c in A[0] if c != "sgemm" and "check" in T[0].get(c, {})]
if checks:
    print("\nsame initial weights and batches, first 5 losses attnlab vs torch: " + "; ".join(checks))
EOF
