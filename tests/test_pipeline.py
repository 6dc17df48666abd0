"""tagger as a Unix pipeline citizen: streaming, head, Ctrl-C, --jobs, CSV/TSV and gzip."""

import csv
import gzip
import io
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from conftest import ROOT

CMD = [sys.executable, "-m", "tagger"]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def rows(corpus_records, n):
    out = []
    while len(out) < n:
        out.extend({"id": f"r{len(out) + i}", "title": r["title"], "abstract": r["abstract"], "extra": i}
                   for i, r in enumerate(corpus_records[: n - len(out)]))
    return out


def wait_for_output(tmp_path, p, timeout=60):
    """Wait until the running ``tagger`` has written a batch to its temporary output file
    (so it is busy mid-stream), failing if it exits first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert p.poll() is None, "tagger finished before it could be interrupted: give it more input"
        if any(x.name != "in.jsonl" and x.stat().st_size > 0 for x in tmp_path.iterdir()):
            return
        time.sleep(0.05)
    raise AssertionError("no output within the timeout")


def test_output_starts_before_the_input_ends(corpus_records):
    p = subprocess.Popen(CMD + ["label", "-", "--input-format", "jsonl", "-f", "jsonl"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV)
    import threading

    data = b"".join((json.dumps(r) + "\n").encode() for r in rows(corpus_records, 300))  # more than one read of stdin

    waited_in_vain = []

    def feed():  # from a thread, so that neither pipe can fill up and block the other
        p.stdin.write(data)
        p.stdin.flush()
        waited_in_vain.append(not first_seen.wait(60))  # stdin stays open until output has come
        p.stdin.close()

    first_seen = threading.Event()
    t = threading.Thread(target=feed)
    t.start()
    first = p.stdout.readline()
    first_seen.set()
    rest = p.stdout.read().splitlines()
    t.join()
    assert waited_in_vain == [False]  # the first line came while the input was still open
    assert json.loads(first)["id"] == "r0"
    assert p.wait(timeout=60) == 0 and len(rest) == 299


def test_head_closes_the_pipe_quietly(tmp_path, corpus_records):
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows(corpus_records, 3000)))
    p = subprocess.Popen(CMD + ["label", str(src), "-f", "jsonl"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV)
    head = p.stdout.readline()
    p.stdout.close()  # what `| head -n 1` does
    err = p.stderr.read().decode()
    assert p.wait(timeout=60) == 0
    assert json.loads(head)["id"] == "r0"
    assert err == ""


def test_ctrl_c_exits_130_without_traceback():
    p = subprocess.Popen(CMD + ["label", "-", "-f", "jsonl"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=ENV)
    p.stdin.write(b"An abstract that is waiting for more input to come.\n")
    p.stdin.flush()
    time.sleep(3.0)  # let it start and block on stdin (a loaded machine needs the time)
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=30)
    assert p.returncode == 130
    assert b"Traceback" not in err and b"KeyboardInterrupt" not in err


@pytest.mark.parametrize("module", ["click", "tagger.cli._app", "tagger.cli._common", "tagger.cli.label", "numpy"])
def test_ctrl_c_while_starting_exits_130_without_traceback(module):
    """Ctrl-C while the command's modules are still loading (the first ~50 ms) ends it like a
    later one: the interrupt is raised at the import of ``module``, as the console script runs."""
    code = ("import os, signal, sys\n"
            "class Interrupt:\n"
            "    def find_spec(self, fullname, path=None, target=None):\n"
            f"        if fullname == {module!r}:\n"
            "            sys.meta_path.remove(self)\n"
            "            os.kill(os.getpid(), signal.SIGINT)\n"
            "        return None\n"
            "sys.meta_path.insert(0, Interrupt())\n"
            "sys.argv = ['tagger', 'label', '-', '-f', 'jsonl']\n"
            "from tagger.__main__ import main\n"
            "main()\n")
    p = subprocess.run([sys.executable, "-c", code], stdin=subprocess.PIPE, capture_output=True, env=ENV, timeout=60)
    assert p.returncode == 130, (p.returncode, p.stderr)
    assert b"Traceback" not in p.stderr and b"KeyboardInterrupt" not in p.stderr, p.stderr


@pytest.mark.parametrize("fmt, lines", [("jsonl", 1201), ("tsv", 1201), ("json", 1203), ("pairs", None), ("text", None),
                                         ("csv", 1202)])
def test_jobs_2_is_byte_identical_to_jobs_1(tmp_path, corpus_records, fmt, lines):
    """Same bytes with --jobs 2 as with --jobs 1 in every output format, with a bad record
    (skipped, and warned about once) and a record that already has tags (re-serialised)."""
    src = tmp_path / "in.jsonl"
    recs = rows(corpus_records, 1200)
    recs[7]["tags"] = ["stale"]
    src.write_text("".join(json.dumps(r) + "\n" for r in recs[:300]) + "{not json\n"
                   + "".join(json.dumps(r) + "\n" for r in recs[300:]))
    outs = []
    for jobs in ("1", "2"):
        r = subprocess.run(CMD + ["label", str(src), "-f", fmt, "--jobs", jobs, "--on-error", "skip"], capture_output=True,
                           env=ENV, timeout=300)
        assert r.returncode == 0, r.stderr
        assert r.stderr.count(b"in.jsonl:301: invalid JSON") == 1
        outs.append(r.stdout)
    assert outs[0] == outs[1]
    if lines:
        assert outs[0].count(b"\n") == lines - 1
    if fmt == "jsonl":
        first = json.loads(outs[0].splitlines()[0])
        assert list(first)[:5] == ["id", "title", "abstract", "extra", "tags"]


def test_csv_keeps_every_column_and_gz_input(tmp_path, corpus_records):
    from click.testing import CliRunner

    from tagger.cli import cli

    src = tmp_path / "papers.csv.gz"
    with gzip.open(src, "wt", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["key", "summary", "year"])
        for i, r in enumerate(corpus_records[:5]):
            w.writerow([f"k{i}", r["abstract"], 2020 + i])
    res = CliRunner().invoke(cli, ["label", str(src), "--text-column", "summary", "--id-column", "key"])
    assert res.exit_code == 0, res.output
    out = list(csv.DictReader(io.StringIO(res.output)))
    assert list(out[0]) == ["key", "summary", "year", "tags", "scores"]
    assert [o["key"] for o in out] == [f"k{i}" for i in range(5)] and out[4]["year"] == "2024"
    assert all(o["tags"] and set(json.loads(o["scores"])) == set(o["tags"].split(";")) for o in out)
    tsv = tmp_path / "p.tsv"
    tsv.write_text("abstract\tnote\n" + corpus_records[0]["abstract"].replace("\n", " ") + "\tkeep me\n")
    res = CliRunner().invoke(cli, ["label", str(tsv)])
    header, line = res.output.splitlines()
    assert header == "abstract\tnote\ttags\tscores" and line.split("\t")[1] == "keep me"


def test_jsonl_text_field_option(tmp_path, corpus_records):
    from click.testing import CliRunner

    from tagger.cli import cli

    src = tmp_path / "x.jsonl"
    src.write_text(json.dumps({"summary": corpus_records[0]["abstract"], "name": "t"}) + "\n")
    res = CliRunner().invoke(cli, ["label", str(src), "--text-field", "summary", "--title-field", "name", "-f", "jsonl"])
    assert res.exit_code == 0 and json.loads(res.output)["tags"]


def test_ctrl_c_with_jobs_2_is_quiet_and_leaves_no_file(tmp_path, corpus_records):
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows(corpus_records, 100000)))
    out = tmp_path / "out.jsonl"
    p = subprocess.Popen(CMD + ["label", str(src), "--jobs", "2", "-o", str(out)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=ENV)
    wait_for_output(tmp_path, p)  # workers started and busy
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 130
    assert b"Traceback" not in err and b"Warning" not in err
    assert sorted(x.name for x in tmp_path.iterdir()) == ["in.jsonl"]


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_sigterm_removes_the_temporary_output(tmp_path, corpus_records, jobs):
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows(corpus_records, 100000)))
    p = subprocess.Popen(CMD + ["label", str(src), "--jobs", jobs, "-o", str(tmp_path / "out.jsonl")],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV)
    wait_for_output(tmp_path, p)
    p.terminate()
    _, err = p.communicate(timeout=60)
    assert p.returncode == 143 and b"Traceback" not in err
    assert sorted(x.name for x in tmp_path.iterdir()) == ["in.jsonl"]


def _children(pid):
    """Process ids whose parent is ``pid`` (Linux /proc)."""
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as fh:
                    if int(fh.read().rsplit(")", 1)[1].split()[1]) == pid:
                        out.append(int(d))
            except (OSError, ValueError, IndexError):
                pass
    return out


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="worker clean-up on parent death uses Linux's PR_SET_PDEATHSIG")
def test_workers_die_with_a_killed_parent(tmp_path, corpus_records):
    """kill -9 of tagger (no handler can run) still ends its --jobs workers, so none lingers
    holding the caller's pipes open."""
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows(corpus_records, 100000)))
    p = subprocess.Popen(CMD + ["label", str(src), "--jobs", "2", "-o", str(tmp_path / "out.jsonl")],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)
    wait_for_output(tmp_path, p)
    workers = _children(p.pid)
    assert len(workers) == 2
    p.kill()
    p.wait(timeout=30)
    deadline = time.monotonic() + 10
    while [w for w in workers if _alive(w)] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [w for w in workers if _alive(w)] == []


def _alive(pid):
    """True while ``pid`` runs (a zombie, dead but not yet reaped, counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.parametrize("start", ["fork", "spawn"])
def test_label_stream_in_workers_equals_in_process(shipped_model, corpus_records, monkeypatch, start):
    """label_stream (the Python API, `tagger filter`) gives the same predictions with two
    workers as in this process, with forked workers (sharing the loaded model) and with
    spawned ones (joblib's loky executor, each loading the model), the fallback where fork
    is unavailable."""
    import multiprocessing

    from tagger.pipeline import labeling, workers
    from tagger.corpus import Record

    if start == "spawn":
        monkeypatch.setattr(multiprocessing, "get_all_start_methods", lambda: ["spawn"])
    monkeypatch.setattr(workers, "_POOL", {})
    recs = [Record(dict(r), i + 1, i + 1, "x.jsonl") for i, r in enumerate(corpus_records[:600])]
    recs[5] = Record({"title": "a number", "abstract": 5}, 6, 6, "x.jsonl")
    warned = []
    here = [(r.n, p) for r, p in labeling.label_stream(shipped_model, recs, on_error="skip", warn=warned.append)]
    there = [(r.n, p) for r, p in labeling.label_stream(shipped_model, recs, on_error="skip", warn=warned.append, jobs=2,
                                                        batch_size=100)]
    assert here == there and len(here) == 599
    assert warned == ["x.jsonl:6: record 6: 'abstract' must be a string, not int; skipped"] * 2
    for ex in workers._POOL.values():
        ex.shutdown()


def test_filter_with_jobs_2_matches_jobs_1(tmp_path, corpus_records):
    """`tagger filter --jobs 2` keeps the same records, in the same order, as --jobs 1, with
    some records already tagged (trusted) among those tagged on the fly."""
    src = tmp_path / "in.jsonl"
    recs = rows(corpus_records, 1500)
    for r in recs[::7]:
        r["tags"] = ["modality:text"]
    src.write_text("".join(json.dumps(r) + "\n" for r in recs))
    outs = []
    for jobs in ("1", "2"):
        r = subprocess.run(CMD + ["filter", "modality:text and not method:cnn", str(src), "--jobs", jobs],
                           capture_output=True, env=ENV, timeout=300)
        assert r.returncode == 0, r.stderr
        outs.append(r.stdout)
    assert outs[0] == outs[1]
    kept = [json.loads(x) for x in outs[0].splitlines()]
    assert len(kept) > 200 and {k["id"] for k in kept} >= {r["id"] for r in recs[::7]}


def test_lone_surrogates_are_written_escaped(tmp_path, corpus_records):
    r"""A JSON escape like \ud800 (no pair) decodes to a lone surrogate, which UTF-8 cannot
    encode: output shows it as the same escape instead of failing."""
    src = tmp_path / "s.jsonl"
    src.write_text(json.dumps({"id": "a\udc80", "abstract": "\ud800 " + corpus_records[0]["abstract"], "tags": []}) + "\n")
    for fmt in ("jsonl", "tsv"):
        r = subprocess.run(CMD + ["label", str(src), "-f", fmt], capture_output=True, env=ENV, timeout=120)
        assert r.returncode == 0, r.stderr
        r.stdout.decode("utf-8")  # valid UTF-8
        if fmt == "jsonl":
            assert json.loads(r.stdout)["abstract"].startswith("\ud800 ")
        else:
            assert r.stdout.startswith(b"a\\udc80\t")


def test_filter_fail_keeps_the_records_before_a_bad_line(tmp_path, corpus_records):
    src = tmp_path / "hb.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows(corpus_records, 100)) + '{"broken\n')
    r = subprocess.run(CMD + ["filter", "evaluation:* or not evaluation:*", str(src)], capture_output=True, env=ENV,
                       timeout=120)
    assert r.returncode == 2
    assert r.stdout.count(b"\n") == 100
    assert r.stderr.decode().strip().endswith("hb.jsonl:101: invalid JSON (Unterminated string starting at column 2) "
                                              "(100 records were written before it)")


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_line_that_is_not_text_stops_after_the_records_before_it(tmp_path, corpus_records, jobs):
    """Bytes that are not UTF-8 on line 301 of a .gz (and the file cut short after it): the
    300 records before it are written, with --jobs 1 and 2 alike, then one error line."""
    src = tmp_path / "u.jsonl.gz"
    body = "".join(json.dumps(r) + "\n" for r in rows(corpus_records, 300)).encode()
    src.write_bytes(gzip.compress(body + b'{"abstract": "caf\xe9"}\n' + body))
    r = subprocess.run(CMD + ["label", str(src), "-f", "tsv", "--jobs", jobs], capture_output=True, env=ENV, timeout=120)
    assert r.returncode == 2 and r.stdout.count(b"\n") == 300
    assert r.stderr.decode() == (f"tagger: error: {src}:301: not UTF-8 text (byte 0xe9 at column 18); convert it to "
                                 "UTF-8 first, or name its encoding with --encoding (300 records were written before it)\n")


@pytest.mark.parametrize("fmt", ["jsonl", "txt", "csv"])
@pytest.mark.parametrize("jobs", ["1", "2", "3"])
def test_records_trickling_into_stdin_are_tagged_as_they_come(corpus_records, jobs, fmt):
    """One record at a time on stdin (a JSON line, a paragraph, a CSV row), the pipe kept
    open: each record's output line comes before the next record is sent, with worker
    processes too."""
    import select

    p = subprocess.Popen(CMD + ["label", "-", "--input-format", fmt, "-f", "jsonl", "--jobs", jobs],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV)
    if fmt == "csv":
        p.stdin.write(b"id,abstract\n")
    try:
        for n, r in enumerate(rows(corpus_records, 3), 1):
            if fmt == "txt":
                r["id"] = f"stdin:{n}"
            record = {"jsonl": json.dumps(r) + "\n", "txt": r["abstract"].replace("\n", " ") + "\n\n",
                      "csv": f"{r['id']},\"{r['abstract'].replace(chr(34), chr(34) * 2)}\"\n"}[fmt]
            p.stdin.write(record.encode())
            p.stdin.flush()
            ready, _, _ = select.select([p.stdout], [], [], 60)
            assert ready, f"no output for {r['id']} while stdin stayed open"
            assert json.loads(p.stdout.readline())["id"] == r["id"]
    finally:
        p.stdin.close()
    assert p.stdout.read() == b"" and p.wait(timeout=60) == 0


def _gz_damaged(kind: str, body: bytes) -> bytes:
    whole = gzip.compress(body)
    if kind == "truncated":
        return whole[:-20]  # the last bytes of the deflate stream and the trailer gone
    if kind == "crc":
        return whole[:-8] + bytes([whole[-8] ^ 0xFF]) + whole[-7:]
    return whole + b"garbage\n"  # trailing bytes that are not a gzip member


@pytest.mark.parametrize("kind, message", [("truncated", "Compressed file ended before the end-of-stream marker"),
                                           ("crc", "CRC check failed"), ("garbage", "Not a gzipped file")])
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_damaged_gz_keeps_every_whole_line_before_the_damage(tmp_path, corpus_records, kind, message, jobs):
    """What decompresses before the damage is written; the error names the first line not read."""
    src = tmp_path / "d.jsonl.gz"
    n = 300 if kind != "truncated" else 100
    src.write_bytes(_gz_damaged(kind, "".join(json.dumps(r) + "\n" for r in rows(corpus_records, n)).encode()))
    r = subprocess.run(CMD + ["label", str(src), "-f", "tsv", "--jobs", jobs], capture_output=True, env=ENV, timeout=120)
    err = r.stderr.decode()
    written = r.stdout.count(b"\n")
    assert r.returncode == 2 and err.count("\n") == 1, err
    assert written == (n if kind != "truncated" else n - 1)  # truncated: the last line is cut short
    assert err.startswith(f"tagger: error: {src}:{written + 1}: cannot read: ") and message in err
    assert err.endswith(f"({written} records were written before it)\n")


def test_damaged_deflate_data_is_an_input_error(tmp_path, corpus_records):
    """A deflate block of a type that does not exist (zlib.error, not an OSError) after 300
    good lines: an input error naming the first line not written, not an internal error."""
    import zlib

    src = tmp_path / "z.jsonl.gz"
    deflate = zlib.compressobj(wbits=-15)
    body = deflate.compress("".join(json.dumps(r) + "\n" for r in rows(corpus_records, 300)).encode())
    body += deflate.flush(zlib.Z_SYNC_FLUSH)
    src.write_bytes(b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff" + body + b"\x07" + bytes(20))  # 0x07: BTYPE 11
    r = subprocess.run(CMD + ["label", str(src), "-f", "tsv"], capture_output=True, env=ENV, timeout=120)
    # zlib drops what the failing read had decompressed (at most 64 KiB): the line named is
    # the first one not written, whichever it is
    n = r.stdout.count(b"\n")
    assert r.returncode == 2 and 200 < n <= 300
    assert r.stderr.decode() == (f"tagger: error: {src}:{n + 1}: cannot read: Error -3 while decompressing data: "
                                 f"invalid block type ({n} records were written before it)\n")


@pytest.mark.parametrize("args", [["label", "-f", "csv"], ["filter", "method:* or not method:*"],
                                  ["filter", "method:* or not method:*", "--jobs", "2"]])
def test_table_output_and_filter_keep_the_records_before_a_line_that_is_not_text(tmp_path, corpus_records, args):
    src = tmp_path / "u.jsonl"
    body = "".join(json.dumps(r) + "\n" for r in rows(corpus_records, 300)).encode()
    src.write_bytes(body + b'{"abstract": "caf\xe9"}\n' + body)
    r = subprocess.run(CMD + [args[0], *args[1:], str(src)], capture_output=True, env=ENV, timeout=120)
    assert r.returncode == 2
    assert r.stdout.count(b"\n") == 300 + (args[1:3] == ["-f", "csv"])  # csv: and its header
    assert r.stderr.decode().endswith(":301: not UTF-8 text (byte 0xe9 at column 18); convert it to UTF-8 first, "
                                      "or name its encoding with --encoding (300 records were written before it)\n")


def test_error_count_is_left_off_only_for_a_file_not_opened(tmp_path):
    r = subprocess.run(CMD + ["label", str(tmp_path / "missing.jsonl")], capture_output=True, env=ENV, timeout=60)
    assert r.returncode == 2 and r.stderr.decode() == f"tagger: error: {tmp_path / 'missing.jsonl'}: no such file\n"
    (tmp_path / "nul.jsonl").write_bytes(b'{"abstract": "\x00"}\n')
    r = subprocess.run(CMD + ["label", str(tmp_path / "nul.jsonl")], capture_output=True, env=ENV, timeout=60)
    assert r.returncode == 2 and r.stderr.decode() == (f"tagger: error: {tmp_path / 'nul.jsonl'}:1: binary data (NUL "
                                                       "byte), not text (0 records were written before it)\n")


def test_json_lines_are_recognised_on_stdin_and_without_extension(tmp_path, corpus_records):
    """Records piped in without --input-format, or in a file whose name does not tell, are
    read as JSON Lines when the first character is '{' (else as text)."""
    recs = rows(corpus_records, 5)
    data = "".join(json.dumps(r) + "\n" for r in recs).encode()
    r = subprocess.run(CMD + ["label", "-f", "tsv"], input=data, capture_output=True, env=ENV, timeout=120)
    assert r.returncode == 0 and [x.split(b"\t")[0].decode() for x in r.stdout.splitlines()] == [x["id"] for x in recs]
    (tmp_path / "records").write_bytes(b"\xef\xbb\xbf  " + data)
    r = subprocess.run(CMD + ["label", str(tmp_path / "records"), "-f", "tsv"], capture_output=True, env=ENV, timeout=120)
    assert r.returncode == 0 and r.stdout.count(b"\n") == 5 and r.stdout.startswith(b"r0\t")
    text = corpus_records[0]["abstract"].encode() + b"\n"
    r = subprocess.run(CMD + ["label", "-f", "tsv"], input=text, capture_output=True, env=ENV, timeout=120)
    assert r.returncode == 0 and r.stdout.startswith(b"stdin:1\t")


@pytest.mark.parametrize("args", [[], ["--input-format", "jsonl"]])
def test_gzip_on_stdin_is_decompressed(corpus_records, args):
    """gzip data on standard input is recognised by its magic number, several members one
    after another (``cat a.gz b.gz``) included."""
    recs = rows(corpus_records, 5)
    data = b"".join(gzip.compress("".join(json.dumps(r) + "\n" for r in part).encode()) for part in (recs[:2], recs[2:]))
    r = subprocess.run(CMD + ["label", "-", "-f", "tsv", *args], input=data, capture_output=True, env=ENV, timeout=120)
    assert r.returncode == 0, r.stderr
    assert [x.split(b"\t")[0].decode() for x in r.stdout.splitlines()] == [x["id"] for x in recs]
