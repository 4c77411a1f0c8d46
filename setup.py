"""setuptools driving CMake for the attnlab package (pyproject.toml says how to call it).

build_ext builds the CMake targets attnlab_python (the extension attnlab._attnlab) and
attnlab_cli, then puts next to the pure-Python package (python/attnlab/):
  _attnlab*.so      the extension
  bin/attnlab       the command line, for `python -m attnlab`
  share/            experiments/ and scripts/plot_results.py (not for editable installs,
                    which use the source tree): attnlab/__init__.py points ATTNLAB_HOME here
The build tree is $ATTNLAB_BUILD_DIR when set (an existing CMake build dir, reused as it is
configured), else build-python/ under the source tree (configured once; a second install
is incremental). The version comes from CMakeLists.txt's project(VERSION), as the
extension's attnlab.__version__ does.
"""
import glob
import os
import re
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))
os.makedirs(os.path.join(ROOT, "build-python"), exist_ok=True)  # setuptools's staging (below)


def cmake_version():
    with open(os.path.join(ROOT, "CMakeLists.txt"), encoding="utf-8") as f:
        m = re.search(r"project\(attnlab\s+VERSION\s+([0-9.]+)", f.read())
    if not m:
        sys.exit("setup.py: no project(attnlab VERSION x.y.z) in CMakeLists.txt")
    return m.group(1)


class CMakeBuild(build_ext):
    def run(self):
        for ext in self.extensions:
            self.build_cmake(ext)

    def build_cmake(self, ext):
        build_dir = os.environ.get("ATTNLAB_BUILD_DIR")
        if build_dir:
            build_dir = os.path.abspath(build_dir)
            if not os.path.isfile(os.path.join(build_dir, "CMakeCache.txt")):
                sys.exit(f"setup.py: ATTNLAB_BUILD_DIR={build_dir} is not a CMake build "
                         "directory (no CMakeCache.txt); configure it first, e.g. "
                         "`cmake --preset default`, or unset ATTNLAB_BUILD_DIR")
        else:
            build_dir = os.path.join(ROOT, "build-python")
            if not os.path.isfile(os.path.join(build_dir, "CMakeCache.txt")):
                subprocess.check_call(["cmake", "-S", ROOT, "-B", build_dir, "-DCMAKE_BUILD_TYPE=Release",
                                       "-DATTNLAB_BUILD_TESTS=OFF", "-DATTNLAB_PYTHON_MODULE=ON",
                                       f"-DPython3_EXECUTABLE={os.path.realpath(sys.executable)}"])
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", "2")
        subprocess.check_call(["cmake", "--build", build_dir, "-j", jobs, "--target", "attnlab_python",
                               "attnlab_cli"])
        built = glob.glob(os.path.join(build_dir, "python", "attnlab", "_attnlab*.so"))
        if len(built) != 1:
            sys.exit(f"setup.py: expected one _attnlab*.so in {build_dir}/python/attnlab, found {built}")
        target = self.get_ext_fullpath(ext.name)
        pkg = os.path.dirname(target)
        os.makedirs(pkg, exist_ok=True)
        shutil.copy2(built[0], target)
        os.makedirs(os.path.join(pkg, "bin"), exist_ok=True)
        shutil.copy2(os.path.join(build_dir, "attnlab"), os.path.join(pkg, "bin", "attnlab"))
        if not self.inplace:  # editable installs read experiments/ and scripts/ in the source tree
            share = os.path.join(pkg, "share")
            shutil.rmtree(share, ignore_errors=True)
            shutil.copytree(os.path.join(ROOT, "experiments"), os.path.join(share, "experiments"))
            os.makedirs(os.path.join(share, "scripts"))
            shutil.copy2(os.path.join(ROOT, "scripts", "plot_results.py"), os.path.join(share, "scripts"))


setup(
    version=cmake_version(),
    packages=["attnlab"],
    package_dir={"": "python"},
    ext_modules=[Extension("attnlab._attnlab", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    zip_safe=False,
    # setuptools's own staging directories, away from a CMake build dir named build/
    options={"build": {"build_base": os.path.join("build-python", "setuptools")},
             "egg_info": {"egg_base": os.path.join("build-python")}},
)
