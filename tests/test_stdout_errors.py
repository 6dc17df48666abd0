"""Standard output that cannot be written, for the commands that write only there (tagger bib,
tagger taxonomy): closed (`>&-`) or on a full disk, one line and exit 2, as tagger label says
it, never an internal error, and no file touched when it is closed.  A closed stdout is a
child process's whose descriptor 1 is closed before it starts; a full disk is a stdout whose
writes fail with ENOSPC."""

import errno
import io
import os
import subprocess
import sys

import pytest

from conftest import ROOT

CNN = ("We train a deep convolutional neural network to classify the images of a large benchmark dataset into "
       "one thousand classes and report state of the art top-1 and top-5 error rates compared with previous methods.")
BIB = f"@article{{k1,\n  title = {{Deep nets}},\n  abstract = {{{CNN}}},\n}}\n"
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
FULL = "tagger: error: standard output: cannot write: No space left on device"


def closed_stdout(*args, stdin=None, cwd=None):
    """``tagger ARGS`` with standard output closed (``>&-``): (status, stderr lines)."""
    r = subprocess.run([sys.executable, "-m", "tagger", *map(str, args)], input=stdin, stdout=None,
                       stderr=subprocess.PIPE, env=ENV, cwd=cwd, timeout=300, preexec_fn=lambda: os.close(1))
    return r.returncode, r.stderr.decode().splitlines()


@pytest.mark.parametrize("args, stdin", [
    (["bib", "-"], BIB), (["bib", "--check", "--diff", "-"], BIB), (["bib", "--check", "-"], BIB),
    (["bib", "--diff", "t5.bib"], None), (["bib", "t5.bib"], None), (["bib", "--check", "t5.bib"], None),
    (["taxonomy", "show"], None), (["taxonomy", "check", ROOT / "taxonomy.yaml"], None), (["info"], None),
])
def test_a_closed_stdout_is_one_line_exit_2_and_nothing_written(tmp_path, args, stdin):
    (tmp_path / "t5.bib").write_text(BIB, encoding="utf-8")
    code, err = closed_stdout(*args, stdin=stdin and stdin.encode(), cwd=tmp_path)
    assert (code, err) == (2, ["tagger: error: standard output is closed"])
    assert (tmp_path / "t5.bib").read_text(encoding="utf-8") == BIB  # not tagged behind a report that cannot be made


class _FullText:
    """A standard output on a full disk: its writes fail as write(2) does there (ENOSPC), at
    once (unbuffered, ``python -u``), or, with ``buffered``, when flushed."""

    def __init__(self, buffered: bool):
        self.buffered, self.pending = buffered, []
        self.buffer = _FullBytes(buffered)
        self.encoding = "utf-8"

    def write(self, text):
        if not self.buffered:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        self.pending.append(text)
        return len(text)

    def flush(self):
        self.buffer.flush()
        if self.pending:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def isatty(self):
        return False


class _FullBytes(_FullText):
    def __init__(self, buffered: bool):
        self.buffered, self.pending = buffered, []

    def flush(self):
        if self.pending:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def full_stdout(monkeypatch, capsys, buffered, *args, stdin=None):
    """``tagger ARGS`` in this process with a standard output on a full disk: (status, stderr lines)."""
    from tagger.cli import main

    capsys.readouterr()
    monkeypatch.setattr(sys, "stdout", _FullText(buffered))
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin.encode())))
    with pytest.raises(SystemExit) as e:
        main([str(a) for a in args])
    return e.value.code, capsys.readouterr().err.splitlines()


@pytest.mark.parametrize("buffered", [False, True])
def test_a_full_disk_on_stdout_is_one_line_and_exit_2(tmp_path, monkeypatch, capsys, buffered):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "t7.bib").write_text(BIB, encoding="utf-8")
    for args, stdin in ((["bib", "--check", "t7.bib"], None), (["bib", "-"], BIB), (["bib", "--check", "--diff", "-"], BIB),
                        (["taxonomy", "show"], None), (["taxonomy", "check", ROOT / "taxonomy.yaml"], None),
                        (["info"], None)):
        code, err = full_stdout(monkeypatch, capsys, buffered, *args, stdin=stdin)
        assert (code, err[-1:]) == (2, [FULL]), (args, err)
        assert not any("internal error" in ln or ln.startswith("Traceback") for ln in err)
    assert (tmp_path / "t7.bib").read_text(encoding="utf-8") == BIB
    # --remove --check of a tagged file: its lines cannot be written either
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(io.BytesIO()))
    from tagger.cli import main

    with pytest.raises(SystemExit):
        main(["bib", "t7.bib"])
    tagged = (tmp_path / "t7.bib").read_text(encoding="utf-8")
    assert tagged != BIB
    code, err = full_stdout(monkeypatch, capsys, buffered, "bib", "--check", "--remove", "t7.bib")
    assert (code, err[-1:]) == (2, [FULL]) and (tmp_path / "t7.bib").read_text(encoding="utf-8") == tagged
