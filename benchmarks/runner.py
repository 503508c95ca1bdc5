"""Runs ONE measured workload in this (fresh) process and prints ``RESULT {json}``.

Usage: ``python benchmarks/runner.py WORKLOAD '{"param": ...}'``. The benchmark scripts start it
once per repetition, so every repetition gets a cold interpreter, its own caches and its own
peak-memory figure. Timings are taken here, around the workload only (interpreter start-up,
imports and file reading are left out); the parent measures memory.

Workloads
- ``train_ours``: ``bpe_studio.core.train.trainer.train_bpe(path, vocab_size, [<|endoftext|>])``.
- ``train_hf``: Hugging Face ``tokenizers`` BpeTrainer with the same regex and byte alphabet.
- ``encode``: GPT-2 encoding of a text file with ``impl`` = ``ours`` | ``tiktoken`` | ``hf``;
  with ``warm_path`` the encoder first encodes that other text (untimed), then the measured one.
- ``encode_preset``: a text file encoded with ``preset`` (cl100k_base, o200k_base), ``impl`` =
  ``ours`` (``Tokenizer.preset``) | ``tiktoken`` (built offline from the same rank file).
- ``load_preset``: ``Tokenizer.preset(preset)`` (``impl`` ours) or tiktoken's encoding built from
  the rank file (``impl`` tiktoken), timed.
- ``load_kernels``: the compiled encoder's kernels (and the scanners') made ready in a fresh
  process, timed: numba imported and the machine code read from its cache, or, with
  ``NUMBA_CACHE_DIR`` pointing at an empty folder, compiled (the first run on a machine).

bpe_studio's encoding workloads load the compiled encoder's kernels after the tokenizer and
before the timed encode (``kernels_seconds``), as a process does once: tiktoken's compiled
code is loaded by its import, which is not timed either (``load_kernels`` measures ours).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpora  # noqa: E402
import peers  # noqa: E402
from child import cpu_seconds  # noqa: E402


def train_ours(path: str, vocab_size: int) -> dict:
    from bpe_studio.core.train.trainer import train_bpe

    marks: dict[str, float] = {}

    def progress(done: int, total: int) -> None:
        if done >= total and "pretok_end" not in marks:
            marks["pretok_end"] = time.perf_counter()

    cpu0, t0 = cpu_seconds(), time.perf_counter()
    vocab, merges = train_bpe(path, vocab_size, [peers.SPECIAL], progress=progress)
    t1, cpu1 = time.perf_counter(), cpu_seconds()
    pretok = marks.get("pretok_end", t0) - t0
    return {
        "seconds": t1 - t0,
        "cpu_seconds": cpu1 - cpu0,
        "pretokenize_seconds": pretok,
        "merge_seconds": t1 - t0 - pretok,
        "vocab_size": len(vocab),
        "merges": len(merges),
    }


def train_hf(path: str, vocab_size: int) -> dict:
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = peers.hf_pre_tokenizer()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=[peers.SPECIAL],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    cpu0, t0 = cpu_seconds(), time.perf_counter()
    tok.train([path], trainer)
    t1, cpu1 = time.perf_counter(), cpu_seconds()
    return {"seconds": t1 - t0, "cpu_seconds": cpu1 - cpu0, "vocab_size": tok.get_vocab_size()}


def _kernels_seconds(impl: str) -> float:
    """For ours: make the compiled encoder's kernels ready (timed); 0 for the peers."""
    if impl != "ours":
        return 0.0
    from bpe_studio.core.encode.merging import kernel_start

    t0 = time.perf_counter()
    if not kernel_start.prepare():
        raise RuntimeError(f"the compiled encoder is unavailable: {kernel_start.failure()}")
    return time.perf_counter() - t0


def _encoder(impl: str):
    """(load it, encode function) for one implementation."""
    if impl == "ours":
        from bpe_studio.core.encode.tokenizer import Tokenizer

        vocab, merges = peers.gpt2_files()
        tok = Tokenizer.from_files(vocab, merges, special_tokens=[peers.SPECIAL])
        return tok.encode
    if impl == "tiktoken":
        enc = peers.tiktoken_gpt2()
        return lambda text: enc.encode(text, allowed_special="all")
    if impl == "hf":
        tok = peers.hf_gpt2()
        return lambda text: tok.encode(text).ids
    raise ValueError(f"unknown encoder {impl!r}")


def _timed_encode(
    fn, text: str, load_s: float, warm_s: float | None = None, kernels_s: float = 0.0
) -> dict:
    """Encode ``text`` once with ``fn``: wall and CPU time, speed, and the ids' count and digest."""
    nbytes = len(text.encode("utf-8"))
    cpu0, t0 = cpu_seconds(), time.perf_counter()
    ids = fn(text)
    t1, cpu1 = time.perf_counter(), cpu_seconds()
    count, digest = peers.ids_digest(ids)
    return {
        "seconds": t1 - t0,
        "cpu_seconds": cpu1 - cpu0,
        "bytes": nbytes,
        "mb_per_s": nbytes / corpora.MB / (t1 - t0),
        "load_seconds": load_s,
        "kernels_seconds": kernels_s,
        "warmup_seconds": warm_s,
        "ids": count,
        "sha256": digest,
    }


def encode(impl: str, text_path: str, warm_path: str | None = None) -> dict:
    text = Path(text_path).read_bytes().decode("utf-8")
    kernels_s = _kernels_seconds(impl)  # first, as in encode_preset
    t0 = time.perf_counter()
    fn = _encoder(impl)
    load_s = time.perf_counter() - t0
    warm_s = None
    if warm_path:
        warm_text = Path(warm_path).read_bytes().decode("utf-8")
        t0 = time.perf_counter()
        fn(warm_text)
        warm_s = time.perf_counter() - t0
        del warm_text
    return _timed_encode(fn, text, load_s, warm_s, kernels_s)


def _preset_encoder(impl: str, preset: str):
    if impl == "ours":
        from bpe_studio.core.encode.tokenizer import Tokenizer

        return Tokenizer.preset(preset).encode
    if impl == "tiktoken":
        enc = peers.tiktoken_gpt2() if preset == "gpt2" else peers.tiktoken_preset(preset)
        return lambda text: enc.encode(text, allowed_special="all")
    raise ValueError(f"unknown encoder {impl!r}")


def encode_preset(impl: str, preset: str, text_path: str) -> dict:
    text = Path(text_path).read_bytes().decode("utf-8")
    # subtle: the kernels first, as a process that has encoded before holds them: a preset
    # loaded then builds the compiled merger's tables at once (as tiktoken's Encoding builds
    # its own), else it builds the Python path's.
    kernels_s = _kernels_seconds(impl)
    t0 = time.perf_counter()
    fn = _preset_encoder(impl, preset)
    load_s = time.perf_counter() - t0
    return _timed_encode(fn, text, load_s, kernels_s=kernels_s)


def encode_preset_oneoff(preset: str, text_path: str, prepare: bool = False) -> dict:
    """Ours through the public API alone, in a fresh process: ``Tokenizer.preset(preset)``
    (untimed) and its first ``encode`` of the text, nothing loaded before; with ``prepare``,
    ``prepare_bulk()`` (the compiled kernels' load) timed with the encode."""
    from bpe_studio.core.encode.tokenizer import Tokenizer

    text = Path(text_path).read_bytes().decode("utf-8")
    t0 = time.perf_counter()
    tok = Tokenizer.preset(preset)
    load_s = time.perf_counter() - t0
    if not prepare:
        return _timed_encode(tok.encode, text, load_s)

    def prepared(text: str) -> list[int]:
        tok.prepare_bulk()
        return tok.encode(text)

    return _timed_encode(prepared, text, load_s)


def load_preset(impl: str, preset: str) -> dict:
    if impl == "ours":
        import bpe_studio.core.encode.tokenizer  # noqa: F401  (imports are not part of loading)
    else:
        import tiktoken  # noqa: F401
    cpu0, t0 = cpu_seconds(), time.perf_counter()
    _preset_encoder(impl, preset)
    t1, cpu1 = time.perf_counter(), cpu_seconds()
    return {"seconds": t1 - t0, "cpu_seconds": cpu1 - cpu0}


def load_kernels() -> dict:
    import bpe_studio.core.encode.tokenizer  # noqa: F401  (imports are not part of loading)
    from bpe_studio.core.encode.merging import kernel_start

    compiling: list[str] = []
    cpu0, t0 = cpu_seconds(), time.perf_counter()
    ok = kernel_start.prepare(compiling.append)
    t1, cpu1 = time.perf_counter(), cpu_seconds()
    if not ok:
        raise RuntimeError(f"the compiled encoder is unavailable: {kernel_start.failure()}")
    # CPU time of this process only: a compile runs in a child process (its own CPU time).
    return {"seconds": t1 - t0, "cpu_seconds": cpu1 - cpu0, "compiled": compiling}


WORKLOADS = {
    "train_ours": train_ours,
    "train_hf": train_hf,
    "encode": encode,
    "encode_preset": encode_preset,
    "encode_preset_oneoff": encode_preset_oneoff,
    "load_preset": load_preset,
    "load_kernels": load_kernels,
}


def main(argv: list[str]) -> int:
    if len(argv) not in (2, 3) or argv[1] not in WORKLOADS:
        print(__doc__, file=sys.stderr)
        return 2
    params = json.loads(argv[2]) if len(argv) == 3 else {}
    result = WORKLOADS[argv[1]](**params)
    print("RESULT " + json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
