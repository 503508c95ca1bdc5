"""``python -m bpe_studio`` is the ``bpe-studio`` command."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
