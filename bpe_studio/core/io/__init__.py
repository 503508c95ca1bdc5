"""What every stage shares: atomic file writes (``atomic``), the per-user cache folder
(``user_cache``), surrogate code points in text (``surrogates``) and readable renderings of
token bytes (``display``). Imports nothing else of the core."""
