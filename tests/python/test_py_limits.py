"""Resource limits at the Python boundary: under an address-space limit below what OpenBLAS
needs (RLIMIT_AS, `ulimit -v`, SGE's h_vmem), `import attnlab` refuses at once with the limit
named, instead of hanging at the first fit (measured: an rfa fit under 300 MB spun until
killed)."""
import os
import resource
import subprocess
import sys


def _under_limit(code, limit_bytes):
    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (limit_bytes, limit_bytes))
    return subprocess.run([sys.executable, "-c", code], preexec_fn=limit, capture_output=True,
                          text=True, timeout=60, env=dict(os.environ))


def test_import_under_a_small_address_limit_names_it_and_does_not_hang():
    code = ("import attnlab\n"
            "d = attnlab.sample('rf_target', n=200, seed=0, N=4, d=4, p=1)\n"
            "attnlab.model('rfa', seed=1, heads=16).fit(d['X'], d['Y'])\n")
    r = _under_limit(code, 300 << 20)
    assert r.returncode != 0
    assert "ImportError: the address-space limit of this process" in r.stderr, r.stderr
    assert "is 300.0 MiB" in r.stderr and "raise the limit" in r.stderr, r.stderr


def test_import_leaves_no_openblas_worker_thread():
    # OpenBLAS starts (cores - 1) worker threads when it loads (here with numpy, which shares
    # attnlab's OpenBLAS); the import ends them (core/blas_threads.h), so a later fork never
    # waits on one. Python itself runs no other thread here.
    code = ("import os, numpy\n"
            "before = len(os.listdir('/proc/self/task'))\n"
            "import attnlab\n"
            "print(before, len(os.listdir('/proc/self/task')), os.cpu_count())\n")
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                       env=env)
    assert r.returncode == 0, r.stderr
    before, after, cpus = (int(x) for x in r.stdout.split())
    assert before >= min(cpus, 2), r.stdout  # numpy's OpenBLAS started its worker threads
    assert after == 1, r.stdout
