"""What a Hugging Face ``tokenizer.json`` does to text, reproduced exactly for byte-level BPE.

What it does: ``onig`` (Oniguruma patterns in the ``regex`` module's terms), ``normalizers``,
``pre_tokenizers``, ``added_tokens`` and ``template`` read one component each; ``pipeline``
runs them in ``tokenizers``' order; ``components`` reads them all from a file's JSON. What it
leaves out: the model (vocabulary and merges: ``tokenizer_json``) and merging (``encode``).
"""
