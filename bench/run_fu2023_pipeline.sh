#!/usr/bin/env bash
# The fu2023 random-feature pipeline, attnlab (bench_rf_pipeline) against numpy /
# scikit-learn (fu2023_pipeline_numpy.py), on the same data and the same W, at 1 and 2
# threads; prints the stage times and the ratios attnlab/numpy (< 1: attnlab faster).
# Benchmarks measure, they never pass or fail: the exit code only reports a broken run.
#
# Usage: bench/run_fu2023_pipeline.sh [--n 8192] [--n-test 10000] [--heads 1000]
#          [--threads "1 2"] [--variants all] [--out DIR] [--keep-blas-env]
#   --variants     numpy solver variants timed at the first thread count (the fastest of
#                  them is the baseline and the only one run at the other thread counts)
#   --out DIR      keep data, W and the raw outputs there (default: a fresh temp dir)
#   --keep-blas-env  keep OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE for both programs; by
#                  default both are unset for both commands (only there), so that both use
#                  the same, autodetected OpenBLAS kernel (or, on a CPU OpenBLAS does not know,
#                  the one attnlab replaces its fallback with: `attnlab --version`); the core in
#                  use is printed.
# Needs: cmake --preset default -DATTNLAB_BENCH=ON && cmake --build build --target
#   attnlab_cli bench_rf_pipeline; Debian's /usr/bin/python3 with python3-numpy,
#   python3-sklearn (scripts/install-deps --bench).
# Full size takes about 10-15 minutes on 2 vCPUs.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${ATTNLAB_BUILD:-$ROOT/build}
ATTNLAB=$BUILD/attnlab
BENCH=$BUILD/bench/bench_rf_pipeline
PY=/usr/bin/python3
NUMPY_SCRIPT=$ROOT/bench/fu2023_pipeline_numpy.py

n=8192 n_test=10000 heads=1000 threads="1 2" variants=all out="" keep_env=0
while [[ $# -gt 0 ]]; do
  case $1 in
    --n) n=$2; shift 2 ;;
    --n-test) n_test=$2; shift 2 ;;
    --heads) heads=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --variants) variants=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --keep-blas-env) keep_env=1; shift ;;
    -h|--help) awk 'NR > 1 && /^#/ { print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "run_fu2023_pipeline.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
for f in "$ATTNLAB" "$BENCH"; do
  if [[ ! -x $f ]]; then
    echo "run_fu2023_pipeline.sh: $f is missing; build it with: cmake --preset default" \
         "-DATTNLAB_BENCH=ON && cmake --build build -j2 --target attnlab_cli bench_rf_pipeline" >&2
    exit 2
  fi
done
if ! "$PY" -c 'import numpy, sklearn' 2>/dev/null; then
  echo "run_fu2023_pipeline.sh: $PY lacks numpy or scikit-learn (scripts/install-deps --bench)" >&2
  exit 2
fi
if [[ -z $out ]]; then out=$(mktemp -d "${TMPDIR:-/tmp}/fu2023_pipeline.XXXXXX"); fi
mkdir -p "$out"

# Copies, so that a rebuild of build/ during the run cannot mix two versions.
cp "$ATTNLAB" "$out/attnlab" && ATTNLAB=$out/attnlab
cp "$BENCH" "$out/bench_rf_pipeline" && BENCH=$out/bench_rf_pipeline

blas_env=(env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE)
[[ $keep_env == 1 ]] && blas_env=(env)
# Both programs on the kernels the command line runs: OpenBLAS's own choice, except on a CPU it
# does not know, where attnlab replaces its fallback without AVX (core/blas_core.h).
if [[ $keep_env == 0 ]]; then
  core=$("${blas_env[@]}" "$ATTNLAB" --version | sed -n 's/^OpenBLAS core \([^,]*\),.*/\1/p')
  [[ -n $core && $core != unknown ]] && blas_env+=("OPENBLAS_CORETYPE=$core")
fi

echo "# fu2023 pipeline benchmark, $(date -u '+%Y-%m-%d %H:%M UTC'), attnlab $(git -C "$ROOT" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)"
echo "machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) CPUs, $(grep -c '' <(lscpu -p=core | grep -v '^#' | sort -u)) cores;" \
     "flags: $(for f in avx2 fma avx512f; do grep -qw $f /proc/cpuinfo && printf '%s ' $f || printf 'no-%s ' $f; done)"
echo "environment: OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE-<unset>} OPENBLAS_L2_SIZE=${OPENBLAS_L2_SIZE-<unset>};" \
     "both programs run with: ${blas_env[*]}"
echo "outputs: $out"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"

sets=(--set task.N=16 --set task.d=16 --set task.target=pair_power --set task.p=2)
"$ATTNLAB" data rf_target --n "$n" "${sets[@]}" -q -o "$out/train.npz"
"$ATTNLAB" data rf_target --n "$n_test" --first 1000000000 "${sets[@]}" -q -o "$out/test.npz"

first=1
for t in $threads; do
  echo "== threads $t: attnlab   (load $(cut -d' ' -f1 /proc/loadavg))"
  cmd=("${blas_env[@]}" "$BENCH" --n "$n" --n-test "$n_test" --heads "$heads" --threads "$t"
       --weights-out "$out/W.npy")
  echo "\$ ${cmd[*]}" | tee "$out/attnlab_t$t.txt"
  "${cmd[@]}" | tee -a "$out/attnlab_t$t.txt" | grep -E '^(stage|dgemm) ' || { echo "attnlab run failed" >&2; exit 1; }
  v=$variants
  if [[ $first == 0 ]]; then v=$baseline; fi
  echo "== threads $t: numpy ($v)   (load $(cut -d' ' -f1 /proc/loadavg))"
  cmd=("${blas_env[@]}" "$PY" "$NUMPY_SCRIPT" --train "$out/train.npz" --test "$out/test.npz"
       --weights "$out/W.npy" --threads "$t" --variants "$v")
  echo "\$ ${cmd[*]}" | tee "$out/numpy_t$t.txt"
  "${cmd[@]}" | tee -a "$out/numpy_t$t.txt" | grep -E '^(stage total|variant|baseline|dgemm|fu2023)' \
    || { echo "numpy run failed" >&2; exit 1; }
  if [[ $first == 1 ]]; then
    baseline=$(sed -n 's/^baseline \([a-z_]*\) .*/\1/p' "$out/numpy_t$t.txt")
    first=0
  fi
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"

"$PY" - "$out" $threads <<'EOF'
import re, sys
out, threads = sys.argv[1], sys.argv[2:]
STAGE = re.compile(r"^stage\s+(\S+)\s+([\d.]+) s\s+cpu\s+([\d.]+) s")
def parse(path):
    variants, cur, res, other = {}, None, {}, []
    for line in open(path):
        if line.startswith("variant "):
            cur = line.split()[1]; variants[cur] = {"stages": {}, "results": {}}
            continue
        m = STAGE.match(line)
        tgt = variants[cur] if cur else None
        if m:
            (tgt["stages"] if tgt else res.setdefault("stages", {}))[m.group(1)] = (float(m.group(2)), float(m.group(3)))
        elif line.startswith("result data_checksum"):
            res["checksum"] = [float(x.split("=")[1]) for x in line.split()[2:]]
        elif line.startswith("result "):
            parts = line.split()
            key = " ".join(parts[1:-1]) if parts[1].endswith("_path") else parts[1]
            val = parts[-1] if parts[1].endswith("_path") else parts[2]
            try: val = float(val)
            except ValueError: continue
            (tgt["results"] if tgt else res.setdefault("results", {}))[key] = val
        elif line.startswith(("dgemm", "products", "baseline", "fu2023", "bench_rf")):
            other.append(line.rstrip())
    return res, variants, other
# Rows in attnlab's stage order; "=" rows group stages whose split differs between the
# programs (numpy's Cholesky variants have no eig stage, skl_ridge forms K inside its solve,
# numpy's test pass gives the predictions and the whole λ path at once): compare those.
ROWS = [("data", ["data"]), ("features (fit split)", ["features"]), ("kernel K = ΦΦᵀ/n", ["kernel"]),
        ("eigendecomposition", ["eig"]), ("λ grid on validation", ["lambda_val"]),
        ("= kernel + solve (K, eig, λ grid)", ["kernel", "eig", "lambda_val"]),
        ("test predictions", ["predict_test"]), ("test λ path", ["path_test"]),
        ("= test (predictions + λ path)", ["predict_test", "path_test"]),
        ("training-set predictions", ["predict_train"]), ("**end to end**", ["total"])]
def get(st, keys, i):
    return sum(st.get(k, (0.0, 0.0))[i] for k in keys)
baseline = None
for t in threads:
    a, _, a_other = parse(f"{out}/attnlab_t{t}.txt")
    _, nv, n_other = parse(f"{out}/numpy_t{t}.txt")
    for line in n_other:
        if line.startswith("baseline"): baseline = baseline or line.split()[1]
    b = nv[baseline] if baseline in nv else next(iter(nv.values()))
    name = baseline if baseline in nv else next(iter(nv))
    print(f"\n### {t} thread(s): attnlab vs numpy baseline `{name}` (ratio = attnlab / numpy time; < 1: attnlab faster)\n")
    print("| stage | attnlab wall s | numpy wall s | ratio wall | attnlab CPU s | numpy CPU s | ratio CPU |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for label, keys in ROWS:
        aw, ac = get(a["stages"], keys, 0), get(a["stages"], keys, 1)
        bw, bc = get(b["stages"], keys, 0), get(b["stages"], keys, 1)
        rw = f"{aw / bw:.2f}" if bw > 0.0005 else "—"
        rc = f"{ac / bc:.2f}" if bc > 0.0005 else "—"
        print(f"| {label} | {aw:.2f} | {bw:.2f} | {rw} | {ac:.2f} | {bc:.2f} | {rc} |")
    if len(nv) > 1:
        print("\nnumpy / scikit-learn variants, end to end: " + "; ".join(
            f"`{k}` {v['stages']['total'][0]:.2f} s wall, {v['stages']['total'][1]:.2f} s CPU" for k, v in nv.items()))
    print()
    for line in a_other + n_other:
        if line.startswith(("dgemm", "products large", "baseline")): print("    " + line)
    # Same data, same W: the numbers should agree to many digits.
    ra, rb = a["results"], b["results"]
    ca = a.get("checksum", [])
    cb = parse(f"{out}/numpy_t{t}.txt")[0].get("checksum", [])
    same = len(ca) == 2 and len(cb) == 2 and all(abs(x - y) <= 1e-9 * max(1.0, abs(x)) for x, y in zip(ca, cb))
    print(f"\n    data: train/test label sums attnlab {ca}, numpy {cb}: {'same data' if same else 'DIFFERENT DATA'}")
    diffs = []
    for k, va in ra.items():
        vb = rb.get(k)
        if vb is None or va != va or vb != vb: continue
        diffs.append((abs(va - vb) / max(abs(va), 1e-300), k, va, vb))
    if diffs:
        worst = max(diffs)
        print(f"\n    check: {len(diffs)} shared results (λ chosen, val MSE and test NMSE along the path, ...),"
              f" largest relative difference {worst[0]:.2e} ({worst[1]}: attnlab {worst[2]:.10g}, numpy {worst[3]:.10g});"
              f" attnlab test NMSE {ra.get('test_nmse', float('nan')):.6g} at λ = {ra.get('lambda_chosen', float('nan')):g}")
EOF
