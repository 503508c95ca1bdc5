"""Pre-tokenization: splitting text into the pieces BPE merges within.

``names`` holds the named patterns and their spellings, ``pretokenizer`` compiles a pattern and
splits text with it, ``re_split`` runs the named patterns on the standard library's ``re``,
``specials`` splits special tokens out first, and ``boundaries`` says where each pattern lets
text be cut without changing its pre-tokens (what chunked counting, chunked encoding and the
editor rely on)."""
