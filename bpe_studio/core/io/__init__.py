"""What every stage shares for files and processes: atomic file writes (``atomic``), the
per-user cache folder (``user_cache``), tokenizer files fetched from the Hugging Face Hub into
its cache (``hf_hub``), the cyclic collector paused for a block (``gc_pause``), where numba
caches compiled kernels (``numba_cache``) and how their helpers are compiled
(``kernel_options``), both imported only with numba, NumPy's huge-page
advice set for the machine (``huge_pages``), a pool worker's freed memory kept for its
next chunk (``worker_memory``), Ctrl-C held while a pool runs (``interrupts``), a child
process that ends when its parent does (``parent_exit``), pools of such workers
(``worker_pool``), and the read-only dict and list a tokenizer hands out (``read_only``).
Imports nothing else of the core."""
