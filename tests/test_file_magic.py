"""What a file is by its first bytes (tagger.files.magic), where tagger bib and tagger label's
readers must agree: a PDF starts `%PDF-` and a version digit, so a `.bib` whose first line is
a `%PDF...` comment is BibTeX; a gzipped `.bib` is named as such to `tagger bib`."""

import io
import json

import pytest
from click.testing import CliRunner
from hypothesis import given, settings, strategies as st

from tagger.cli import cli
from tagger.files.magic import is_pdf

from bibtools import call

CNN = ("We train a deep convolutional neural network to classify the images of a large benchmark dataset into "
       "one thousand classes and report state of the art top-1 and top-5 error rates compared with previous methods.")
BIB = f"@article{{k1,\n  title = {{Deep nets}},\n  abstract = {{{CNN} An example entry.}},\n}}\n"
COMMENT = "%PDFs of these papers are in ./pdfs\n"
PDF = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog >>\nendobj\n"


def run(*args, input=None):
    return CliRunner().invoke(cli, [str(a) for a in args], input=input)


@settings(max_examples=200, deadline=None)
@given(digit=st.sampled_from("0123456789"), head=st.binary(max_size=24))
def test_a_pdf_is_percent_pdf_dash_and_a_digit(digit, head):
    assert is_pdf(f"%PDF-{digit}".encode() + head)
    data = b"%PDF" + head
    assert is_pdf(data) == (head[:1] == b"-" and head[1:2] in [d.encode() for d in "0123456789"])
    assert not is_pdf(b"%PDFs" + head) and not is_pdf(b"%PDF-x" + head) and not is_pdf(b" %PDF-1" + head)


def test_a_bib_whose_first_comment_starts_with_pdf_is_bibtex(tmp_path):
    f = tmp_path / "refs.bib"
    f.write_text(COMMENT + BIB, encoding="utf-8")
    rc, out, err = call([f], check=True)
    assert (rc, out) == (1, f"{f}:2: k1: tags missing: +modality:text +modality:example +task:entry\n"), err
    rc, out, err = call([f])
    assert rc == 1 and "error" not in err and f.read_text(encoding="utf-8").startswith(COMMENT + "@article{k1,")
    assert "keywords = {modality:text, modality:example, task:entry}" in f.read_text(encoding="utf-8")


def test_label_reads_such_a_bib_and_text_and_still_refuses_a_pdf(tmp_path):
    bib = tmp_path / "refs.bib"
    bib.write_text(COMMENT + BIB, encoding="utf-8")
    txt = tmp_path / "notes.txt"
    txt.write_text(COMMENT + "\n" + CNN + "\n", encoding="utf-8")
    for args, stdin, rid in (([bib], None, "k1"), (["-"], bib.read_bytes(), "k1"), ([txt], None, "notes:1")):
        r = run("label", *args, "-f", "jsonl", input=stdin)
        assert r.exit_code == 0, r.output
        (rec,) = map(json.loads, r.stdout.splitlines())
        assert rec["id"] == rid and "modality:image" in rec["tags"]
    for name in ("paper.bib", "paper.txt", "paper.csv", "paper.dat"):
        (tmp_path / name).write_bytes(PDF)
        for args, stdin in (([tmp_path / name], None), (["-"], PDF)):
            r = run("label", *args, input=stdin)
            assert r.exit_code == 2 and r.stderr.count("\n") == 1 and ": a PDF: extract its text first" in r.stderr


def test_a_gzipped_bib_is_named_so_and_left_as_it_was(tmp_path):
    import gzip

    data = gzip.compress((COMMENT + BIB).encode("utf-8"), mtime=0)
    why = "tagger bib writes the tags back into the file, so it does not read compressed ones; left untouched"
    for name, how in (("refs.bib", "mv {p} {p}.gz && gunzip {p}.gz"), ("refs.bib.gz", "gunzip {p}, then tagger bib {q}")):
        f = tmp_path / name
        f.write_bytes(data)
        for kw in ({}, {"check": True}):
            rc, out, err = call([f], **kw)
            assert (rc, out) == (2, "")
            assert err == (f"tagger: error: {f}: gzip-compressed: decompress it first "
                           f"({how.format(p=f, q=str(f)[:-3])}); {why}\n")
        assert f.read_bytes() == data
    rc, out, err = call(["-"], stdin=io.BytesIO(data), bib_out=io.BytesIO())
    assert (rc, out, err) == (2, "", "tagger: error: -: gzip-compressed: decompress it first "
                                     "(gunzip -c FILE.gz | tagger bib -)\n")
    r = run("bib", "--check", tmp_path / "refs.bib")  # the command says it as run() does
    assert r.exit_code == 2 and r.stderr == f"tagger: error: {tmp_path / 'refs.bib'}: gzip-compressed: decompress " \
        f"it first (mv {tmp_path / 'refs.bib'} {tmp_path / 'refs.bib'}.gz && gunzip {tmp_path / 'refs.bib'}.gz); {why}\n"
    r = run("label", tmp_path / "refs.bib", "-f", "jsonl")  # tagger label reads gzip data whatever the name
    assert r.exit_code == 0 and [json.loads(x)["id"] for x in r.stdout.splitlines()] == ["k1"]
