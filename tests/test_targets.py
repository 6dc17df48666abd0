"""Where -o writes (tagger.writers.target): devices, FIFOs and /dev/std* are written into,
links followed, read-only files refused, write errors one line with exit 2; extensions name
the format, .gz compresses.  Special files are made here, in a temporary directory."""

import gzip
import json
import os
import stat
import subprocess
import sys
import threading

import pytest

from conftest import ROOT

CMD = [sys.executable, "-m", "tagger"]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
CNN = ("We train a deep convolutional neural network to classify the images of a large benchmark dataset into "
       "one thousand classes and report state of the art top-1 and top-5 error rates compared with previous methods.")


def tagger(*args, **kw):
    kw.setdefault("capture_output", True)
    return subprocess.run(CMD + [str(a) for a in args], env=ENV, timeout=300, **kw)


@pytest.fixture
def src(tmp_path):
    p = tmp_path / "in.jsonl"
    p.write_text("".join(json.dumps({"id": f"r{i}", "abstract": CNN}) + "\n" for i in range(3)))
    return p


def device(tmp_path, name, minor):
    """A character device node like /dev/null (1, 3) or /dev/full (1, 7), made here (root only)."""
    path = tmp_path / name
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, minor))
    except PermissionError:
        pytest.skip("making a device node needs root")
    return path


def test_a_device_is_written_into_not_replaced(tmp_path, src):
    null = device(tmp_path, "null", 3)
    r = tagger("label", src, "-o", null, "-f", "jsonl")
    assert r.returncode == 0, r.stderr
    assert stat.S_ISCHR(os.stat(null).st_mode) and sorted(os.listdir(tmp_path)) == ["in.jsonl", "null"]
    r = tagger("label", src, "-o", null)  # no extension: the format is chosen as for standard output
    assert r.returncode == 0 and stat.S_ISCHR(os.stat(null).st_mode)


def test_a_full_disk_is_one_line_and_exit_2(tmp_path, src):
    full = device(tmp_path, "full", 7)
    r = tagger("label", src, "-o", full, "-f", "jsonl")
    assert r.returncode == 2 and r.stderr.decode() == f"tagger: error: {full}: cannot write: No space left on device\n"
    assert stat.S_ISCHR(os.stat(full).st_mode)
    with open(full, "wb") as fh:  # standard output on a full disk
        r = tagger("label", src, "-f", "jsonl", stdout=fh, stderr=subprocess.PIPE, capture_output=False)
    assert r.returncode == 2 and r.stderr.decode() == "tagger: error: standard output: cannot write: No space left on device\n"


def test_closed_stdout_is_one_line_and_exit_2(src):
    r = subprocess.run(["bash", "-c", f"{' '.join(CMD)} label {src} -f jsonl >&-"], capture_output=True, env=ENV,
                       timeout=300)
    assert r.returncode == 2 and r.stderr.decode() == (
        "tagger: error: standard output is closed; name an output file with -o FILE\n")


def test_a_fifo_is_written_into(tmp_path, src):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(open(fifo, "rb").read()))
    reader.start()
    r = tagger("label", src, "-o", fifo, "-f", "tsv")
    reader.join(60)
    assert r.returncode == 0 and got[0].decode().splitlines()[0].startswith("r0\tmodality:image")
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_dev_stdout_is_the_descriptor_itself(tmp_path, src):
    log = tmp_path / "log.jsonl"
    log.write_text("earlier line\n")
    with open(log, "ab") as fh:  # `>> log`: appended to, never truncated or replaced
        r = tagger("label", src, "-o", "/dev/stdout", "-f", "jsonl", stdout=fh, stderr=subprocess.PIPE,
                   capture_output=False)
    assert r.returncode == 0, r.stderr
    lines = log.read_text().splitlines()
    assert lines[0] == "earlier line" and len(lines) == 4
    r = tagger("label", src, "-o", "/dev/stdout", "-f", "tsv")
    assert r.returncode == 0 and r.stdout.decode().count("\n") == 3


def test_a_symlink_is_followed_and_stays_a_link(tmp_path, src):
    target = tmp_path / "real.jsonl"
    target.write_text("old\n")
    link = tmp_path / "link.jsonl"
    link.symlink_to(target)
    r = tagger("label", src, "-o", link)
    assert r.returncode == 0, r.stderr
    assert link.is_symlink() and os.readlink(link) == str(target) and len(target.read_text().splitlines()) == 3
    dangling = tmp_path / "new-link.jsonl"
    dangling.symlink_to(tmp_path / "made.jsonl")
    assert tagger("label", src, "-o", dangling).returncode == 0
    assert dangling.is_symlink() and (tmp_path / "made.jsonl").read_text().count("\n") == 3


def test_a_read_only_file_is_not_replaced(tmp_path, src):
    out = tmp_path / "keep.jsonl"
    out.write_text("mine\n")
    out.chmod(0o444)
    r = tagger("label", src, "-o", out)
    assert r.returncode == 2 and r.stderr.decode() == (
        f"tagger: error: {out}: is read-only (mode 0444), not replaced; make it writable or choose another -o\n")
    assert out.read_text() == "mine\n" and sorted(os.listdir(tmp_path)) == ["in.jsonl", "keep.jsonl"]


@pytest.mark.parametrize("option", ["-o", "--json", "--scores"])
def test_check_names_the_option_and_writes_nothing(tmp_path, option):
    from tagger.writers.target import OutputError, Target

    ro = tmp_path / "ro.txt"
    ro.write_text("mine\n")
    ro.chmod(0o444)
    for path, message in [
        (ro, f"{ro}: is read-only (mode 0444), not replaced; make it writable or choose another {option}"),
        (tmp_path / "no" / "x.txt", f"{tmp_path / 'no' / 'x.txt'}: no such directory: {tmp_path / 'no'}; "
                                    f"create it or choose another {option}"),
    ]:
        with pytest.raises(OutputError) as e:
            Target(str(path), option=option).check()
        assert str(e.value) == message
    with pytest.raises(OutputError) as e:
        Target(str(tmp_path), option=option)
    assert str(e.value) == f"{tmp_path}: is a directory; {option} needs a file name"
    Target(str(tmp_path / "new.txt"), option=option).check()  # a new file in a folder that is there: fine
    assert sorted(os.listdir(tmp_path)) == ["ro.txt"] and ro.read_text() == "mine\n"


def test_a_read_only_disagreements_file_names_its_option(tmp_path):
    a = tmp_path / "a.jsonl"
    a.write_text('{"id": "1", "labels": ["modality:text"]}\n')
    b = tmp_path / "b.jsonl"
    b.write_text('{"id": "1", "labels": ["modality:image"]}\n')
    out = tmp_path / "dis.jsonl"
    out.write_text("mine\n")
    out.chmod(0o444)
    r = tagger("corpus", "agreement", a, b, "--disagreements", out)
    assert r.returncode == 2 and r.stderr.decode() == (
        f"tagger: error: {out}: is read-only (mode 0444), not replaced; make it writable or choose another "
        "--disagreements\n")
    assert out.read_text() == "mine\n"


@pytest.mark.parametrize("name, check", [
    ("o.jsonl", lambda b: json.loads(b.splitlines()[0])["id"] == "r0"),
    ("o.json", lambda b: [x["id"] for x in json.loads(b)] == ["r0", "r1", "r2"]),
    ("o.csv", lambda b: b.splitlines()[0] == b"id,tags,scores"),
    ("o.tsv", lambda b: b.splitlines()[0].startswith(b"r0\tmodality:image")),
    ("o.txt", lambda b: b.splitlines()[0] == b"r0" and b"modality:" in b),
    ("o.jsonl.gz", lambda b: json.loads(gzip.decompress(b).splitlines()[0])["id"] == "r0"),
    ("o.csv.gz", lambda b: gzip.decompress(b).splitlines()[0] == b"id,tags,scores"),
])
def test_the_extension_names_the_format(tmp_path, src, name, check):
    out = tmp_path / name
    r = tagger("label", src, "-o", out)
    assert r.returncode == 0, r.stderr
    assert check(out.read_bytes())


def test_an_unknown_extension_is_an_error_unless_the_format_is_given(tmp_path, src):
    out = tmp_path / "o.jsnol"
    r = tagger("label", src, "-o", out)
    assert r.returncode == 2 and not out.exists() and r.stderr.decode() == (
        f"tagger: error: {out}: cannot tell the output format from the file name (known: .jsonl .json .csv .tsv "
        ".txt, each also with .gz, .parquet); name it with --format\n")
    r = tagger("label", src, "-o", out, "-f", "jsonl")
    assert r.returncode == 0 and out.read_text().count("\n") == 3


def test_gzip_output_is_the_same_bytes_every_time(tmp_path, src):
    a, b = tmp_path / "a.jsonl.gz", tmp_path / "b.jsonl.gz"
    assert tagger("label", src, "-o", a).returncode == 0 and tagger("label", src, "-o", b).returncode == 0
    assert a.read_bytes() == b.read_bytes()
