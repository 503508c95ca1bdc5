"""Paths and readers for the core tests' data (imported by the tests and by conftest).

Test data comes from ``tests/fixtures`` (see its README), so the repository stands alone.
Tests over the full shared corpora use :func:`full_corpus`, which skips when the folder is
absent; the folder is ``<repo root>/../shared/corpora`` unless ``BPE_STUDIO_CORPORA`` says
otherwise. :func:`process_state` and :func:`live_processes_of_session` read Linux's /proc for
the tests that check no process is left behind.
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[1]
FIXTURES = REPO_ROOT / "tests" / "fixtures"
EOT = "<|endoftext|>"

# Slices of the big corpora, committed in tests/fixtures.
SLICES = {
    "english": "english_books_slice.txt",
    "chinese": "chinese_slice.txt",
    "code": "code_slice.txt",
    "tinystories": "tinystories_slice.txt",
    "mixed_web": "mixed_web_slice.txt",
}
CS336_TEXTS = ["corpus.en", "tinystories_sample.txt", "address.txt", "german.txt"]


def fixture_path(name: str) -> Path:
    return FIXTURES / name


def read_fixture(name: str) -> str:
    # newline="" keeps the bytes exactly as they are in the file.
    with open(FIXTURES / name, encoding="utf-8", newline="") as f:
        return f.read()


def head(text: str, nbytes: int) -> str:
    """The first whole lines of ``text`` that fit in ``nbytes`` UTF-8 bytes."""
    data = text.encode("utf-8")[:nbytes]
    return data[: data.rfind(b"\n") + 1].decode("utf-8")


def slice_head(key: str, nbytes: int) -> str:
    return head(read_fixture(SLICES[key]), nbytes)


def is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


@cache
def _utf8_parts() -> tuple[set[bytes], set[bytes], set[bytes]]:
    """The proper prefixes, proper suffixes and inner parts of every character's UTF-8."""
    prefixes, suffixes, inner = set(), set(), set()
    for c in range(0x80, 0x110000):
        if 0xD800 <= c < 0xE000:
            continue
        e = chr(c).encode("utf-8")
        for i in range(1, len(e)):
            prefixes.add(e[:i])
            suffixes.add(e[i:])
            inner.update(e[i:j] for j in range(i + 1, len(e)))
    return prefixes, suffixes, inner


def in_no_text(token: bytes) -> bool:
    """Whether no valid UTF-8 holds ``token``: it is no part of one character's bytes, and
    no end of a character, then whole characters, then a start of one, makes it."""
    prefixes, suffixes, inner = _utf8_parts()
    if token in inner:
        return False
    n = len(token)
    for i in range(min(3, n) + 1):
        if i and token[:i] not in suffixes:
            continue
        for j in range(max(i, n - 3), n + 1):
            if (j == n or token[j:] in prefixes) and is_utf8(token[i:j]):
                return False
    return True


def byte_level_chars(data: bytes) -> str:
    """``data`` in ByteLevel's characters, as a ``tokenizer.json`` of GPT-2's kind writes
    tokens (GPT-2's table: printable bytes stand for themselves, the others for 256 + their
    rank)."""
    kept = [*range(33, 127), *range(161, 173), *range(174, 256)]
    others = [b for b in range(256) if b not in kept]
    table = {b: chr(b) for b in kept} | {b: chr(256 + n) for n, b in enumerate(others)}
    return "".join(table[b] for b in data)


def write_text(path: Path, text: str) -> Path:
    """Write ``text`` as UTF-8 with no newline translation."""
    path.write_bytes(text.encode("utf-8"))
    return path


def corpora_dir() -> Path:
    env = os.environ.get("BPE_STUDIO_CORPORA")
    return Path(env) if env else REPO_ROOT.parent / "shared" / "corpora"


def full_corpus(name: str) -> Path:
    """Path of a file of the full shared corpora; skips the test when it is absent."""
    folder = corpora_dir()
    if not folder.is_dir():
        pytest.skip(f"full corpora folder {folder} is absent (set BPE_STUDIO_CORPORA)")
    path = folder / name
    if not path.is_file():
        pytest.skip(f"{name} is absent from the corpora folder {folder}")
    return path


def process_state(pid: int) -> tuple[bytes, int, int] | None:
    """A process's state letter, parent and session (Linux /proc); None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            # The name, in parentheses, may hold spaces: the fields follow the last ')'.
            fields = f.read().rpartition(b")")[2].split()
    except OSError:
        return None
    return fields[0], int(fields[1]), int(fields[3])


def running(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie."""
    state = process_state(pid)
    return state is not None and state[0] not in (b"Z", b"X")


def live_processes_of_session(session: int) -> list[int]:
    """The processes of ``session`` still running (not zombies)."""
    found = []
    for pid in (int(e) for e in os.listdir("/proc") if e.isdigit()):
        state = process_state(pid)
        if state is not None and state[2] == session and state[0] not in (b"Z", b"X"):
            found.append(pid)
    return found


def run_in_own_session(
    command: list[str], output: Path, *, env=None, preexec_fn=None
) -> tuple[int, list[int], str]:
    """Run ``command`` in a session of its own, stdout and stderr into the file ``output``
    (a file: a process left behind would hold a pipe open); its exit code, the processes
    of its session still running once it ended (each then killed), and what it wrote."""
    import signal
    import subprocess

    with open(output, "w+") as out:
        proc = subprocess.Popen(
            command, stdout=out, stderr=subprocess.STDOUT, env=env, preexec_fn=preexec_fn,
            start_new_session=True,
        )  # fmt: skip
        try:
            code = proc.wait(timeout=120)
            left = live_processes_of_session(proc.pid)
        finally:
            if proc.poll() is None or live_processes_of_session(proc.pid):
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        out.seek(0)
        return code, left, out.read()


# Texts whose spans the spans_at_step tests move between steps: English, Chinese
# split into bytes, and runs of one letter, emoji and special tokens.
SPAN_TEXTS = (
    (FIXTURES / "english_books_slice.txt").read_text(encoding="utf-8")[5_000:8_000],
    (FIXTURES / "chinese_slice.txt").read_text(encoding="utf-8")[9_000:10_500],
    "aaaaaaa aaaa\naa " + EOT + "lll llll \U0001f600\U0001f600\U0001f600 caf\u00e9 "
    "na\u00efve" + EOT,
)
SPAN_TEXT_IDS = ("english", "chinese", "runs-emoji-specials")
