"""How a corpus's files are found and named (an audit, h_corp67): a member of an archive named
by fsspec's chained URL (``zip://inner.txt::file:///a.zip``) is read, by every reader (it
failed "Is a directory": its URL lost the archive after ``::``); a file named as a path and
as a ``file://`` URL is refused as any file named twice (it was counted twice); a glob names
the same files locally, as ``file://`` and in ``memory://``, as the shell's: ``**`` any number
of folders (locally it was ``*``), no wildcard a name that begins with a dot (fsspec's matched
them); one path spelt twice (``a.txt``, ``./a.txt``) is not called a link; ``**`` does not
walk into a link to a folder, as bash's globstar (two links to the folder above made the
match list double at every level: a hang; one gave a path of a kilobyte, "given twice").

Expected counts come from the slow reference (``core.reference.pretoken_counts``) over each
file's text on its own; the text is generated from a few words."""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import tarfile
import zipfile
from collections import Counter

import fsspec
import pytest
from core_helpers import EOT, write_text
from reference_encoder import published

from bpe_studio.core import CorpusError, count_file, train_bpe
from bpe_studio.core.corpus import counting
from bpe_studio.core.corpus.globstar import local_glob
from bpe_studio.core.corpus.sources import resolve_corpus
from bpe_studio.core.reference import pretoken_counts

GPT2 = published("r50k_base")["pat_str"]
WORDS = ("alpha", "beta", "gamma", "δέλτα", "ε", "日本語", "123", "!?")


def generated(seed: int, n: int = 400) -> str:
    """Words, spaces and line breaks, a different text for each ``seed``."""
    return "".join(
        WORDS[(i * 7 + seed * 3) % len(WORDS)] + ("\n" if (i + seed) % 11 == 0 else " ")
        for i in range(n)
    )


def expected(*texts: str) -> Counter[bytes]:
    total: Counter[bytes] = Counter()
    for text in texts:
        total += pretoken_counts(text, [EOT], GPT2)
    return total


@pytest.fixture
def in_workers(monkeypatch):
    """Files of more than a few hundred bytes counted in worker processes, not in this one."""
    monkeypatch.setattr(counting, "IN_PROCESS_LIMIT", 100)


@pytest.fixture
def archives(tmp_path):
    """a.zip and a.tar holding inner.txt and other.txt; the texts of both."""
    texts = {"inner.txt": generated(1), "other.txt": generated(2)}
    with zipfile.ZipFile(tmp_path / "a.zip", "w") as z:
        for name, text in texts.items():
            z.writestr(name, text.encode("utf-8"))
    with tarfile.open(tmp_path / "a.tar", "w") as t:
        for name, text in texts.items():
            t.add(write_text(tmp_path / name, text), name)
    return tmp_path, texts


def test_a_member_of_an_archive_is_read_by_its_chained_url(archives, in_workers):
    where, texts = archives
    zipped, tarred = f"file://{where / 'a.zip'}", f"file://{where / 'a.tar'}"
    for url, inner in [
        (f"zip://inner.txt::{zipped}", ["inner.txt"]),
        (f"zip://*.txt::{zipped}", ["inner.txt", "other.txt"]),
        (f"tar://inner.txt::{tarred}", ["inner.txt"]),
    ]:
        want = expected(*(texts[n] for n in inner))
        files = resolve_corpus(url)
        assert [f.name.split("::")[0] for f in files] == [f"{url[:3]}://{n}" for n in inner]
        with fsspec.open(files[0].url, "rb") as f:  # the URL opens as it is
            assert f.read() == texts[inner[0]].encode("utf-8")
        assert count_file(url, [EOT]) == want
        assert count_file(url, [EOT], workers=2) == want


def test_a_member_of_an_archive_in_memory_goes_to_workers_with_its_bytes(archives, in_workers):
    where, texts = archives
    fs = fsspec.filesystem("memory")
    fs.pipe("/h67/a.zip", (where / "a.zip").read_bytes())
    try:
        url = "zip://inner.txt::memory:///h67/a.zip"
        assert resolve_corpus(url)[0].process_local
        assert count_file(url, [EOT], workers=2) == expected(texts["inner.txt"])
    finally:
        fs.rm("/h67", recursive=True)


def test_training_on_a_member_is_training_on_its_text(archives):
    where, texts = archives
    url = f"zip://inner.txt::file://{where / 'a.zip'}"
    assert train_bpe(url, 300, [EOT]) == train_bpe(where / "inner.txt", 300, [EOT])


def test_a_file_as_a_path_and_as_a_file_url_is_refused(tmp_path):
    a = write_text(tmp_path / "a.txt", generated(3))
    write_text(tmp_path / "b.txt", generated(4))
    url = f"file://{a}"
    for corpus in ([a, url], [url, a], [f"file://{tmp_path}/*.txt", a]):
        with pytest.raises(CorpusError, match="given twice as a corpus file"):
            count_file(corpus, [EOT])
        with pytest.raises(CorpusError, match="given twice as a corpus file"):
            train_bpe(corpus, 300, [EOT])
    # Each once, by either name, is counted once.
    assert count_file([url, tmp_path / "b.txt"], [EOT]) == expected(generated(3), generated(4))


TREE = ["top.txt", "2024/mid.txt", "2024/01/deep.txt", ".hidden.txt", "2024/.h2.txt", ".git/x.txt"]


@pytest.mark.parametrize(
    ("pattern", "want"),
    [
        ("**/*.txt", ["2024/01/deep.txt", "2024/mid.txt", "top.txt"]),
        ("*.txt", ["top.txt"]),
        ("*/*.txt", ["2024/mid.txt"]),
        (".*.txt", [".hidden.txt"]),
        ("**/.*.txt", [".hidden.txt", "2024/.h2.txt"]),
        (".git/*.txt", [".git/x.txt"]),
    ],
)
def test_a_glob_names_the_shells_files_locally_and_through_fsspec(tmp_path, pattern, want):
    texts = {name: generated(i) for i, name in enumerate(TREE)}
    for name, text in texts.items():
        (tmp_path / "shards" / name).parent.mkdir(parents=True, exist_ok=True)
        write_text(tmp_path / "shards" / name, text)
    fs = fsspec.filesystem("memory")
    for name, text in texts.items():
        fs.pipe(f"/h67g/shards/{name}", text.encode("utf-8"))
    try:
        for root, corpus in [
            (str(tmp_path), f"{tmp_path}/shards/{pattern}"),
            (str(tmp_path), f"file://{tmp_path}/shards/{pattern}"),
            ("/h67g", f"memory:///h67g/shards/{pattern}"),
        ]:
            found = [f.url.split("::")[0] for f in resolve_corpus(corpus)]
            found = [u.split(f"{root}/shards/", 1)[1] for u in found]
            assert sorted(found) == want, corpus
            assert count_file(corpus, [EOT]) == expected(*(texts[n] for n in want))
    finally:
        fs.rm("/h67g", recursive=True)


def test_one_path_spelt_twice_is_another_spelling_not_a_link(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_text(tmp_path / "a.txt", generated(5))
    (tmp_path / "link.txt").symlink_to("a.txt")
    for again in ("./a.txt", f"file://{tmp_path}/a.txt", str(tmp_path / "a.txt")):
        spelt = f"^{re.escape(again)}: another spelling of a.txt, given twice as a corpus file"
        with pytest.raises(CorpusError, match=spelt):
            count_file(["a.txt", again], [EOT])
    with pytest.raises(CorpusError, match=r"^link.txt: the same file as a.txt \(a link\)"):
        count_file(["a.txt", "link.txt"], [EOT])


def test_fsspec_matches_under_a_folder_spelt_otherwise_follow_the_same_rule():
    """A filesystem that gives its matches under another spelling of the pattern's folder
    (hf:// writes revisions its own way): the names the wildcards matched are judged."""
    from bpe_studio.core.corpus.sources import shell_matches

    pattern = "datasets/o/d@refs/pr/1/data/*.txt"
    assert shell_matches(pattern, "datasets/o/d@refs%2Fpr%2F1/data/a.txt")
    assert not shell_matches(pattern, "datasets/o/d@refs%2Fpr%2F1/data/.a.txt")
    deep = "datasets/o/d@refs/pr/1/**/*.txt"
    assert shell_matches(deep, "datasets/o/d@refs%2Fpr%2F1/data/x/a.txt")
    assert not shell_matches(deep, "datasets/o/d@refs%2Fpr%2F1/data/.a.txt")
    assert shell_matches("datasets/o/d@refs/pr/1/**/.*.txt", "datasets/o/d@x/data/.a.txt")


def write_in(path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text(path, text)


def bash_globstar(folder, pattern: str, known: list[str]) -> list[str]:
    """What bash's globstar (4.3 and later: ``**`` walks into no link to a folder) matches
    for ``pattern`` in ``folder``; ``known``, bash 5.2's answer, where no such bash runs."""
    bash = shutil.which("bash")
    if bash is None:
        return known
    script = 'shopt -s globstar nullglob; [ "${BASH_VERSINFO[0]}${BASH_VERSINFO[1]}" -ge 43 ] '
    script += f'|| exit 3; for m in {pattern}; do printf "%s\\n" "$m"; done'
    run = subprocess.run([bash, "-c", script], cwd=folder, capture_output=True, text=True)
    return known if run.returncode == 3 else sorted(run.stdout.splitlines())


@pytest.mark.timeout(30)
@pytest.mark.parametrize("links", [("a", "b"), ("a",)])
def test_a_double_star_does_not_walk_into_links_to_folders(tmp_path, monkeypatch, links):
    monkeypatch.chdir(tmp_path)
    write_in(tmp_path / "s/a/x.txt", generated(1))
    write_in(tmp_path / "s/b/y.txt", generated(2))
    for folder in links:
        (tmp_path / "s" / folder / "up").symlink_to("..")
    want = bash_globstar(tmp_path, "s/**/*.txt", ["s/a/x.txt", "s/b/y.txt"])
    assert want == ["s/a/x.txt", "s/b/y.txt"]
    assert sorted(local_glob("s/**/*.txt")) == want
    assert [f.name for f in resolve_corpus("s/**/*.txt")] == want
    assert count_file("s/**/*.txt", [EOT]) == expected(generated(1), generated(2))


def test_a_link_to_a_folder_is_one_folder_of_a_double_star(tmp_path, monkeypatch):
    """Bash matches a link to a folder as one of ``**``'s folders, and walks no further."""
    monkeypatch.chdir(tmp_path)
    for name in ("s/f.txt", "s/a/x.txt", "t/z.txt", "t/u/w.txt"):
        write_in(tmp_path / name, generated(len(name)))
    (tmp_path / "s/a/l").symlink_to("../../t")
    for pattern, known in [
        ("s/**/*.txt", ["s/a/l/z.txt", "s/a/x.txt", "s/f.txt"]),
        ("s/**/", ["s/", "s/a/", "s/a/l/"]),
        ("s/**", ["s/", "s/a", "s/a/l", "s/a/x.txt", "s/f.txt"]),
        ("s/*/l/**/*.txt", ["s/a/l/u/w.txt", "s/a/l/z.txt"]),  # the glob's top is followed
    ]:
        want = bash_globstar(tmp_path, pattern, known)
        assert want == known, pattern
        assert sorted(local_glob(pattern)) == want, pattern
        # An audit: as a file:// URL, fsspec's glob walked no link ("s/*/l/**" matched
        # nothing, "s/**" left s/a/l out), so the two forms trained on different files.
        if not pattern.endswith("/") and pattern != "s/**":
            found = resolve_corpus(f"file://{tmp_path}/{pattern}")
            assert sorted(f.url.removeprefix(f"{tmp_path}/") for f in found) == want, pattern


NESTED = [*TREE, "2024/.cache/01/c.txt", "2024/01/x/02/e.txt", "a/01/02/f.txt", ".git/01/g.txt"]


@pytest.mark.parametrize(
    "pattern",
    [
        "**/*.txt",
        "**",
        "**/",
        "**/01/**/*.txt",
        "**/01/**",
        "**/**/*.txt",
        "*/**/02/*.txt",
        "**/.*/**/*.txt",
        ".git/**/*.txt",
        "**/.cache/**",
        "2024/**/.h*.txt",
    ],
)
def test_without_links_a_double_star_matches_what_python_glob_does(tmp_path, pattern):
    for name in NESTED:
        write_in(tmp_path / "shards" / name, generated(len(name)))
    top = f"{tmp_path}/shards/"
    want = sorted(set(glob.glob(top + pattern, recursive=True)))
    found = local_glob(top + pattern)
    assert len(found) == len(set(found)), "a match given twice"
    assert sorted(found) == want
    if any(os.path.isfile(m) for m in want):
        files = [m for m in want if os.path.isfile(m)]
        assert [f.name for f in resolve_corpus(top + pattern)] == files
