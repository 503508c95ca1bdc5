"""tiktoken's rank files (``<base64 token> <rank>`` per line, plain or gzip) and the merges
behind them, one job a module: parsing (``ranks``), deriving the merges (``merges``), the
merges shipped for OpenAI's files (``shipped``), recognising those files (``openai``), the
sidecar with pattern and special tokens (``sidecar``), reading a tokenizer (``reading``),
writing one (``writing``), and the user's cache of read rank files (``rank_cache``).
What it leaves out: encoding, and the presets' choice of pattern and special tokens
(``presets``).
"""

from __future__ import annotations

# What callers use, re-exported (no __all__: the public names are formats'; see its __init__).
from .merges import derive_merges as derive_merges
from .openai import openai_encoding_of as openai_encoding_of
from .ranks import read_ranks as read_ranks
from .reading import read_tiktoken as read_tiktoken
from .sidecar import SIDECAR_SUFFIX as SIDECAR_SUFFIX
from .sidecar import given_stem as given_stem
from .sidecar import sidecar_beside as sidecar_beside
from .sidecar import sidecar_name as sidecar_name
from .writing import write_tiktoken as write_tiktoken
