"""The merge internals under the encoder: turning pre-tokens into ids by merge rank.

The Python path: ``merger`` (Merger: the rank table, the per-pre-token cache, the merge
strategies ``batch_bpe``, ``char_bpe`` and ``char_cuts``), ``packed`` (packed ids, the rank
table). The compiled path: ``compiled`` (CompiledMerger), ``encode_kernel`` (numba),
``piece_table`` (the bounded piece cache), ``kernel_start`` (loading, compiling once),
``pipeline_scan`` (a tokenizer.json's scanner). What it leaves out: the public API and the
engine that chooses a path (``encode``: ``tokenizer``, ``encoder``), building the tables
(``building``). Imports no module of ``encode`` outside it.
"""
