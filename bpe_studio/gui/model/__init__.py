"""The app's model: plain Python the views read, with no Qt (an import-linter contract checks it).

What it holds: the record of the run (:mod:`.state`), the tokenizers the views show
(:mod:`.tokenizer_source`), the one cache of tokenizers built in background jobs
(:mod:`.tokenizer_cache`) and the recipes the inspector builds them from
(:mod:`.tokenizer_recipes`), the vocabulary table's sort and filter index (:mod:`.vocab_index`),
the compression curves and their process (:mod:`.curves`, :mod:`.curve_server`), the held-out
text's label and check (:mod:`.heldout`), the time-left estimate (:mod:`.remaining`) and
what each tokenizer file is called (its model's name, :mod:`.file_names`).
What it leaves out: signals, threads that talk to widgets, and widgets (the rest of ``gui``).
"""
