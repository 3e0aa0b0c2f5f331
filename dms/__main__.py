"""`python -m dms`: the command line (dms.cli)."""

import sys

from dms.cli import main

if __name__ == "__main__":
    sys.exit(main())
