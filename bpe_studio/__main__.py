"""``python -m bpe_studio`` is the ``bpe-studio`` command."""

import sys

if __name__ == "__main__":
    try:
        from .cli import program
    except KeyboardInterrupt:  # Ctrl-C while the command's first module loads: one line
        sys.stderr.write("bpe-studio: error: interrupted\n")
        sys.exit(130)
    sys.exit(program())
