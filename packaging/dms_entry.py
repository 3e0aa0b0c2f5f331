"""Entry point of the PyInstaller build: the same command line as `python -m dms`."""

import sys

from dms.cli import main

if __name__ == "__main__":
    sys.exit(main())
