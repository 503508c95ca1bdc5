"""Encoding and decoding: the rank-based ``Tokenizer`` (``tokenizer``), its batch merge
strategies (``batch_bpe``, ``char_bpe``, ``char_cuts``) and encoding whole files
(``encode_file``, with ``forked_encode``'s worker crew)."""
