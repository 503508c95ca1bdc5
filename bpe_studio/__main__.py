"""``python -m bpe_studio`` is the ``bpe-studio`` command."""

import sys

from .cli import program

if __name__ == "__main__":
    sys.exit(program())
