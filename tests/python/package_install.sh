#!/bin/sh
# ctest python_package: the attnlab package as a user installs it (docs/python.md), offline:
# a venv seeing Debian's packages, `pip install --no-build-isolation .` reusing this build
# tree (ATTNLAB_BUILD_DIR), import, `python -m attnlab --version` equal to the CLI's, the
# shipped experiments found in the installed copy, and a wheel with `python3 -m build`.
# Exit 77 (skipped) without python3-venv; the wheel step is skipped without python3-build.
# Usage: package_install.sh SOURCE_DIR BUILD_DIR SCRATCH_DIR
set -eu
src=$1 build=$2 tmp=$3
py=/usr/bin/python3
if ! $py -c "import ensurepip, venv" 2>/dev/null; then
  echo "skipped: python3-venv is not installed (apt-get install python3-venv)"; exit 77
fi
rm -rf "$tmp" && mkdir -p "$tmp"
$py -m venv --system-site-packages "$tmp/v"
cd "$src"
ATTNLAB_BUILD_DIR="$build" "$tmp/v/bin/pip" install --no-build-isolation --no-index -q .
cd "$tmp"
cli_version=$("$build/attnlab" --version)
"$tmp/v/bin/python" - "$tmp" "$cli_version" <<'PY'
import os, sys
import attnlab
tmp, cli_version = sys.argv[1], sys.argv[2]
assert attnlab.__file__.startswith(os.path.join(tmp, "v")), attnlab.__file__
assert cli_version.split()[1] == attnlab.__version__, (cli_version, attnlab.__version__)
assert attnlab.home() == os.path.join(os.path.dirname(attnlab.__file__), "share"), attnlab.home()
assert "demo" in attnlab.groups(), attnlab.groups()
assert os.path.isfile(os.path.join(attnlab.home(), "scripts", "plot_results.py"))
assert attnlab.cli_path() == os.path.join(os.path.dirname(attnlab.__file__), "bin", "attnlab")
print("installed", attnlab.__file__, attnlab.__version__)
PY
test "$(ATTNLAB_CLI= "$tmp/v/bin/python" -m attnlab --version)" = "$cli_version"
ATTNLAB_CLI= "$tmp/v/bin/python" -m attnlab list | grep -q "demo"
if $py -c "import build" 2>/dev/null; then
  cd "$src"
  ATTNLAB_BUILD_DIR="$build" $py -m build --no-isolation --wheel --outdir "$tmp/dist" >"$tmp/build.log" 2>&1 ||
    { cat "$tmp/build.log"; exit 1; }
  $py - "$tmp/dist" <<'PY'
import glob, sys, zipfile
(wheel,) = glob.glob(sys.argv[1] + "/attnlab-*.whl")
names = set(zipfile.ZipFile(wheel).namelist())
for want in ("attnlab/__init__.py", "attnlab/__main__.py", "attnlab/bin/attnlab",
             "attnlab/share/experiments/demo/baselines.toml", "attnlab/share/scripts/plot_results.py"):
    assert want in names, (want, sorted(names)[:20])
assert any(n.startswith("attnlab/_attnlab") and n.endswith(".so") for n in names)
print("wheel", wheel)
PY
else
  echo "wheel: skipped, python3-build is not installed"
fi
echo "python_package: ok"
