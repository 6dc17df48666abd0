"""Oversized and hostile input (issue 20): memory bounded, one-line errors, never an internal error.

Two kinds of test: a hypothesis property test that feeds every reader mutated real files
(``../shared/streams``, skipped without it) and generated ones, in process through click's
runner, asserting exit 0, 1 or 2 and no traceback; and one test per row of the issue's
table, each input generated in a temporary directory and run in a subprocess under an
address-space cap (``RLIMIT_AS``), so that a regression fails instead of swapping.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tagger.cli import cli

from conftest import ROOT, SHARED

ABSTRACT = ("We propose a convolutional network for segmenting brain tumours in MRI scans, trained on three "
            "hundred annotated volumes, and compare it with three baselines on two public benchmarks.")

#: format -> (file suffix, a small valid input)
SAMPLES = {
    "txt": (".txt", f"Heading\n\n{ABSTRACT}\n\n{ABSTRACT}\n"),
    "lines": (".txt", f"{ABSTRACT}\n{ABSTRACT}\n"),
    "jsonl": (".jsonl", json.dumps({"id": "a", "title": "T", "abstract": ABSTRACT}) + "\n"
              + json.dumps({"abstract": ABSTRACT}) + "\n"),
    "json": (".json", json.dumps([{"id": "a", "abstract": ABSTRACT}, {"abstract": ABSTRACT}], indent=2)),
    "csv": (".csv", f'id,title,abstract\na,T,"{ABSTRACT}"\nb,,"{ABSTRACT}"\n'),
    "tsv": (".tsv", f"id\ttitle\tabstract\na\tT\t{ABSTRACT}\n"),
    "bib": (".bib", f"@article{{k1,\n  title={{A title}},\n  abstract={{{ABSTRACT}}}\n}}\n\n"
                    f"@string{{x = \"y\"}}\n@misc{{k2, abstract = \"{ABSTRACT}\"}}\n"),
}

#: what the mutations insert: the bytes the issue's careless user typed
HOSTILE = [b"{", b"}", b"[", b"]", b'"', b"\\", b"\x00", b"\xef\xbb\xbf", b"\xff\xfe", b"\n\n", b",", b"@", b"%",
           b"\r", b"\t", b"\xc3", b"[" * 300, b"{\"a\":" * 200, b"\x1f\x8b"]


def _real_inputs() -> dict[str, list[bytes]]:
    """format -> the first bytes of the real files of ../shared/streams (empty without it)."""
    out: dict[str, list[bytes]] = {fmt: [] for fmt in SAMPLES}
    folder = SHARED / "streams"
    if not folder.is_dir():
        return out
    by_ext = {".txt": ["txt", "lines"], ".jsonl": ["jsonl"], ".json": ["json"], ".csv": ["csv"], ".tsv": ["tsv"],
              ".bib": ["bib"]}
    for p in sorted(folder.iterdir()):
        for fmt in by_ext.get(p.suffix.lower(), []):
            try:
                out[fmt].append(p.read_bytes()[:20000])
            except OSError:
                pass
    return out


REAL = _real_inputs()


@st.composite
def mutated(draw, fmt: str) -> bytes:
    """A sample of ``fmt`` (real when ../shared is there, else generated), then a few byte
    flips, cuts and insertions of :data:`HOSTILE` bytes."""
    bases = [SAMPLES[fmt][1].encode()] + REAL[fmt]
    data = bytearray(draw(st.sampled_from(bases)))
    for _ in range(draw(st.integers(0, 4))):
        kind = draw(st.sampled_from(["flip", "cut", "insert", "random"]))
        at = draw(st.integers(0, len(data))) if data else 0
        if kind == "flip" and data:
            data[min(at, len(data) - 1)] = draw(st.integers(0, 255))
        elif kind == "cut":
            data = data[:at]
        elif kind == "insert":
            data[at:at] = draw(st.sampled_from(HOSTILE))
        else:
            data[at:at] = draw(st.binary(max_size=40))
    return bytes(data)


def _check(result) -> None:
    out = result.output  # stdout and stderr together
    assert result.exit_code in (0, 1, 2), (result.exit_code, out[-2000:], result.exception)
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in out and "internal error" not in out, out[-2000:]


@pytest.mark.parametrize("fmt", list(SAMPLES))
def test_no_internal_error_from_mutated_input(fmt, tmp_path_factory, shipped_model):
    """Every reader, on mutated real and generated input: exit 0/1/2, one-line errors."""
    suffix = SAMPLES[fmt][0]
    folder = tmp_path_factory.mktemp(f"hostile-{fmt}")

    @settings(max_examples=12, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                     HealthCheck.data_too_large])
    @given(data=mutated(fmt), skip=st.booleans(), small=st.booleans())
    def check(data, skip, small):
        path = folder / f"in{suffix}"
        path.write_bytes(data)
        args = ["label", str(path), "-f", "jsonl", "--input-format", fmt]
        if skip:
            args += ["--on-error", "skip"]
        if small:
            args += ["--max-record-size", "1K"]
        _check(CliRunner().invoke(cli, args))
        if fmt == "bib":
            _check(CliRunner().invoke(cli, ["bib", "--check", str(path)]))

    check()


# --- the issue's table: one test per row, under a memory cap ------------------------------

#: address space allowed above what the child process has before it runs the command
CAP = 2 << 30

_RUNNER = textwrap.dedent("""
    import resource, sys, runpy
    def vm():
        with open("/proc/self/status") as fh:
            return next(int(l.split()[1]) * 1024 for l in fh if l.startswith("VmSize:"))
    import tagger.cli, tagger.model  # the baseline: the imports of a run
    cap = vm() + int(sys.argv[1])
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    sys.argv = ["tagger"] + sys.argv[2:]
    from tagger.cli import main
    try:
        main()
    finally:
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print(f"peak-rss-kb {rss}", file=sys.stderr)
""")


def _run_capped(*args, cwd=None) -> tuple[int, str, str, int]:
    """``(exit status, stdout, stderr, peak RSS in MB)`` of ``tagger ARGS`` in a subprocess
    whose address space may grow by :data:`CAP` at most."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), TAGGER_DEBUG="")
    p = subprocess.run([sys.executable, "-c", _RUNNER, str(CAP), *map(str, args)], capture_output=True, text=True,
                       env=env, cwd=cwd, timeout=600)
    rss = [int(ln.split()[1]) for ln in p.stderr.splitlines() if ln.startswith("peak-rss-kb ")]
    err = "\n".join(ln for ln in p.stderr.splitlines() if not ln.startswith("peak-rss-kb "))
    return p.returncode, p.stdout, err, (rss[0] // 1024 if rss else -1)


def _assert_clean(rc, err, expect_rc=2):
    assert rc == expect_rc, (rc, err[-2000:])
    assert "Traceback" not in err and "internal error" not in err and "MemoryError" not in err, err[-2000:]


def _write_repeated(path: Path, head: bytes, unit: bytes, total: int, tail: bytes, opener=open) -> None:
    """``head``, ``unit`` repeated up to ``total`` bytes, ``tail``, written in 1 MB pieces."""
    piece = unit * max(1, (1 << 20) // len(unit))
    with opener(path, "wb") as fh:
        fh.write(head)
        done = 0
        while done < total:
            fh.write(piece[:total - done])
            done += min(len(piece), total - done)
        fh.write(tail)


@pytest.mark.slow
def test_gzip_bomb_of_one_paragraph(tmp_path):
    """A .txt.gz of one 400 MB paragraph: a bad record naming its line, not MemoryError."""
    path = tmp_path / "bomb.txt.gz"
    _write_repeated(path, b"", b"word " * 200, 400 << 20, b"\n\n" + ABSTRACT.encode() + b"\n",
                    opener=lambda p, m: gzip.open(p, m, compresslevel=1))
    rc, out, err, rss = _run_capped("label", path, "-f", "tsv")
    _assert_clean(rc, err)
    assert f"{path}:1: line of 400 MB over the record size limit of 4 MB (--max-record-size)" in err
    rc, out, err, rss = _run_capped("label", path, "-f", "tsv", "--on-error", "skip")
    _assert_clean(rc, err, 0)
    assert out.count("\n") == 1 and "skipped" in err
    print(f"gzip bomb: peak RSS {rss} MB")


@pytest.mark.slow
def test_one_huge_json_lines_record(tmp_path):
    """One 150 MB JSON Lines record between two small ones: reported, the others tagged."""
    path = tmp_path / "day.jsonl"
    small = json.dumps({"abstract": ABSTRACT}).encode() + b"\n"
    _write_repeated(path, small + b'{"abstract": "', b"word " * 200, 150 << 20, b'"}\n' + small)
    rc, out, err, rss = _run_capped("label", path, "-f", "tsv", "--on-error", "skip")
    _assert_clean(rc, err, 0)
    assert f"{path}:2: record of 150 MB over the record size limit of 4 MB (--max-record-size); skipped" in err
    assert [ln.split("\t")[0] for ln in out.splitlines()] == ["day:1", "day:3"]
    rc, out, err, rss2 = _run_capped("label", path, "-f", "tsv")
    _assert_clean(rc, err)
    print(f"150 MB JSON Lines record: peak RSS {max(rss, rss2)} MB")


@pytest.mark.slow
def test_text_file_without_blank_line(tmp_path):
    """300 MB of 3 million short lines, no blank line: one paragraph over the limit, with the
    hint for one abstract per line; read with --input-format lines it is 3 million records."""
    path = tmp_path / "lines.txt"
    line = b"We study graph networks for molecules here now: " + b"x" * 51 + b"\n"  # 100 bytes
    assert len(line) == 100
    _write_repeated(path, b"", line, 300_000_000, b"")
    rc, out, err, rss = _run_capped("label", path, "-f", "tsv")
    _assert_clean(rc, err)
    assert f"{path}:1: paragraph of" in err and "over the record size limit of 4 MB" in err
    assert "read it with --input-format lines" in err
    print(f"300 MB text without a blank line: peak RSS {rss} MB")


def test_json_nested_100000_deep(tmp_path):
    """{"abstract": [[[...]]]} nested 100,000 deep: one line naming the record, exit 2."""
    deep = "[" * 100_000 + "]" * 100_000
    for name, text in (("deep.json", '{"abstract": ' + deep + "}\n"),
                       ("pretty.json", '[\n{"abstract": "x"},\n{"abstract": ' + deep + '},\n{"abstract": "y"}\n]\n'),
                       ("deep.jsonl", '{"abstract": "x"}\n{"abstract": ' + deep + "}\n")):
        path = tmp_path / name
        path.write_text(text)
        rc, out, err, rss = _run_capped("label", path, "-f", "tsv")
        _assert_clean(rc, err)
        assert "JSON nested more than 100 levels deep" in err and len(err.strip().splitlines()) == 1, err
        rc, out, err, rss = _run_capped("label", path, "-f", "tsv", "--on-error", "skip")
        assert "Traceback" not in err and rc in (0, 2), err
        if name == "pretty.json":
            assert rc == 0 and [ln.split("\t")[0] for ln in out.splitlines()] == ["pretty:1", "pretty:3"]


@pytest.mark.slow
def test_bib_entry_with_100_mb_abstract(tmp_path):
    """tagger bib: the entry unreadable, kept byte for byte, the rest tagged, bounded memory."""
    path = tmp_path / "refs.bib"
    other = (f"@article{{small,\n  title={{Segmenting tumours}},\n  abstract={{{ABSTRACT}}}\n}}\n\n").encode()
    _write_repeated(path, other + b"@article{huge,\n  title={Huge},\n  abstract={", b"word " * 200, 100 << 20,
                    b"}\n}\n\n" + other.replace(b"small", b"small2"))
    size = path.stat().st_size
    rc, out, err, rss = _run_capped("bib", "--check", path)
    _assert_clean(rc, err)
    assert f"{path}:6: huge: unreadable: value of 100 MB over the record size limit of 4 MB" in err
    rc, out, err, rss2 = _run_capped("bib", path)
    _assert_clean(rc, err)
    data = path.read_bytes()
    start = data.index(b"@article{huge")
    assert data[start:start + 50].startswith(b"@article{huge,\n  title={Huge},\n  abstract={word ")
    assert data.count(b"word " * 200) >= (100 << 20) // 1000 and b"keywords" in data[:start]
    huge_end = data.index(b"}\n}\n\n", start)
    assert huge_end - start > 100 << 20 and b"keywords" not in data[start:huge_end]
    print(f"100 MB .bib abstract: peak RSS {max(rss, rss2)} MB")


def test_max_record_size_option(tmp_path):
    """--max-record-size: a size with K/M/G; the limit applies to every reader."""
    path = tmp_path / "a.jsonl"
    path.write_text(json.dumps({"abstract": ABSTRACT * 20}) + "\n" + json.dumps({"abstract": ABSTRACT}) + "\n")
    r = CliRunner().invoke(cli, ["label", str(path), "-f", "tsv", "--max-record-size", "2K", "--on-error", "skip"])
    assert r.exit_code == 0 and "over the record size limit of 2 KB" in r.output
    r = CliRunner().invoke(cli, ["label", str(path), "-f", "tsv", "--max-record-size", "lots"])
    assert r.exit_code == 2 and "is not a size" in r.output
    csv_path = tmp_path / "a.csv"
    csv_path.write_text(f'id,abstract\na,"{ABSTRACT * 20}"\nb,"{ABSTRACT}"\n')
    r = CliRunner().invoke(cli, ["label", str(csv_path), "-f", "tsv", "--max-record-size", "2K", "--on-error", "skip"])
    assert r.exit_code == 0 and "a.csv:2: line of" in r.output and "\nb\t" in r.output


def test_model_reads_a_bounded_text(shipped_model):
    """The model reads at most MODEL_TEXT_CHARS characters; --explain notes the cut."""
    from tagger.model.inference import MODEL_TEXT_CHARS

    text = (ABSTRACT + " ") * (MODEL_TEXT_CHARS // len(ABSTRACT) + 50)
    preds = shipped_model.predict([{"abstract": text}, {"abstract": ABSTRACT}], explain=2)
    assert preds[0].note and f"{MODEL_TEXT_CHARS:,}" in preds[0].note and preds[1].note is None
    assert preds[0].tags == shipped_model.predict([{"abstract": text[:MODEL_TEXT_CHARS]}])[0].tags
