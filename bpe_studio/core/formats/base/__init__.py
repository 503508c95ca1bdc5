"""What every format's reader and writer build on, below them all: the record they read into
and write from (``data``: TokenizerData), GPT-2's byte-to-character notation its files and
``tokenizer.json`` write tokens in (``byte_chars``), and the presets' names, patterns and
special tokens (``preset_table``), why a file is not JSON (``json_errors``: cut short, or
where it breaks), and which case-insensitive constructs the other regex engines match
otherwise (``case_folds``, read by both pattern checks), the regex module's fuzzy matching,
which neither of them has (``fuzzy``, refused by both), and the warning of files that do not
bring a tokenizer back by themselves (``lossy``). Imports no other module of
``formats``."""
