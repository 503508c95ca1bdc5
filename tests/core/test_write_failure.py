"""The words of a failed write (an audit: Export CSV into a path under a file said only
"…/small.txt/report.csv: Not a directory"; into /proc, "No such file or directory")."""

from __future__ import annotations

import errno
import os

import pytest

from bpe_studio.core.io.atomic import atomic_write_text
from bpe_studio.core.io.write_failure import write_failure


def failure_of(path) -> str:
    with pytest.raises(OSError) as caught:
        atomic_write_text(path, "x")
    return write_failure(path, caught.value)


def test_a_file_where_a_folder_should_be_is_named(tmp_path):
    (tmp_path / "small.txt").write_text("hello", encoding="utf-8")
    path = tmp_path / "small.txt" / "deeper" / "report.csv"
    assert failure_of(path) == f"{path}: {tmp_path / 'small.txt'} is a file, not a folder"


def test_a_missing_folder_is_said_missing(tmp_path):
    path = tmp_path / "nowhere" / "deeper" / "report.csv"
    assert failure_of(path) == f"{path}: the folder {path.parent} does not exist"


def test_a_folder_where_the_file_should_be_is_named(tmp_path):
    (tmp_path / "report.csv").mkdir()
    message = write_failure(tmp_path / "report.csv", IsADirectoryError(errno.EISDIR, "x"))
    assert (
        message == f"{tmp_path / 'report.csv'}: {tmp_path / 'report.csv'} is a folder, not a file"
    )


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux's /proc")
def test_a_folder_that_refuses_new_files_is_not_said_missing():
    message = failure_of("/proc/report.csv")
    assert message.startswith("/proc/report.csv: /proc does not accept new files (")


def test_other_errors_keep_the_systems_words(tmp_path):
    error = PermissionError(errno.EACCES, "Permission denied", str(tmp_path / "a.csv"))
    assert write_failure(tmp_path / "a.csv", error) == f"{tmp_path / 'a.csv'}: Permission denied"
