"""Records as real sources and ordinary tools write them (issue 12; ../shared/streams/README.md
says per file what a correct tool does).  The small files are copies in tests/streams/; the
real samples are read from ../shared and skipped without it."""

import codecs
import json
import os
import subprocess
import sys
import threading

import pytest
from hypothesis import given, settings, strategies as st

from conftest import ROOT, shared_path
from tagger.readers import ReadOptions, detect_format, read_records
from tagger.readers.fields import NO_ABSTRACT, document, rebuild_inverted_index

STREAMS = ROOT / "tests" / "streams"
CMD = [sys.executable, "-m", "tagger"]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
CNN = ("We train a deep convolutional neural network to classify the images of a large benchmark dataset into "
       "one thousand classes and report state of the art top-1 and top-5 error rates compared with previous methods.")


def tagger(*args, input=None, **kw):
    return subprocess.run(CMD + [str(a) for a in args], input=input, capture_output=True, env=ENV, timeout=300, **kw)


def jsonl(out: bytes):
    return [json.loads(line) for line in out.decode("utf-8").split("\n") if line]


def records(path, fmt=None, **opts):
    return list(read_records(str(path), fmt, opts=ReadOptions(**opts)))


# --- JSON Lines variants ------------------------------------------------------------------

@pytest.mark.parametrize("name, n", [("k01-bom.jsonl", 2), ("k05-unicode-line-separators.jsonl", 3),
                                     ("k06-crlf.jsonl", 2), ("k14-leading-space.jsonl", 2),
                                     ("k15-blank-lines.jsonl", 2)])
def test_json_lines_variants_give_one_record_each(name, n):
    r = tagger("label", STREAMS / name, "-f", "jsonl")
    assert r.returncode == 0, r.stderr
    assert not r.stdout.startswith(codecs.BOM_UTF8) and len(jsonl(r.stdout)) == n
    assert all(rec["tags"] for rec in jsonl(r.stdout))


def test_null_missing_and_blank_abstracts_are_written_untagged():
    r = tagger("label", STREAMS / "02-null-or-missing-abstract.jsonl", "-f", "jsonl")
    assert r.returncode == 0, r.stderr
    out = jsonl(r.stdout)
    assert [x["id"] for x in out] == ["a", "b", "c", "d"]
    assert all(x["tags"] == [] and x["reason"] == NO_ABSTRACT for x in out)
    assert [document(f).reason for f in ({"abstract": None}, {}, {"abstract": "  "}, {"abstract": float("nan")})] == \
        [NO_ABSTRACT] * 4


def _rows(n, field="abstract"):
    return "".join(json.dumps({"id": f"r{i}", field: CNN}) + "\n" for i in range(n))


def test_a_text_field_in_none_of_the_first_1000_records_is_an_error(tmp_path):
    p = tmp_path / "wrong.jsonl"
    p.write_text(_rows(1000, "summary") + _rows(3))
    for args in (["label", p, "-f", "jsonl"], ["label", p, "-f", "csv"], ["filter", "modality:*", p]):
        r = tagger(*args)
        assert r.returncode == 2 and r.stdout == b""
        assert r.stderr.decode().startswith(
            f"tagger: error: {p}: the field 'abstract' is in none of the first 1,000 records (the fields there: "
            "'id', 'summary'); name the field of abstracts with --text-field")
    late = tmp_path / "late.jsonl"  # the 1,000th record has it: the 999 before are records without an abstract
    late.write_text(_rows(999, "summary") + _rows(1))
    r = tagger("label", late, "-f", "tsv", "--jobs", "2")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.decode().splitlines()
    assert len(lines) == 1000 and lines[998] == "r998\t" and lines[999].startswith("r0\tmodality:image")
    assert tagger("label", late, "-f", "tsv", "--text-field", "summary").returncode == 0


def test_openalex_inverted_index_is_rebuilt():
    assert rebuild_inverted_index({"deep": [0, 3], "nets": [1], "are": [2]}) == "deep nets are deep"
    doc = document({"title": "T", "abstract_inverted_index": {"Deep": [0], "nets.": [1]}})
    assert (doc.title, doc.text, doc.reason) == ("T", "Deep nets.", None)
    assert document({"abstract_inverted_index": None}).reason == NO_ABSTRACT
    assert "not a list of positions" in document({"abstract_inverted_index": {"a": "0"}}).error


@pytest.mark.parametrize("name", ["openalex__from_test_json_batch.jsonl", "openalex-topic-classification__test_json_batch.json"])
def test_openalex_works_from_shared(name):
    r = tagger("label", shared_path("streams", name), "-f", "jsonl")
    assert r.returncode == 0, r.stderr
    out = jsonl(r.stdout)
    assert len(out) == 3 and out[2]["reason"] == NO_ABSTRACT and out[1]["tags"]
    assert all("abstract" not in x for x in out)  # the record is written as it came


def test_sections_lists_and_odd_values():
    k11 = records(STREAMS / "k11-abstract-list-of-paragraphs.jsonl")[0].fields
    assert document(k11).text == CNN
    assert document({"abstract": ["One.", "Two."]}).text == "One.\n\nTwo."
    assert document(records(STREAMS / "k21-title-array.jsonl")[0].fields).title == "Deep CNN"
    assert document(records(STREAMS / "k17-dup-key.jsonl")[0].fields).text == CNN  # the last one, as JSON says
    r = tagger("label", STREAMS / "k22-abstract-number.jsonl")
    assert r.returncode == 2 and r.stderr.decode() == (
        f"tagger: error: {STREAMS / 'k22-abstract-number.jsonl'}:1: record 1: 'abstract' must be a string, not int "
        "(0 records were written before it)\n")
    assert "not a list of int" in document({"abstract": [1, 2]}).error


def test_nan_is_invalid_json_and_skipping_every_record_exits_2():
    p = STREAMS / "k13-nan.jsonl"
    r = tagger("label", p)
    assert r.returncode == 2 and ":1: invalid JSON (NaN is not a JSON number)" in r.stderr.decode()
    r = tagger("label", p, "--on-error", "skip")
    err = r.stderr.decode()
    assert r.returncode == 2 and r.stdout == b"" and "; skipped" in err
    assert err.strip().endswith("tagger: error: no record written: the one record read was bad and skipped")
    r = tagger("filter", "modality:*", p, "--on-error", "skip")
    assert r.returncode == 2 and "no record written" in r.stderr.decode()


def test_big_integer_ids_stay_exact_in_every_format():
    p = STREAMS / "k18-bigint-id.jsonl"
    big = "123456789012345678901234567890"
    for fmt in ("jsonl", "json", "tsv", "csv", "pairs", "text"):
        r = tagger("label", p, "-f", fmt)
        assert r.returncode == 0 and big in r.stdout.decode() and big + ".0" not in r.stdout.decode(), fmt
    assert r.stdout.decode().startswith(big)
    assert json.loads(tagger("label", p, "-f", "json").stdout)[0]["id"] == int(big)


def test_lone_surrogate_and_format_characters():
    r = tagger("label", STREAMS / "k23-lone-surrogate.jsonl", "-f", "jsonl")
    assert r.returncode == 0 and jsonl(r.stdout)[0]["tags"]
    r = tagger("label", STREAMS / "k24-soft-hyphen-zwsp.jsonl", "-f", "jsonl")
    plain = json.dumps({"id": "h", "abstract": CNN}).encode() + b"\n"
    r2 = tagger("label", "-", "-f", "jsonl", input=plain)
    assert jsonl(r.stdout)[0]["scores"] == jsonl(r2.stdout)[0]["scores"]
    assert "modality:image" in jsonl(r.stdout)[0]["tags"]


def test_jats_markup_gives_the_tags_of_the_plain_text():
    r = tagger("label", shared_path("streams", "03-jats-markup-changes-tags.jsonl"), "-f", "jsonl")
    a, b = jsonl(r.stdout)
    assert a["id"] == "with-jats-markup" and a["tags"] == b["tags"] and a["tags"]


@pytest.mark.parametrize("text", ["我们提出了一种新的卷积神经网络方法，用于图像分类，并在多个基准数据集上取得了最好的结果。",
                                  "本研究では、画像分類のための新しい畳み込みニューラルネットワークを提案する。"])
def test_chinese_and_japanese_abstain_as_not_english(shipped_model, text):
    (p,) = shipped_model.predict([{"abstract": text}])
    assert p.tags == [] and p.reason == "not English: 100% of the letters are CJK, not Latin"


# --- JSON that is not JSON Lines ----------------------------------------------------------

@pytest.mark.parametrize("name", ["k03-json-array.json", "k04-pretty-jq.jsonl"])
def test_arrays_and_pretty_printed_objects(name):
    p = STREAMS / name
    assert detect_format(str(p), sniff=True) == "json"
    recs = records(p)
    assert [(r.n, r.line, r.fields["id"]) for r in recs] == [(1, 2, "a"), (2, 6, "b")] if name.endswith(".json") \
        else [(r.n, r.fields["id"]) for r in recs] == [(1, "a"), (2, "b")]
    r = tagger("label", p, "-f", "tsv", "--jobs", "2")
    assert r.returncode == 0 and [x.split("\t")[0] for x in r.stdout.decode().splitlines()] == ["a", "b"]


def test_csl_json_and_concatenated_arrays(tmp_path):
    csl = [{"id": "http://zotero.org/1", "type": "article-journal", "title": "Deep nets", "abstract": CNN,
            "author": [{"family": "X", "given": "Y"}]}]
    p = tmp_path / "My Library.json"
    p.write_text(json.dumps(csl, indent=2) + "\n" + json.dumps(csl))  # two pages of results, one after the other
    r = tagger("label", p, "-f", "jsonl")
    out = jsonl(r.stdout)
    assert r.returncode == 0 and [x["id"] for x in out] == ["http://zotero.org/1"] * 2 and out[0]["tags"]
    bad = tmp_path / "bad.json"
    bad.write_text('[{"abstract": "x"},\n {"abstract": "y"\n]\n')
    r = tagger("label", bad, "-f", "jsonl")
    assert r.returncode == 2 and r.stderr.decode().startswith(f"tagger: error: {bad}:3: invalid JSON (Expecting ',' delimiter")
    assert len(jsonl(r.stdout)) == 1


def test_json_lines_named_json_is_read_as_json_lines(tmp_path):
    p = tmp_path / "snapshot.json"
    p.write_text(_rows(3))
    assert detect_format(str(p), sniff=True) == "jsonl"
    p = shared_path("streams", "sharath__arxiv-metadata-oai-snapshot.json")
    assert detect_format(str(p), sniff=True) == "jsonl"
    r = tagger("label", p, "-f", "tsv")
    ids = [x.split("\t")[0] for x in r.stdout.decode().splitlines()]
    assert r.returncode == 0 and len(ids) == 200 and ids[:2] == ["0704.0001", "0704.0002"]


@pytest.mark.parametrize("number", ["12345", "-1.5e+30", "0.000125"])
def test_a_number_cut_between_two_pieces_of_the_input_is_one_bad_record(tmp_path, number):
    """An array element that is a number, cut where one piece of the input (CHUNK_BYTES) ends:
    read whole, as one bad record, not as a shorter number and then invalid JSON."""
    from tagger.readers.stream import CHUNK_BYTES

    for cut in range(1, len(number)):
        first = {"id": "a", "abstract": CNN, "pad": ""}
        head = "[" + json.dumps(first) + ", "
        first["pad"] = "x" * (CHUNK_BYTES - cut - len(head))
        text = "[" + json.dumps(first) + ", " + number + ", " + json.dumps({"id": "b", "abstract": CNN}) + "]"
        assert text.index(number) == CHUNK_BYTES - cut
        p = tmp_path / "cut.json"
        p.write_text(text)
        recs = records(p, lenient=True)
        assert [(r.fields.get("id"), r.error) for r in recs] == [
            ("a", None), (None, "expected a JSON object, found number"), ("b", None)], (number, cut)


def test_a_record_of_an_unclosed_array_is_written_before_the_pipe_closes():
    p = subprocess.Popen(CMD + ["label", "-", "-f", "jsonl"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=ENV)
    p.stdin.write(b'[\n  {"id": "first", "abstract": "' + CNN.encode() + b'"},\n')
    p.stdin.flush()
    got = []
    reader = threading.Thread(target=lambda: got.append(p.stdout.readline()))
    reader.start()
    reader.join(120)
    assert got and json.loads(got[0])["id"] == "first"  # while the array is still open
    p.stdin.write(b'  {"id": "second", "abstract": "x"}\n]\n')
    p.stdin.close()
    assert json.loads(p.stdout.read())["id"] == "second" and p.wait(60) == 0


# --- encodings ----------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["k02-utf16le-powershell.jsonl", "08-utf16le-jsonl.jsonl"])
def test_utf16_with_a_bom_gives_the_tags_of_utf8(tmp_path, name):
    data = (STREAMS / name).read_bytes()
    assert data.startswith(codecs.BOM_UTF16_LE)
    utf8 = tmp_path / "u8.jsonl"
    utf8.write_bytes(data.decode("utf-16").encode("utf-8"))
    a, b = tagger("label", STREAMS / name, "-f", "jsonl"), tagger("label", utf8, "-f", "jsonl")
    assert a.returncode == 0 and a.stdout == b.stdout
    assert tagger("label", "-", "-f", "jsonl", input=data).stdout == b.stdout  # on stdin too


def test_encoding_option_and_undecodable_lines(tmp_path):
    p = tmp_path / "latin.txt"
    p.write_bytes(("Über " + CNN).encode("latin-1"))
    assert tagger("label", p).returncode == 2
    r = tagger("label", p, "--encoding", "latin-1", "-f", "jsonl")
    assert r.returncode == 0 and jsonl(r.stdout)[0]["abstract"].startswith("Über ")
    assert "unknown encoding" in tagger("label", p, "--encoding", "klingon").stderr.decode()
    u = tmp_path / "u.jsonl"
    u.write_bytes(_rows(2).encode() + b'{"abstract": "caf\xe9"}\n' + _rows(1).encode())
    r = tagger("label", u, "-f", "tsv", "--on-error", "skip")
    err = r.stderr.decode()
    assert r.returncode == 0 and r.stdout.decode().count("\n") == 3
    assert f"{u}:3: not UTF-8 text (byte 0xe9 at column 18)" in err and "1 bad record skipped, 3 written" in err
    t = tmp_path / "u.txt"
    t.write_bytes(CNN.encode() + b"\n\ncaf\xe9\n\n" + CNN.encode() + b"\n")
    r = tagger("label", t, "-f", "tsv", "--on-error", "skip")
    assert r.returncode == 0 and r.stdout.decode().count("\n") == 2 and f"{t}:3: not UTF-8" in r.stderr.decode()


def test_gzip_members_one_after_another():
    p = STREAMS / "k12-multimember.jsonl.gz"
    assert len(records(p)) == 2
    r = tagger("label", "-", "-f", "tsv", input=p.read_bytes())
    assert r.returncode == 0 and r.stdout.decode().count("\n") == 2


# --- CSV ----------------------------------------------------------------------------------

def test_a_cell_over_the_csv_module_limit_is_read(tmp_path):
    p = tmp_path / "big.csv"
    p.write_text("id,abstract,fulltext\na," + CNN + "," + "word " * 40000 + "\nb," + CNN + ",x\n")
    recs = records(p)
    assert [r.fields["id"] for r in recs] == ["a", "b"] and len(recs[0].fields["fulltext"]) == 200000


def test_no_header_names_columns_by_number(tmp_path):
    p = tmp_path / "rows.csv"
    p.write_text(f'x1,"A title","{CNN}"\nx2,"Other","{CNN}"\n')
    r = tagger("label", p, "--no-header", "--text-column", "3", "--title-column", "2", "--id-column", "1", "-f", "tsv")
    assert r.returncode == 0, r.stderr
    assert r.stdout.decode().splitlines()[0] == "1\t2\t3\ttags\tscores"
    assert r.stdout.decode().splitlines()[1].startswith("x1\tA title\t")
    r = tagger("label", p)
    assert r.returncode == 2 and r.stderr.decode().startswith(
        f"tagger: error: {p}:1: no column 'abstract' (the columns are 'x1', 'A title', 'We train a deep convolutional")
    assert "use --no-header and --text-column N" in r.stderr.decode()
    r = tagger("label", p, "--no-header")
    assert r.returncode == 2 and "without a header, columns are named by number (1 to 3)" in r.stderr.decode()


def test_semicolons_are_sniffed_and_delimiter_names_others(tmp_path):
    r = tagger("label", STREAMS / "k09-csv-semicolon-excel.csv", "-f", "jsonl")
    assert r.returncode == 0, r.stderr
    assert [(x["id"], bool(x["tags"])) for x in jsonl(r.stdout)] == [("a", True), ("b", True)]
    p = tmp_path / "pipes.csv"
    p.write_text(f"id|abstract\nz|{CNN}\n")
    r = tagger("label", p, "--delimiter", "|", "-f", "jsonl")
    assert r.returncode == 0 and jsonl(r.stdout)[0]["id"] == "z" and jsonl(r.stdout)[0]["tags"]


def test_zotero_columns_are_found(tmp_path):
    p = tmp_path / "Exported Items.csv"
    p.write_bytes(codecs.BOM_UTF8 + f'"Key","Item Type","Title","Abstract Note"\n"K1","journalArticle","Deep","{CNN}"\n'.encode())
    r = tagger("label", p, "-f", "jsonl")
    assert r.returncode == 0 and jsonl(r.stdout)[0]["Key"] == "K1" and jsonl(r.stdout)[0]["tags"]
    r = tagger("label", p, "-f", "pairs")  # the item key is the id
    assert r.returncode == 0 and r.stdout.decode().startswith("K1\tmodality:image\t")
    real = shared_path("streams", "khalid__zotero_Exported_Items.csv")
    r = tagger("label", real, "-f", "jsonl")
    out = jsonl(r.stdout)
    assert r.returncode == 0 and len(out) == 466  # 220 of them have no abstract
    assert sum(x.get("reason") == NO_ABSTRACT for x in out) == 220 and sum(bool(x["tags"]) for x in out) > 200


@pytest.mark.parametrize("name, message", [("k08-csv-nul-byte.csv", ":2: binary data (NUL byte)"),
                                           ("k10-csv-duplicate-abstract-col.csv",
                                            ":1: duplicate column name in the header: abstract")])
def test_bad_csv_is_one_line(name, message):
    r = tagger("label", STREAMS / name)
    err = r.stderr.decode().splitlines()
    assert r.returncode == 2 and len(err) == 1 and message in err[0]


# --- text ---------------------------------------------------------------------------------

@pytest.mark.parametrize("name, n", [("k16-crlf-paragraphs.txt", 2), ("k19-ws-only-separator-paragraphs.txt", 3),
                                     ("k20-bom-text.txt", 2)])
def test_text_variants(name, n):
    recs = records(STREAMS / name)
    assert len(recs) == n and all(r.fields["abstract"].startswith("We ") for r in recs)


def test_one_abstract_per_line(tmp_path):
    p = tmp_path / "abstracts.txt"
    long = CNN + " It works well in practice on every dataset we tried."  # 47 words
    p.write_text(f"{long}\n{long}\n{long}\n\n{CNN}\n")
    r = tagger("label", p, "-f", "tsv")
    assert r.returncode == 0 and r.stdout.decode().count("\n") == 2
    assert r.stderr.decode() == (f"tagger: warning: {p}:1: this paragraph has 3 lines that each look like a whole "
                                 "abstract; if the file has one abstract per line, read it with --input-format lines\n")
    r = tagger("label", p, "-f", "tsv", "--input-format", "lines")
    lines = r.stdout.decode().splitlines()
    assert r.returncode == 0 and r.stderr == b"" and [x.split("\t")[0] for x in lines] == [
        "abstracts:1", "abstracts:2", "abstracts:3", "abstracts:4", "abstracts:5"] and lines[3] == "abstracts:4\t"
    r = tagger("label", "-", "--input-format", "lines", "-f", "tsv", input=f"{CNN}\n{CNN}\n".encode())
    assert r.stdout.decode().splitlines()[1].startswith("stdin:2\tmodality:image")


# --- output -------------------------------------------------------------------------------

def test_pairs_and_tsv_of_an_abstained_record():
    p = STREAMS / "10-pairs-abstained-row.jsonl"
    assert tagger("label", p, "-f", "pairs").stdout == b"short\t\t\n"
    assert tagger("label", p, "-f", "tsv").stdout == b"short\t\n"


def test_id_field_adds_no_id_of_its_own(tmp_path):
    p = tmp_path / "dois.jsonl"
    p.write_text(json.dumps({"DOI": "10.1/x", "abstract": CNN}) + "\n" + json.dumps({"abstract": CNN}) + "\n")
    out = jsonl(tagger("label", p, "--id-field", "DOI", "-f", "jsonl").stdout)
    assert "id" not in out[0] and out[1]["id"] == "dois:2"
    assert tagger("label", p, "--id-field", "DOI", "-f", "tsv").stdout.decode().startswith("10.1/x\t")


from tagger.readers.table import tsv_unescape  # noqa: E402
from tagger.writers.table import tsv_escape  # noqa: E402


@given(st.text())
@settings(max_examples=300)
def test_tsv_escapes_round_trip(s):
    cell = tsv_escape(s)
    assert "\t" not in cell and "\n" not in cell and "\r" not in cell
    assert tsv_unescape(cell) == s


def test_tsv_output_is_tsv_and_reads_back(tmp_path):
    p = tmp_path / "t.tsv"
    p.write_text("id\tabstract\tnote\n" + "a\t" + CNN + "\tline one\\nline two\\tand a tab, a \\\\ and \"quotes\"\n")
    (rec,) = records(p)
    assert rec.fields["note"] == 'line one\nline two\tand a tab, a \\ and "quotes"'
    r = tagger("label", p, "-f", "tsv")
    lines = r.stdout.decode().splitlines()
    assert r.returncode == 0 and len(lines) == 2 and lines[1].split("\t")[2] == (
        'line one\\nline two\\tand a tab, a \\\\ and "quotes"')


def test_terminal_text_output_shows_titles(tmp_path):
    import pty

    p = tmp_path / "t.jsonl"
    p.write_text(json.dumps({"id": "a", "title": "Deep convolutional nets", "abstract": CNN}) + "\n"
                 + json.dumps({"id": "b", "abstract": CNN}) + "\n")
    master, slave = pty.openpty()
    r = subprocess.run(CMD + ["label", str(p)], stdout=slave, stderr=subprocess.PIPE, env=ENV, timeout=300)
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    lines = out.decode().replace("\r\n", "\n").splitlines()
    assert r.returncode == 0
    assert lines[0] == "a  Deep convolutional nets"
    assert lines[lines.index("") + 1].startswith("b  We train a deep convolutional neural network to classify")
    assert tagger("label", p, "-f", "text").stdout.decode().splitlines()[0] == "a"  # not on a terminal


# --- BibTeX as input ----------------------------------------------------------------------

BIB = r"""@string{jml = {Journal of Machine Learning}}
@preamble{"\newcommand{\noopsort}[1]{}"}

@article{cnn2012,
  title = {Deep {C}onvolutional Nets},
  journal = jml,
  keywords = {to read},
  abstract = {We train a deep convolutional neural network to classify the images of a large benchmark dataset into
    one thousand classes and report state of the art top-1 and top-5 error rates compared with previous methods.}
}

@article{mt2017,
  title = {Attention},
  keywords = {to read, modality:text, method:transformer},
  abstract = {Something else entirely, short.}
}

@book{noabs,
  title = {A book}
}
"""


def test_bibtex_is_read_as_records(tmp_path):
    p = tmp_path / "refs.bib"
    p.write_text(BIB)
    r = tagger("label", p, "-f", "jsonl")
    out = jsonl(r.stdout)
    assert r.returncode == 0 and [x["id"] for x in out] == ["cnn2012", "mt2017", "noabs"]
    assert out[0]["title"] == "Deep Convolutional Nets" and out[0]["journal"] == "Journal of Machine Learning"
    assert "modality:image" in out[0]["tags"] and out[2]["reason"] == NO_ABSTRACT
    assert tagger("label", "-", "-f", "tsv", input=BIB.encode()).stdout.decode().startswith("cnn2012\tmodality:image")
    assert tagger("label", p, "-f", "bib").returncode == 2


def test_filter_of_bibtex_writes_the_entries_as_they_were(tmp_path):
    p = tmp_path / "refs.bib"
    p.write_text(BIB)
    r = tagger("filter", "modality:image or modality:text", p)
    entries = BIB.split("\n\n")
    assert r.returncode == 0 and r.stdout.decode() == (
        entries[0].split("\n")[0] + "\n\n" + entries[0].split("\n")[1] + "\n\n" + entries[1] + "\n\n" + entries[2] + "\n\n")
    import bibtexparser

    assert [e.key for e in bibtexparser.parse_string(r.stdout.decode()).entries] == ["cnn2012", "mt2017"]
    # mt2017 is too short to tag: its label ids in keywords are trusted, unless --retag
    assert tagger("filter", "modality:text", p, "-f", "tsv").stdout == b"mt2017\tmodality:text;method:transformer\n"
    assert tagger("filter", "--retag", "modality:text", p, "-f", "tsv").returncode == 1
    r = tagger("filter", "modality:image", p, "-o", tmp_path / "kept.bib")
    assert r.returncode == 0 and (tmp_path / "kept.bib").read_text().count("@article{") == 1


def test_jats_in_a_bib_abstract_tags_as_the_plain_text(tmp_path):
    p = tmp_path / "05.bib"
    p.write_bytes(shared_path("bib", "cases-2", "05-jats-markup-in-bib-abstract.bib").read_bytes())
    out = jsonl(tagger("label", p, "-f", "jsonl").stdout)
    assert [x["id"] for x in out] == ["withJats", "stripped"] and out[0]["tags"] == out[1]["tags"] and out[0]["tags"]


# --- encodings that do not fit the bytes --------------------------------------------------

@pytest.mark.parametrize("encoding, message", [
    ("utf-16", "not utf-16 text (UTF-16 stream does not start with BOM); if it is UTF-16 without a byte-order mark, "
               "name the byte order: --encoding utf-16-le or utf-16-be"),
    ("utf-32", "not utf-32 text (code point not in range(0x110000): byte 0x57 at offset 0); name the file's own "
               "encoding with --encoding"),
    ("utf-32-le", "not utf-32-le text (code point not in range(0x110000): byte 0x57 at offset 0)"),
])
def test_an_encoding_the_bytes_are_not_in_is_one_line_and_exit_2(tmp_path, encoding, message):
    """Not an internal error (utf-16 without a BOM), nor an empty run with exit 0 (utf-32 of
    latin-1 bytes: the first read failed, and its empty text read as the end of the input)."""
    f = tmp_path / "l1.txt"
    f.write_bytes(CNN.replace("state", "\xe9tat").encode("latin-1") + b"\n")
    for cmd in (["label", f], ["filter", "modality:image", f]):
        r = tagger(*cmd, "--encoding", encoding)
        assert r.returncode == 2 and r.stdout == b""
        err = r.stderr.decode()
        assert err.startswith(f"tagger: error: {f}:1: {message}") and err.count("\n") == 1, err


def test_tags_trusted_without_scores_print_in_every_format(tmp_path):
    """tagger filter of records that carry tags but no scores: pairs and text leave the score out
    (it was a KeyError, exit 3)."""
    f = tmp_path / "t.jsonl"
    f.write_text(json.dumps({"id": "a", "abstract": "x", "tags": ["modality:image", "method:cnn"]}) + "\n")
    r = tagger("filter", "modality:image", f, "-f", "pairs")
    assert (r.returncode, r.stdout) == (0, b"a\tmodality:image\t\na\tmethod:cnn\t\n")
    r = tagger("filter", "modality:image", f, "-f", "text")
    assert r.returncode == 0 and r.stdout.decode().splitlines()[1:3] == ["  modality:     image", "  method:       cnn"]
    for fmt in ("jsonl", "json", "csv", "tsv"):
        assert tagger("filter", "modality:image", f, "-f", fmt).returncode == 0, fmt


@pytest.mark.parametrize("header, fmt", [
    ("Automatically generated by Mendeley Desktop 1.19.8\nAny changes to this file will be lost.\n\n", "bib"),
    ("% Encoding: UTF-8\n\n", "bib"),
    ("%% comments\n" * 15, "bib"),
    ("An abstract, then more text.\nline two\nline three\nline four\n\n", "txt"),  # more than a header's text
    ("% a comment\n" * 25, "bib"),  # any number of % lines (issue 19: tugboat.bib)
    ("We study decorators.\nThey are written\nlike this\n", "txt"),  # an @name{ inside a paragraph is prose
    ("Handles are written\n\n@octocat{ or so\n\n", "txt"),  # after a blank line, but not an entry's @type{key,
])
def test_bibtex_after_a_reference_managers_header_is_sniffed(tmp_path, header, fmt):
    entry = "@article{k, title = {A title}, abstract = {" + CNN + "}}\n"
    p = tmp_path / "refs"  # no extension: told by its content, as standard input is
    p.write_text(header + entry)
    assert detect_format(str(p), sniff=True) == fmt
    if fmt == "bib":
        r = tagger("label", "-", "-f", "pairs", input=(header + entry).encode())
        assert r.returncode == 0 and r.stdout.decode().splitlines()[0].startswith("k\tmodality:image\t"), r.stderr
