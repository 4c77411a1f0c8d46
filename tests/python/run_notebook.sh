#!/bin/sh
# ctest python_notebook: executes examples/tour.ipynb with Debian's jupyter-nbconvert and the
# module of this build tree, by docs/python.md's PYTHONPATH route (an absolute PYTHONPATH) from
# inside examples/ (a copy of it, so nothing is written into the checkout); a cell that raises
# fails the test; TMPDIR is SCRATCH_DIR/tmp, so the tour's own temporary folder stays there too.
# Exit 77 (skipped) when jupyter-nbconvert or python3-ipykernel is not installed.
# Usage: run_notebook.sh SOURCE_DIR BUILD_DIR SCRATCH_DIR
set -eu
src=$1 build=$2 tmp=$3
if ! command -v jupyter-nbconvert >/dev/null || ! /usr/bin/python3 -c "import ipykernel" 2>/dev/null; then
  echo "skipped: jupyter-nbconvert or python3-ipykernel is not installed (apt-get install jupyter-nbconvert python3-ipykernel python3-nbformat)"
  exit 77
fi
rm -rf "$tmp" && mkdir -p "$tmp/examples" "$tmp/tmp" && cp "$src/examples/tour.ipynb" "$tmp/examples/"
cd "$tmp/examples"
PYTHONPATH="$build/python" PATH="/usr/bin:$PATH" MPLBACKEND=Agg TMPDIR="$tmp/tmp" \
  jupyter-nbconvert --to notebook --execute --ExecutePreprocessor.timeout=600 \
  tour.ipynb --output-dir "$tmp"
echo "python_notebook: ok"
