"""``python -m neml2.compile``: the neml2-compile command line."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
