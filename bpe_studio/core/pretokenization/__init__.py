"""Pre-tokenization: splitting text into the pieces BPE merges within.

``stage`` is the interface every pre-tokenizer offers, ``names`` holds the named patterns and
their spellings, ``pretokenizer`` compiles a pattern and splits text with it, ``re_split`` runs
the named patterns on the standard library's ``re``, ``specials`` splits special tokens out
first, and ``boundaries`` says where each pattern lets text be cut without changing its
pre-tokens (what chunked counting, chunked encoding and the editor rely on). The compiled
scanners: ``scanner`` (the API), ``scan_patterns`` (which regexes have one),
``scan_tables`` (the Unicode classes, from ``regex``), ``scan_kernels`` and
``count_kernels`` (numba), ``scan_load`` (loading, or compiling once per machine)."""
