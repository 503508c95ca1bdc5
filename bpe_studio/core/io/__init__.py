"""What every stage shares: atomic file writes (``atomic``), the per-user cache folder
(``user_cache``), surrogate code points in text (``surrogates``) and readable renderings of
token bytes (``display``), tokenizer files fetched from the Hugging Face Hub into its cache
(``hf_hub``), where numba caches compiled kernels (``numba_cache``, imported only with
numba). Imports nothing else of the core."""
