"""CSV written from CSV input keeps the input's delimiter (`;` of European Excel exports stays
`;`; --delimiter names others), quoting with `"` as the reader reads it; output from any other
input is `,`-separated."""

import csv
import io
import json
from types import SimpleNamespace

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings, strategies as st

from tagger.cli import cli
from tagger.readers import ReadOptions, read_records
from tagger.writers import Writer

CNN = ("We train a deep convolutional neural network to classify the images of a large benchmark dataset into "
       "one thousand classes and report state of the art top-1 and top-5 error rates compared with previous methods.")


def run(*args, input=None):
    return CliRunner().invoke(cli, [str(a) for a in args], input=input)


def _table(delimiter: str, rows) -> str:
    buf = io.StringIO()
    csv.writer(buf, delimiter=delimiter, lineterminator="\n").writerows([["id", "title", "abstract"], *rows])
    return buf.getvalue()


_CELL = st.text(st.sampled_from('ab ,;|"\'\n'), max_size=12)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(delimiter=st.sampled_from([",", ";", "|", "\t"]),
       rows=st.lists(st.tuples(st.from_regex(r"[a-z0-9]{1,6}", fullmatch=True), _CELL, _CELL), min_size=1, max_size=4))
def test_csv_output_keeps_the_delimiter_it_was_read_with(tmp_path_factory, delimiter, rows):
    rows = [[i, t, "x" + a] for i, t, a in rows]  # an abstract is never blank (a blank row is skipped)
    p = tmp_path_factory.mktemp("dialect") / "in.csv"
    p.write_text(_table(delimiter, rows), encoding="utf-8")
    sniffed = delimiter in ",;"  # the header row tells these; others are named with --delimiter
    recs = list(read_records(str(p), "csv", opts=ReadOptions(delimiter=None if sniffed else delimiter)))
    assert [r.delimiter for r in recs] == [delimiter] * len(rows)
    out = io.StringIO()
    w = Writer(out, "csv", table_format="csv")
    for r in recs:
        w.write(r, SimpleNamespace(tags=["modality:image", "method:cnn"], scores={"modality:image": 0.9}))
    w.close()
    assert out.getvalue().split("\n", 1)[0] == delimiter.join(["id", "title", "abstract", "tags", "scores"])
    back = list(csv.reader(io.StringIO(out.getvalue()), delimiter=delimiter, quotechar='"'))
    assert back == [["id", "title", "abstract", "tags", "scores"]] + [
        [*row, "modality:image;method:cnn", '{"modality:image": 0.9}'] for row in rows]


@pytest.fixture
def semicolons(tmp_path):
    p = tmp_path / "export.csv"
    p.write_text(f'id;title;abstract\na;"Nets; deep";{CNN}\nb;Other;"{CNN} Also ""quoted""."\n', encoding="utf-8")
    return p


def _rows(text: str, delimiter: str):
    return list(csv.reader(io.StringIO(text), delimiter=delimiter))


def test_label_filter_and_o_keep_semicolons(semicolons, tmp_path):
    r = run("label", semicolons)
    assert r.exit_code == 0, r.output
    rows = _rows(r.stdout, ";")
    assert rows[0] == ["id", "title", "abstract", "tags", "scores"] and [x[:3] for x in rows[1:]] == [
        ["a", "Nets; deep", CNN], ["b", "Other", f'{CNN} Also "quoted".']]
    assert all("modality:image" in x[3].split(";") and json.loads(x[4]) for x in rows[1:])
    out = tmp_path / "tagged.csv"
    assert run("label", semicolons, "-o", out).exit_code == 0
    assert out.read_text(encoding="utf-8") == r.stdout
    f = run("filter", "modality:image", semicolons)
    assert f.exit_code == 0 and f.stdout == r.stdout


def test_csv_from_other_input_stays_commas(semicolons, tmp_path):
    tsv = tmp_path / "in.tsv"
    tsv.write_text(f"id\ttitle\tabstract\na\tNets; deep\t{CNN}\n", encoding="utf-8")
    jl = tmp_path / "in.jsonl"
    jl.write_text(json.dumps({"id": "a", "title": "Nets; deep", "abstract": CNN}) + "\n", encoding="utf-8")
    r = run("label", tsv, "-f", "csv")
    assert r.exit_code == 0 and r.stdout.startswith("id,title,abstract,tags,scores\na,Nets; deep,")
    r = run("label", jl, "-f", "csv")
    assert r.exit_code == 0 and r.stdout.startswith("id,tags,scores\na,")
    r = run("label", semicolons, "--delimiter", ",")  # named: read (and written) with ','
    assert r.exit_code == 2 and "no column 'abstract' (the columns are 'id;title;abstract')" in r.stderr


# --- a table on standard input (or in a file whose name tells nothing) ----------------------

@pytest.mark.parametrize("first, fmt", [
    (b"id,title,abstract", "csv"), (b"id;title;abstract\r\n", "csv"), (b'"Key","Item Type","Title","Abstract Note"', "csv"),
    (b"\xef\xbb\xbfTitle,Abstract,Year", "csv"), (b"PT\tAU\tTI\tAB\tUT", "tsv"), (b"title\tsummary", "tsv"),
    (b"Document Title,Authors,Author Affiliations,Publication Title,Date Added To Xplore", "csv"),
    (b"abstract", None), (b"Title: Deep nets, abstract and more", None), (b"Abstract", None),
    (b"ICLR 2026 Papers", None), (b"We propose, with care, a title and an abstract for every paper.", None),
    (b"id,name,year", None), (b"", None),
])
def test_header_format_tells_a_header_row_from_text(first, fmt):
    from tagger.readers.table import header_format

    assert header_format(first) == fmt


_ALIASES = {"abstract", "abstract note", "ab", "title", "document title", "ti", "article title"}


@settings(max_examples=100, deadline=None)
@given(st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\n"), max_size=200))
def test_a_line_without_a_title_or_abstract_column_is_never_a_header(line):
    from tagger.readers.table import header_format

    if header_format(line.encode("utf-8")) is not None:
        cells = line.replace("\t", ",").replace(";", ",").split(",")
        assert _ALIASES & {c.strip().strip('"').strip().casefold() for c in cells}


_NAME = st.from_regex(r"[A-Za-z][A-Za-z0-9_.()]{0,10}( [A-Za-z0-9_.()]{1,8}){0,3}", fullmatch=True)


@settings(max_examples=100, deadline=None)
@given(names=st.lists(_NAME, min_size=1, max_size=6), alias=st.sampled_from(sorted(_ALIASES)),
       at=st.integers(0, 6), sep=st.sampled_from([",", ";", "\t"]),
       prose=st.lists(st.from_regex(r"[a-z]{1,8}", fullmatch=True), min_size=6, max_size=12))
def test_a_row_of_names_is_a_header_and_a_long_cell_makes_it_prose(names, alias, at, sep, prose):
    from tagger.readers.table import header_format

    names = [n for n in names if n.casefold() not in _ALIASES]
    row = names[:at] + [alias.title()] + names[at:]
    assert header_format(sep.join(row).encode()) == ("tsv" if sep == "\t" else "csv")
    assert header_format(sep.join(row + [" ".join(prose)]).encode()) is None  # a cell of 6 words or more


def test_csv_on_stdin_is_read_as_a_table(semicolons):
    data = semicolons.read_bytes()
    r = run("label", "-", input=data)
    assert r.exit_code == 0, r.output
    assert r.stdout == run("label", semicolons).stdout and r.stdout.startswith("id;title;abstract;tags;scores\n")
    r = run("label", "-f", "jsonl", input=data.replace(b";", b","))  # no FILE: standard input too
    assert [(x["id"], "modality:image" in x["tags"]) for x in map(json.loads, r.stdout.splitlines())] == [
        ("a", True), ("b", True)]
    tsv = f"id\ttitle\tabstract\nz\tNets\t{CNN}\n".encode()
    r = run("filter", "modality:image", "-f", "pairs", input=tsv)
    assert r.exit_code == 0 and r.stdout.startswith("z\tmodality:image\t")
    r = run("label", "-", "--input-format", "txt", "-f", "jsonl", input=data)  # the option still decides
    assert [x["id"] for x in map(json.loads, r.stdout.splitlines())] == ["stdin:1"]


def test_text_on_stdin_stays_text():
    text = f"Title, Abstract and Keywords of a talk we gave\n\n{CNN}\n".encode()  # a heading (skipped), then text
    r = run("label", "-f", "jsonl", input=text)
    assert r.exit_code == 0 and [(x["id"], x["abstract"]) for x in map(json.loads, r.stdout.splitlines())] == [
        ("stdin:1", CNN)]


# --- a first line that only looks like a header row -----------------------------------------

@pytest.mark.parametrize("head, whole, fmt", [
    (b"Title, Abstract and Methods\nWe study things.\n", False, None),  # the next line has 1 cell, not 2
    (b"Abstract, Introduction\nWe study, things, and more, stuff.\n", False, None),  # 4 cells, not 2
    (b"title,abstract\nfoo,bar\n", False, "csv"), (b"title;abstract\r\n\r\nfoo;bar\r\n", False, "csv"),
    (b"title\tabstract\nfoo\tbar\tbaz\n", False, None), (b"title\tabstract\n\nfoo\tbar\n", False, "tsv"),
    (b'title,abstract\nfoo,"a cell over\nlines, with commas', False, "csv"),  # the row goes on past the peek
    (b"title,abstract\nfoo bar", False, "csv"),  # a line cut short is not looked at...
    (b"title,abstract\nfoo bar", True, None),  # ...unless it is the input's last
    (b"title,abstract\n", True, "csv"),  # a header alone
])
def test_header_format_reads_the_next_row_as_the_reader_will(head, whole, fmt):
    from tagger.readers.table import header_format

    assert header_format(head, whole) == fmt


@settings(max_examples=100, deadline=None)
@given(names=st.lists(_NAME, min_size=1, max_size=5), alias=st.sampled_from(sorted(_ALIASES)),
       sep=st.sampled_from([",", ";", "\t"]), cells=st.lists(st.from_regex(r"[a-z]{1,8}", fullmatch=True), min_size=1,
                                                            max_size=8))
def test_a_header_is_one_only_when_the_next_row_has_its_width(names, alias, sep, cells):
    from tagger.readers.table import header_format

    names = [n for n in names if n.casefold() not in _ALIASES] + [alias]
    head = f"{sep.join(names)}\n{sep.join(cells)}\n".encode()
    assert header_format(head) == (("tsv" if sep == "\t" else "csv") if len(cells) == len(names) else None)


@pytest.mark.parametrize("text", ["Title, Abstract and Methods\nWe study things which we did.\nAnd more, much more.\n",
                                  "Abstract, Introduction\nWe study, things, and more, stuff.\n"])
def test_text_whose_first_line_looks_like_a_header_stays_text(text, tmp_path):
    for args in (["-"], [tmp_path / "notes.dat"]):
        (tmp_path / "notes.dat").write_text(text, encoding="utf-8")
        r = run("label", *args, "-f", "jsonl", input=text.encode())
        assert r.exit_code == 0, r.output
        assert [x["abstract"] for x in map(json.loads, r.stdout.splitlines())] == [text.strip()]


def test_a_sniffed_table_that_fails_names_input_format_txt(tmp_path):
    hint = "; if this is plain text, pass --input-format txt"
    r = run("label", "-", input=b"Title, Abstract and Methods\n")  # nothing after it to tell
    assert r.exit_code == 2 and r.stderr.splitlines() == [
        "tagger: error: -:1: no column 'abstract' (the columns are 'Title', ' Abstract and Methods'); name the "
        f"abstracts' column with --text-column NAME{hint} (0 records were written before it)"]
    (tmp_path / "t.dat").write_bytes(b"title,abstract\nWe say, " + b"hello " * 20000 + b", there\n")  # past the peek
    r = run("label", tmp_path / "t.dat", input=b"")
    assert r.exit_code == 2 and r.stderr == (f"tagger: error: {tmp_path / 't.dat'}:2: row has 3 columns, the header "
                                             f"has 2{hint} (0 records were written before it)\n")
    (tmp_path / "t.csv").write_bytes((tmp_path / "t.dat").read_bytes())
    for args in ([tmp_path / "t.csv"], [tmp_path / "t.dat", "--input-format", "csv"]):  # a table by name or option
        r = run("label", *args)
        assert r.exit_code == 2 and "row has 3 columns, the header has 2 (0 records" in r.stderr and hint not in r.stderr


# --- --delimiter ---------------------------------------------------------------------------

@pytest.mark.parametrize("delimiter, says", [
    ('"', "--delimiter '\"': the delimiter cannot be the quote character '\"', which CSV cells are quoted with; "
          "name another (e.g. --delimiter '|')"),
    ("\r", "--delimiter '\\r': a line break ends a row, it cannot separate cells; name another (e.g. --delimiter '|')"),
])
def test_a_delimiter_csv_cannot_use_is_one_line(semicolons, delimiter, says):
    for args in (["label", semicolons], ["filter", "modality:image", "-"]):
        r = run(*args, "--delimiter", delimiter, input=semicolons.read_bytes())
        assert (r.exit_code, r.stdout, r.stderr) == (2, "", f"tagger: error: {says}\n")


@settings(max_examples=25, deadline=None)
@given(delimiter=st.sampled_from(list("|:!#$%&*+/<=>?@^~`' \t")),
       title=st.text(st.sampled_from("ab ,;|:\"\n"), max_size=10))
def test_a_delimiter_makes_stdin_a_table(tmp_path_factory, delimiter, title):
    data = _table(delimiter, [["z1", title, CNN]])
    path = tmp_path_factory.mktemp("delim") / "export.dat"  # an extension that tells nothing
    path.write_text(data, encoding="utf-8")
    for args, given in ((["-"], data), ([path], None)):
        r = run("label", *args, "--delimiter", "tab" if delimiter == "\t" else delimiter, "-f", "jsonl", input=given)
        assert r.exit_code == 0, r.output
        (rec,) = map(json.loads, r.stdout.splitlines())
        assert (rec["id"], rec["title"], rec["abstract"]) == ("z1", title, CNN) and "modality:image" in rec["tags"]
    r = run("label", "--delimiter", delimiter, input=data)  # no -f: the table comes back with its delimiter
    assert r.exit_code == 0 and _rows(r.stdout, delimiter)[0] == ["id", "title", "abstract", "tags", "scores"]


# --- Excel's "CSV UTF-8": a BOM and CRLF line endings --------------------------------------

@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(delimiter=st.sampled_from([",", ";"]), bom=st.booleans(), crlf=st.booleans(),
       rows=st.lists(st.tuples(st.from_regex(r"[a-z0-9]{1,6}", fullmatch=True),
                               st.text(st.sampled_from('ab ,;"\''), max_size=10)), min_size=1, max_size=4))
def test_csv_output_keeps_the_bom_and_crlf_of_its_csv_input(tmp_path_factory, delimiter, bom, crlf, rows):
    rows = [[i, t, "x" + CNN] for i, t in rows]
    nl = "\r\n" if crlf else "\n"
    p = tmp_path_factory.mktemp("excel") / "in.csv"
    p.write_bytes(("\ufeff" if bom else "").encode() + _table(delimiter, rows).replace("\n", nl).encode())
    recs = list(read_records(str(p), "csv", opts=ReadOptions()))
    out = io.StringIO(newline="")
    w = Writer(out, "csv", table_format="csv")
    for r in recs:
        w.write(r, SimpleNamespace(tags=["modality:image"], scores={"modality:image": 0.9}))
    w.close()
    text = out.getvalue()
    assert text.startswith("\ufeff") == bom and text.count("\ufeff") == int(bom)
    assert text.endswith(nl) and (text.count("\r\n") == len(rows) + 1 if crlf else "\r" not in text)
    assert list(csv.reader(io.StringIO(text.removeprefix("\ufeff"), newline=""), delimiter=delimiter)) == [
        ["id", "title", "abstract", "tags", "scores"]] + [[*row, "modality:image", '{"modality:image": 0.9}'] for row in rows]


def test_an_excel_csv_round_trips_with_its_bom_and_crlf(tmp_path):
    src = tmp_path / "excel.csv"
    src.write_bytes(b'\xef\xbb\xbfid;title;abstract\r\na;"Nets; deep";' + CNN.encode() + b'\r\nb;"two\nlines";'
                    + CNN.encode() + b"\r\n")
    out = tmp_path / "tagged.csv"
    assert run("label", src, "-o", out).exit_code == 0
    data = out.read_bytes()
    assert data.startswith(b"\xef\xbb\xbfid;title;abstract;tags;scores\r\na;\"Nets; deep\";" + CNN.encode() + b";")
    assert data.count(b"\r\n") == 3 and data.endswith(b"\r\n") and b'b;"two\nlines";' in data
    for args in (["label", src], ["label", "-"], ["filter", "modality:image", src]):
        r = CliRunner().invoke(cli, [str(a) for a in args], input=src.read_bytes())
        assert r.exit_code == 0 and r.stdout_bytes == data
    r = run("label", src, "-f", "tsv")  # TSV is PostgreSQL's text format: no BOM, '\n'
    assert r.exit_code == 0 and r.stdout_bytes.startswith(b"id\ttitle\tabstract\ttags\tscores\n") and b"\r" not in r.stdout_bytes
