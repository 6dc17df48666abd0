"""Record formats of literature databases (issue 19: "Formats read as text, silently",
"Columns and fields"): feeds, PubMed XML, MEDLINE, RIS read as records, documents tagger does
not read refused in one line, export columns found, .bib input read entry by entry.  Real
samples come from ../shared (skipped without it); small generated inputs run everywhere."""

import gzip
import io
import json
import os
import subprocess
import sys
import zipfile

import pytest
from hypothesis import given, settings, strategies as st

from conftest import ROOT, shared_path
from tagger.readers import InputError, ReadOptions, detect_format, read_records

CMD = [sys.executable, "-m", "tagger"]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
CNN = ("We train a deep convolutional neural network to classify the images of a large benchmark dataset into "
       "one thousand classes and report state of the art top-1 and top-5 error rates compared with previous methods.")
ALL = "modality:* or not modality:*"

ATOM = f"""<?xml version="1.0" encoding="UTF-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <title>ArXiv Query</title>
  <id>http://arxiv.org/api/abc</id>
  <entry>
    <id>http://arxiv.org/abs/2401.01234v2</id>
    <published>2024-01-03T10:00:00Z</published>
    <title>Convolutional networks</title>
    <summary>{CNN}</summary>
    <author><name>A. Author</name></author>
    <link href="http://arxiv.org/abs/2401.01234v2" rel="alternate"/>
  </entry>
  <entry>
    <id>tag:example.org,2024:7</id>
    <title>Convolutional networks</title>
    <summary type="html">&lt;p&gt;{CNN}&lt;/p&gt;</summary>
    <link href="https://example.org/7"/>
  </entry>
</feed>
"""
RSS = f"""<?xml version="1.0"?>
<rss version="2.0"><channel><title>cs.CV updates</title>
<item><title>A</title><link>https://arxiv.org/abs/2501.00002</link>
<description>arXiv:2501.00002v1 Announce Type: new
Abstract: {CNN}</description><guid>oai:arXiv.org:2501.00002v1</guid></item>
</channel></rss>
"""
PUBMED = f"""<?xml version="1.0" ?>
<!DOCTYPE PubmedArticleSet PUBLIC "-//NLM//DTD PubMedArticle, 1st January 2019//EN" "https://dtd.nlm.nih.gov/ncbi/pubmed/out/pubmed_190101.dtd">
<PubmedArticleSet>
<PubmedArticle><MedlineCitation Status="MEDLINE" Owner="NLM"><PMID Version="1">111</PMID>
<Article><Journal><Title>J Imaging</Title></Journal><ArticleTitle>Deep <i>nets</i> for images</ArticleTitle>
<Abstract><AbstractText Label="BACKGROUND">Images matter.</AbstractText>
<AbstractText Label="METHODS">{CNN}</AbstractText></Abstract></Article></MedlineCitation>
<PubmedData><ArticleIdList><ArticleId IdType="doi">10.1/x</ArticleId></ArticleIdList></PubmedData></PubmedArticle>
<PubmedArticle><MedlineCitation><PMID Version="1">222</PMID><Article><ArticleTitle>No abstract</ArticleTitle>
</Article></MedlineCitation></PubmedArticle>
</PubmedArticleSet>
"""
MEDLINE = f"""PMID- 111
OWN - NLM
TI  - Deep nets for
      images
AB  - {CNN[:60]}
      {CNN[60:]}
AU  - Smith J
AU  - Doe A

PMID- 222
TI  - Second
AB  - Short.
"""
RIS = f"TY  - JOUR\r\nTI  - Deep nets\r\nAB  - {CNN}\r\nDO  - 10.1/a\r\nKW  - x\r\nER  - \r\n\r\n" \
      "TY  - CONF\r\nT1  - Other\r\nN2  - Short.\r\nID  - own-7\r\nER  - \r\n\r\n" \
      "TY  - JOUR\r\nTI  - Third\r\nER  - \r\n"


def tagger(*args, input=None):
    return subprocess.run(CMD + [str(a) for a in args], input=input, capture_output=True, env=ENV, timeout=300)


def jsonl(out: bytes):
    return [json.loads(line) for line in out.decode("utf-8").split("\n") if line]


def write(tmp_path, name, text, mode="w"):
    p = tmp_path / name
    if isinstance(text, bytes):
        p.write_bytes(text)
    else:
        p.write_bytes(text.encode("utf-8"))
    return p


# --- sniffing ---------------------------------------------------------------------------

@pytest.mark.parametrize("name, text, fmt", [
    ("feed.xml", ATOM, "feed"), ("feed.txt", ATOM, "feed"), ("rss", RSS, "feed"), ("p.xml", PUBMED, "pubmed-xml"),
    ("m.txt", MEDLINE, "medline"), ("m.nbib", MEDLINE, "medline"), ("r.txt", RIS, "ris"), ("r", RIS, "ris"),
    ("r.ris", RIS, "ris"), ("plain.txt", CNN + "\n", "txt")])
def test_content_wins_over_generic_names(tmp_path, name, text, fmt):
    assert detect_format(str(write(tmp_path, name, text)), sniff=True) == fmt


def _zip(members):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for m, data in members.items():
            z.writestr(m, data)
    return buf.getvalue()


@pytest.mark.parametrize("data, says", [
    (b"%PDF-1.7\n%\xe2\xe3\n1 0 obj", "a PDF: extract its text first, e.g. with pdftotext"),
    (_zip({"[Content_Types].xml": "x", "word/document.xml": "x"}), "a Word document (.docx)"),
    (_zip({"[Content_Types].xml": "x", "xl/workbook.xml": "x"}), "an Excel workbook (.xlsx): save the sheet as CSV"),
    (_zip({"mimetype": "application/vnd.oasis.opendocument.text", "content.xml": "x"}), "an OpenDocument text"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(600), "an old Microsoft Office file"),
    (b"<!DOCTYPE html>\n<html><body><p>x</p></body></html>\n", "an HTML page"),
    (b"<?xml version='1.0'?>\n<!-- a catalogue -->\n<catalog><book/></catalog>\n", "root element is <catalog>")])
def test_documents_tagger_does_not_read_are_one_line_errors(tmp_path, data, says):
    p = write(tmp_path, "input.txt", data)
    for args, stdin in (([p], None), (["-"], data)):
        r = tagger("label", *args, input=stdin)
        err = r.stderr.decode()
        assert r.returncode == 2 and says in err and err.count("\n") == 1 and "--encoding" not in err, err
        assert r.stdout == b""


# --- feeds ------------------------------------------------------------------------------

def test_atom_entries_are_records_with_arxiv_ids(tmp_path):
    recs = list(read_records(str(write(tmp_path, "f.xml", ATOM))))
    assert [r.fields["id"] for r in recs] == ["2401.01234v2", "tag:example.org,2024:7"]
    assert recs[0].fields["title"] == "Convolutional networks" and recs[0].fields["abstract"] == CNN
    assert recs[0].fields["published"].startswith("2024") and recs[0].fields["authors"] == ["A. Author"]
    assert recs[0].line == 5 and recs[1].line == 13


def test_rss_items_from_stdin_and_gzip(tmp_path):
    r = tagger("label", "-f", "jsonl", input=gzip.compress(RSS.encode()))
    assert r.returncode == 0, r.stderr
    [rec] = jsonl(r.stdout)
    assert rec["id"] == "2501.00002v1" and rec["abstract"] == CNN and "method:cnn" in rec["tags"]


def test_feed_filter_gives_json_lines_and_markup_is_not_read(tmp_path):
    p = write(tmp_path, "feed", ATOM)
    r = tagger("filter", "method:cnn", p, "-f", "jsonl")
    assert r.returncode == 0, r.stderr
    out = jsonl(r.stdout)
    assert [x["id"] for x in out] == ["2401.01234v2", "tag:example.org,2024:7"]
    assert out[0]["scores"] == out[1]["scores"]  # the escaped <p> is no word


def test_xml_with_entities_is_refused(tmp_path):
    bomb = '<?xml version="1.0"?>\n<!DOCTYPE feed [<!ENTITY a "aaaa">]>\n<feed><entry><summary>&a;</summary></entry></feed>\n'
    r = tagger("label", write(tmp_path, "b.xml", bomb))
    assert r.returncode == 2 and "refused" in r.stderr.decode() and r.stderr.count(b"\n") == 1


def test_real_arxiv_atom_feed():
    p = shared_path("streams", "lukasschwab__arxiv.py__search_query_au_del_maestro.xml")
    recs = list(read_records(str(p)))
    assert len(recs) == 10 and all(r.fields["abstract"] and "<" not in r.fields["abstract"] for r in recs)


# --- PubMed XML, MEDLINE, RIS -----------------------------------------------------------

def test_pubmed_xml_structured_abstracts_joined(tmp_path):
    recs = list(read_records(str(write(tmp_path, "efetch.xml", PUBMED))))
    assert [r.fields["id"] for r in recs] == ["111", "222"]
    assert recs[0].fields["title"] == "Deep nets for images" and recs[0].fields["doi"] == "10.1/x"
    assert recs[0].fields["abstract"] == f"BACKGROUND: Images matter.\n\nMETHODS: {CNN}"
    assert recs[1].fields["abstract"] == ""


def test_medline_records_and_filter_pass_through(tmp_path):
    p = write(tmp_path, "pubmed.txt", MEDLINE)
    recs = list(read_records(str(p)))
    assert [r.fields["id"] for r in recs] == ["111", "222"]
    assert recs[0].fields["title"] == "Deep nets for images" and recs[0].fields["abstract"] == CNN
    assert recs[0].fields["AU"] == ["Smith J", "Doe A"]
    r = tagger("filter", ALL, p)
    assert r.returncode == 0 and r.stdout.decode() == MEDLINE, r.stderr
    r = tagger("filter", "method:cnn", p)
    assert r.stdout.decode() == MEDLINE.split("\n\n")[0] + "\n\n"


def test_ris_records_ids_and_byte_exact_filter(tmp_path):
    p = write(tmp_path, "export.ris", RIS)
    recs = list(read_records(str(p)))
    assert [r.fields["id"] for r in recs] == ["10.1/a", "own-7", "export:3"]
    assert [r.fields["title"] for r in recs] == ["Deep nets", "Other", "Third"]
    assert recs[1].fields["abstract"] == "Short." and recs[0].fields["KW"] == ["x"]
    r = tagger("filter", ALL, p)
    assert r.returncode == 0 and r.stdout == RIS.encode(), r.stderr
    out = tmp_path / "kept.ris"
    r = tagger("filter", "method:cnn", p, "-o", out)
    assert r.returncode == 0 and out.read_bytes() == RIS.encode().split(b"\r\n\r\n")[0] + b"\r\n\r\n"
    r = tagger("label", "-", "-f", "jsonl", input=RIS.encode())
    assert [x["id"] for x in jsonl(r.stdout)] == ["10.1/a", "own-7", "export:3"] or r.returncode == 0


_line = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc", "Zl", "Zp")), min_size=1, max_size=30) \
    .map(lambda s: " ".join(s.split())).filter(bool)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(_line, st.lists(_line, min_size=1, max_size=3), st.lists(_line, max_size=3)),
                min_size=1, max_size=4))
def test_ris_reader_agrees_with_rispy(tmp_path_factory, recs):
    import rispy

    text = "".join(f"TY  - JOUR\nTI  - {t}\nAB  - {' '.join(ab)}\n" + "".join(f"KW  - {k}\n" for k in kws) + "ER  - \n\n"
                   for t, ab, kws in recs)
    p = tmp_path_factory.mktemp("ris") / "x.ris"
    p.write_text(text, encoding="utf-8")
    ours = list(read_records(str(p)))
    ref = rispy.loads(text)
    assert [(r.fields["title"], r.fields["abstract"], r.fields.get("KW", [])) for r in ours] == \
        [(x.get("title") or x.get("primary_title"), x.get("abstract", ""), x.get("keywords", [])) for x in ref]
    assert "".join(r.block for r in ours) == text


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 10**8), _line, st.lists(_line, min_size=1, max_size=4)), min_size=1, max_size=4))
def test_medline_reader_agrees_with_biopython(tmp_path_factory, recs):
    Medline = pytest.importorskip("Bio.Medline")
    text = "\n".join(f"PMID- {pmid}\nTI  - {t}\nAB  - {ab[0]}\n" + "".join(f"      {x}\n" for x in ab[1:])
                     for pmid, t, ab in recs)
    p = tmp_path_factory.mktemp("med") / "x.nbib"
    p.write_text(text, encoding="utf-8")
    ours = [(r.fields["id"], r.fields["title"], r.fields["abstract"]) for r in read_records(str(p))]
    ref = [(m["PMID"], m["TI"], m["AB"]) for m in Medline.parse(io.StringIO(text))]
    assert ours == ref


def test_real_medline_and_ris():
    med = shared_path("streams", "biopython__biopython__pubmed_result2.txt")
    Medline = pytest.importorskip("Bio.Medline")
    ours = [(r.fields["id"], r.fields["title"], r.fields["abstract"]) for r in read_records(str(med))]
    with open(med, encoding="utf-8") as fh:
        assert ours == [(m["PMID"], m["TI"], m.get("AB", "")) for m in Medline.parse(fh)] and len(ours) == 4
    ris = shared_path("streams", "NLeSC__litstudy__example.ris")
    recs = list(read_records(str(ris)))
    assert len(recs) == 25 and all(r.fields["abstract"] and "TY  -" not in r.fields["abstract"] for r in recs)
    assert recs[0].fields["id"] == "10.1109/MCSE.2018.2884139"
    r = tagger("filter", ALL, ris)
    assert r.returncode == 0 and r.stdout == ris.read_bytes()


# --- columns ----------------------------------------------------------------------------

@pytest.mark.parametrize("header, ident", [
    ("Title,Abstract,EID", "e1"), ("TI,AB,UT", "e1"), ("Document Title,Abstract,DOI", "e1"),
    ("Title,Abstract,Publication ID", "e1"), ("title,ABSTRACT,Lens ID", "e1"), ("Title,Abstract Note,Key", "e1")])
def test_export_columns_found_case_insensitively(tmp_path, header, ident):
    from tagger.readers.fields import document

    sep = "\t" if header.startswith("TI") else ","
    p = write(tmp_path, "x.tsv" if sep == "\t" else "x.csv", header.replace(",", sep) + "\n"
              + sep.join(["Convolutional networks", CNN.replace(",", ""), ident]) + "\n")
    [rec] = read_records(str(p))
    doc = document(rec.fields)
    assert rec.id() == ident and doc.title == "Convolutional networks" and doc.text.startswith("We train")


def test_given_fields_win_over_detection(tmp_path):
    p = write(tmp_path, "x.csv", f"Document Title,Other,Abstract,DOI\nT,O,{CNN.replace(',', '')},d\n")
    r = tagger("label", p, "--title-field", "Other", "--id-field", "Other", "-f", "pairs")
    assert r.returncode == 0 and r.stdout.startswith(b"O\t"), r.stderr


def test_ieee_export_title_used():
    p = shared_path("streams", "NLeSC__litstudy__ieee.csv")
    from tagger.readers.fields import document

    recs = list(read_records(str(p)))
    assert all(document(r.fields).title == r.fields["Document Title"] for r in recs)
    assert recs[0].id() == recs[0].fields["DOI"]


# --- .bib input -------------------------------------------------------------------------

BIB = f"""@article{{key1,
  id = {{other-id}},
  title = {{Nets}},
  abstract = {{{CNN}}},
}}

@article{{broken,
  title = {{Broken {{brace}},
}}

@article{{dup,
  title = {{First}},
  title = {{Second}},
  abstract = {{{CNN}}},
}}

@book{{pc,
  author = {{A and B}}, % Picks all names, no position
  title  = {{Comment}}  % trailing, with a comma
}}
"""


def test_bib_input_keeps_going_past_an_unreadable_entry(tmp_path):
    p = write(tmp_path, "refs.bib", BIB)
    out = tmp_path / "out.jsonl"
    r = tagger("label", p, "-o", out)
    err = r.stderr.decode()
    assert r.returncode == 2 and "entry broken cannot be read" in err and "left untouched" not in err, err
    recs = jsonl(out.read_bytes())
    assert [x["id"] for x in recs] == ["key1", "dup", "pc"] and recs[0]["id_field"] == "other-id"
    assert recs[1]["title"] == "First"
    r = tagger("label", p, "-f", "jsonl", "--on-error", "skip")
    assert r.returncode == 0 and len(jsonl(r.stdout)) == 3


def test_bib_on_stdin_after_a_long_percent_header():
    header = "".join(f"% line {i} of a long preamble, as Beebe writes them\n" for i in range(150)) + "\n"
    text = header + "Some text.\n\n" + BIB.split("@article{broken")[0]
    r = tagger("label", "-f", "jsonl", input=text.encode())
    assert r.returncode == 0 and [x["id"] for x in jsonl(r.stdout)] == ["key1"], r.stderr
    prose = header + "one\ntwo\nthree\nfour lines of prose\n\n" + BIB.split("@article{broken")[0]
    assert tagger("label", "-f", "jsonl", input=prose.encode()).returncode == 0


def test_real_bibliographies():
    tug = shared_path("bib", "real-3", "plk__biber__tugboat.bib")
    from tagger.readers import sniff_format
    import tagger.readers.stream as stream

    assert detect_format(str(tug), "bib") == "bib"
    xdata = shared_path("bib", "real-3", "plk__biber__xdata.bib")
    r = tagger("label", xdata, "--text-field", "title", "-f", "jsonl")
    assert r.returncode == 0 and "never closed" not in r.stderr.decode(), r.stderr
    refs = shared_path("bib", "real-3", "black-hole-group__bibtex-refs__refs.bib")
    ids = [x["id"] for x in jsonl(tagger("label", refs, "-f", "jsonl").stdout)]
    assert ids and not any(i.startswith("refs:") for i in ids)
    day = shared_path("bib", "real-3", "DayTimeChunks__HydrologicalMonitoring__library.bib")
    r = tagger("label", day, "-f", "jsonl")
    assert r.returncode == 2 and len(jsonl(r.stdout)) == 415
