# attnlab: the two set-up commands of the README, and a few helpers.
#   make reproduce   install missing Debian packages, build, run the main job
#   make test        install missing Debian packages, build, run the test suite
#   make test-cluster  the test on a real single-node Slurm cluster (as root; docs/cluster.md)
#   make test-asan   the unit suite under ASan+UBSan (build-debug/; docs/reliability.md)
#   make fuzz-smoke  every fuzz target on its seeds plus 60 s (build-fuzz/; scripts/fuzz)
# Everything builds in build/ (CMake preset "default"); the CLI is build/attnlab.

JOBS ?= 2

.PHONY: all deps build test test-heavy test-cluster test-asan fuzz-smoke verdict-stability reproduce bench clean

all: build

deps:
	scripts/install-deps

build: deps
	cmake --preset default
	cmake --build --preset default -j $(JOBS)

test: build
	ctest --preset default -j $(JOBS)

# Checks too slow for CI (label "heavy").
test-heavy: build
	ctest --test-dir build --output-on-failure -L heavy

# Starts munged, slurmctld and slurmd as root and runs the job scripts of docs/cluster.md
# (label "cluster"; skipped when not root or Slurm is not installed). Run by .ci/run.
test-cluster: build
	ctest --test-dir build --output-on-failure -L cluster

# The unit suite built with ASan+UBSan (preset "debug", build-debug/), UBSan halting on the
# first report and Open MPI's own leaks suppressed (test preset "asan"; run by .ci/run). The
# tests labelled slow_asan (minutes under ASan) and heavy are left out; see docs/reliability.md.
test-asan: deps
	cmake --preset debug
	cmake --build --preset debug -j $(JOBS) --target attnlab_cli attnlab_tests
	ctest --preset asan -j $(JOBS)

# Every libFuzzer target (clang-14, preset "fuzz", build-fuzz/) on its seed corpus plus
# 60 s; fails on a crash, a sanitizer report, a leak or a timeout. Run by .ci/run.
# `scripts/fuzz` alone fuzzes for an hour.
fuzz-smoke: deps
	scripts/fuzz --smoke

# Every group's quick reproduction on the Haswell and on the autodetected BLAS kernel: fails
# when any claim's verdict differs between the two (scripts/verdict-stability). Run by .ci/run.
verdict-stability: build
	scripts/verdict-stability

# Exit code 1 (a claim FAILED) or 3 (a claim INCONCLUSIVE) from `attnlab reproduce` is a
# result, written in the group's report.md; only errors (exit 2) stop the main job.
reproduce: build
	build/attnlab reproduce demo --quick || test $$? -eq 1 -o $$? -eq 3
	build/attnlab reproduce fu2023 --quick || test $$? -eq 1 -o $$? -eq 3
	build/attnlab reproduce sanford2023 --quick || test $$? -eq 1 -o $$? -eq 3
	build/attnlab reproduce constructions --quick || test $$? -eq 1 -o $$? -eq 3
	build/attnlab reproduce hop2024 --quick || test $$? -eq 1 -o $$? -eq 3
	build/attnlab reproduce sep2025 --quick || test $$? -eq 1 -o $$? -eq 3

# Micro-benchmarks (measure, never pass or fail); see docs/performance.md.
bench: deps
	cmake --preset default -DATTNLAB_BENCH=ON
	cmake --build --preset default -j $(JOBS) --target bench_rf_features bench_sparse_rows
	build/bench/bench_rf_features
	build/bench/bench_sparse_rows

clean:
	rm -rf build build-debug build-native build-fuzz

# Python bindings (docs/python.md): builds build/python/attnlab (the default build does) and
# writes a .pth file into the user site-packages of Debian's /usr/bin/python3 pointing at it,
# so that `import attnlab` works there. No network, no package index.
.PHONY: python
python: build
	@site=$$(/usr/bin/python3 -m site --user-site) && mkdir -p "$$site" && \
	  echo "$(CURDIR)/build/python" > "$$site/attnlab.pth" && \
	  echo "wrote $$site/attnlab.pth -> $(CURDIR)/build/python"
	/usr/bin/python3 -c "import attnlab; print('import attnlab works:', attnlab.__file__)"
