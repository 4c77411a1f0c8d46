"""`python -m attnlab ARGS...`: the attnlab command line (the binary bundled with the
package, or the build tree's), with the package's ATTNLAB_HOME."""
import os
import sys

from . import cli_path


def main():
    path = cli_path()
    if path is None:
        sys.stderr.write("attnlab: error: no attnlab binary found next to the package "
                         f"({os.path.dirname(__file__)}/bin) or in its build tree; reinstall the "
                         "package, or set ATTNLAB_CLI to the binary\n")
        sys.exit(2)
    os.execv(path, [path] + sys.argv[1:])


if __name__ == "__main__":
    main()
