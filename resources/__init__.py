"""Data files of BPE Studio, installed as the package ``bpe_studio.resources``.

No code: read the files with ``importlib.resources.files("bpe_studio.resources")``, which
works the same from a checkout's editable install and from a wheel. README.md here lists them.
"""
