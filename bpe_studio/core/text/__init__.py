"""Text as the tokenizers take it and as people read it: surrogate code points, encoded as
tiktoken encodes them (``surrogates``), and token bytes rendered readably, with counts and
their nouns (``display``). Imports nothing else of the core."""
