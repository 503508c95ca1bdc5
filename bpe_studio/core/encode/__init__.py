"""Encoding and decoding: the public ``Tokenizer`` (``tokenizer``) over its ``Merger``
(``merger``: the rank table, the per-pre-token cache and the merge strategies ``batch_bpe``,
``char_bpe``, ``char_cuts``), the packed id and rank formats (``packed``), encoding whole
files in a process pool (``encode_file``), and tokenizers of other kinds (WordPiece, Unigram,
SentencePiece-style BPE) run by Hugging Face's ``tokenizers`` (``foreign``)."""
