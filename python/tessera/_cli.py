"""The `tessera` command of a pip-installed package: runs the engine's own command,
installed in the package (tessera/bin/tessera), with the same arguments."""

import os
import sys


def main() -> None:
    command = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "tessera")
    if not os.path.exists(command):
        sys.exit("tessera: the command is not installed with this package "
                 f"({command} is missing); reinstall with `pip install .`")
    os.execv(command, [command, *sys.argv[1:]])


if __name__ == "__main__":
    main()
