"""``python -m asmevo``: the ``asmevo`` command (:func:`asmevo.cli.main`)."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
