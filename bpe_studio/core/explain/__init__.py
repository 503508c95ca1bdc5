"""Explaining a tokenizer: how a token is made and what it makes (``merge_tree``), one
pre-token encoded step by step (``encode_steps``), the tokens encoding never produces
(``reach``), a text's token spans packed for the editor (``span_arrays``) and moved to any step
of the merges (``spans_at_step``), compression curves over a run (``compression``), the
comparison report (``report``) and the vocabulary lab (``vocabulary``, ``usage``,
``overlap``, ``undertrained``)."""
