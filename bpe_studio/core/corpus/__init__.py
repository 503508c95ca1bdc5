"""Corpora: reading training text and counting its pre-tokens, in parallel worker processes
(``counting``). What it leaves out: merging (``train``)."""
