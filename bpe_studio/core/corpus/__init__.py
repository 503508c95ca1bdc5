"""Corpora: reading training text and counting its pre-tokens. ``sources``: where a corpus's
files are (paths, globs, fsspec URLs, compression); ``records``: JSON Lines and Parquet
records as documents; ``counting``: the counting primitives and byte-range workers;
``tasks``: a corpus as counting tasks, run in this machine's processes (``count_file``);
``tally``: counts kept in arrays by the compiled kernels; ``cluster``: the same tasks on a
Dask cluster, whose workers check their copy of each file (``on_worker``). What it leaves
out: merging (``train``)."""
