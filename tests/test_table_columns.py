"""The columns of CSV and TSV tables: names matched without the white space around them
(`title, abstract`), the values keeping theirs; several tables in one output must have the
same columns; an output of no rows still has its header row."""

import csv
import io
import json

from click.testing import CliRunner
from hypothesis import given, settings, strategies as st

from tagger.cli import cli
from tagger.readers import ReadOptions, read_records
from tagger.readers.fields import document

CNN = ("We train a deep convolutional neural network to classify the images of a large benchmark dataset into "
       "one thousand classes and report state of the art top-1 and top-5 error rates compared with previous methods.")


def run(*args, input=None):
    return CliRunner().invoke(cli, [str(a) for a in args], input=input)


_PAD = st.sampled_from(["", " ", "  ", "\t"])


@settings(max_examples=60, deadline=None)
@given(pads=st.lists(_PAD, min_size=6, max_size=6), key=st.from_regex(r"[a-z0-9]{1,6}", fullmatch=True),
       delimiter=st.sampled_from([",", ";"]), title=st.sampled_from(["title", "Title"]))
def test_column_names_are_matched_without_white_space_and_values_keep_theirs(pads, key, delimiter, title):
    names = [pads[0] + "id" + pads[1], pads[2] + title + pads[3], pads[4] + "abstract" + pads[5]]
    values = [f" {key}", " Nets", f"  {CNN} "]
    buf = io.StringIO()
    csv.writer(buf, delimiter=delimiter, lineterminator="\n").writerows([names, values])
    (rec,) = read_records(_write(buf.getvalue()), "csv", opts=ReadOptions())
    assert list(rec.fields) == names and list(rec.fields.values()) == values  # the table as it was
    doc = document(rec.fields)
    assert (doc.text, doc.title, rec.id()) == (f"  {CNN} ", " Nets", f" {key}")


def _write(text: str) -> str:
    import tempfile

    with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False, encoding="utf-8") as fh:
        fh.write(text)
    return fh.name


def test_a_space_after_the_delimiter_in_the_header(tmp_path):
    data = f"title, abstract\nfoo, {CNN}\n"
    (tmp_path / "x.csv").write_text(data, encoding="utf-8")
    for args, given in (([tmp_path / "x.csv"], None), (["-"], data)):
        r = run("label", *args, input=given)
        assert r.exit_code == 0, r.output
        rows = list(csv.reader(io.StringIO(r.stdout)))
        assert rows[0] == ["title", " abstract", "tags", "scores"] and rows[1][:2] == ["foo", f" {CNN}"]
        assert "modality:image" in rows[1][2].split(";")
    # named columns too: --text-column, --title-column, --id-column as written, the header padded
    (tmp_path / "s.tsv").write_text(f"key \t summary \t name\nk1\t{CNN}\tNets\n", encoding="utf-8")
    named = ["--text-column", "summary", "--title-column", "name", "--id-column", "key"]
    r = run("label", tmp_path / "s.tsv", *named, "-f", "jsonl")
    assert r.exit_code == 0, r.output
    (out,) = map(json.loads, r.stdout.splitlines())
    assert list(out)[:3] == ["key ", " summary ", " name"] and "modality:image" in out["tags"]
    r = run("label", tmp_path / "s.tsv", *named, "-f", "pairs")
    assert r.exit_code == 0 and r.stdout.startswith("k1\tmodality:image\t")
    (rec,) = read_records(str(tmp_path / "s.tsv"), "tsv", opts=ReadOptions(text_field="summary", title_field="name",
                                                                           id_field="key"))
    doc = document(rec.fields, "summary", "name")
    assert (doc.text, doc.title, rec.id("key")) == (CNN, "Nets", "k1")
    (tmp_path / "i.csv").write_text(f"title, id, abstract\nNets, k2, {CNN}\n", encoding="utf-8")
    r = run("label", tmp_path / "i.csv", "-f", "pairs")
    assert r.exit_code == 0 and r.stdout.startswith(" k2\tmodality:image\t")  # the id cell as it is


# --- several tables, one table output -------------------------------------------------------

def _csv(path, columns, rows):
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows([columns, *([r[c] for c in columns] for r in rows)])
    path.write_text(buf.getvalue(), encoding="utf-8")
    return path


A_ROW = {"id": "a1", "title": "Nets", "abstract": CNN, "venue": "ICLR", "year": "2024"}
B_ROW = {"id": "b1", "title": "More nets", "abstract": CNN + " Again.", "venue": "NeurIPS", "year": "2025"}


def test_tables_of_other_columns_are_refused_before_anything_is_written(tmp_path):
    a = _csv(tmp_path / "a.csv", ["id", "title", "abstract"], [A_ROW])
    b = _csv(tmp_path / "b.csv", ["abstract", "venue", "year"], [B_ROW])
    out = tmp_path / "mixed.csv"
    out.write_text("old\n", encoding="utf-8")
    why = f"(the columns of the output are fixed by {a}, the first input; tables in one output must have the same columns)"
    for args in (["label", a, b, "-o", out], ["label", a, b], ["filter", "modality:image", a, b],
                 ["label", a, b, "-f", "tsv"]):
        r = run(*args)
        assert (r.exit_code, r.stdout, r.stderr) == (2, "", f"tagger: error: {b}: has no column 'id' {why}\n")
    assert out.read_text(encoding="utf-8") == "old\n"
    r = run("label", a, "-", input=b.read_text(encoding="utf-8"))  # standard input is a table like the others
    assert r.exit_code == 2 and r.stderr == f"tagger: error: -: has no column 'id' {why}\n"
    c = _csv(tmp_path / "c.csv", ["id", "title", "abstract", "venue"], [B_ROW])
    r = run("label", a, c)
    assert r.exit_code == 2 and r.stderr == f"tagger: error: {c}: has a column 'venue' that the first input has not {why}\n"
    # where no column is lost: JSON Lines keeps each record's own fields; a count counts
    r = run("label", a, b, "-f", "jsonl")
    assert r.exit_code == 0 and [list(json.loads(x))[:3] for x in r.stdout.splitlines()] == [
        ["id", "title", "abstract"], ["abstract", "venue", "year"]]
    r = run("filter", "-c", "modality:image", a, b)
    assert (r.exit_code, r.stdout) == (0, "2\n")


@settings(max_examples=12, deadline=None)
@given(order=st.permutations(["id", "title", "abstract", "year"]), drop=st.sampled_from([None, "id", "title", "year"]))
def test_the_same_columns_in_another_order_are_written_in_the_first_ones(tmp_path_factory, order, drop):
    d = tmp_path_factory.mktemp("order")
    first = ["id", "title", "abstract", "year"]
    a = _csv(d / "a.csv", first, [A_ROW])
    b = _csv(d / "b.csv", [c for c in order if c != drop], [B_ROW])
    r = run("label", a, b, "-o", d / "out.csv")
    if drop is not None:
        assert r.exit_code == 2 and f"{b}: has no column {drop!r} (the columns of the output" in r.stderr
        assert not (d / "out.csv").exists()
        return
    assert r.exit_code == 0, r.output
    rows = list(csv.DictReader(io.StringIO((d / "out.csv").read_text(encoding="utf-8"))))
    assert list(rows[0]) == [*first, "tags", "scores"]
    assert [{k: row[k] for k in first} for row in rows] == [{k: A_ROW[k] for k in first}, {k: B_ROW[k] for k in first}]


# --- an output without rows -----------------------------------------------------------------

def test_a_table_without_rows_still_has_its_header_row(tmp_path):
    head = tmp_path / "head.csv"
    head.write_bytes(b"\xef\xbb\xbfid;title;abstract\r\n")  # Excel's, with no row yet
    want = b"\xef\xbb\xbfid;title;abstract;tags;scores\r\n"
    out = tmp_path / "out.csv"
    r = run("label", head, "-o", out)
    assert r.exit_code == 0 and out.read_bytes() == want
    for args, given in ((["label", head], None), (["label", "-"], head.read_bytes()), (["filter", "method:cnn", head], None)):
        r = CliRunner().invoke(cli, [str(a) for a in args], input=given)
        assert r.stdout_bytes == want and r.exit_code == (1 if args[0] == "filter" else 0)
    tsv = tmp_path / "head.tsv"
    tsv.write_text("id\ttags\tabstract\n", encoding="utf-8")  # a 'tags' column is not added twice
    assert run("label", tsv).stdout == "id\ttags\tabstract\tscores\n"


def test_a_filter_that_keeps_nothing_writes_the_header_row(tmp_path):
    src = _csv(tmp_path / "a.csv", ["id", "title", "abstract"], [A_ROW])
    r = run("filter", "modality:audio", src)
    assert (r.exit_code, r.stdout) == (1, "id,title,abstract,tags,scores\n")
    r = run("filter", "modality:audio", src, "--no-header", "--text-column", "3")  # columns by number, as rows have
    assert (r.exit_code, r.stdout) == (1, "1,2,3,tags,scores\n")
    jl = tmp_path / "a.jsonl"
    jl.write_text(json.dumps(A_ROW) + "\n", encoding="utf-8")
    r = run("filter", "modality:audio", jl, "-f", "csv")  # CSV of other input: id,tags,scores
    assert (r.exit_code, r.stdout) == (1, "id,tags,scores\n")
    r = run("filter", "modality:audio", jl, "-f", "tsv")  # header-less id<TAB>tags rows: nothing
    assert (r.exit_code, r.stdout) == (1, "")
    (tmp_path / "zero.csv").write_bytes(b"")  # no header to write
    r = run("label", tmp_path / "zero.csv")
    assert (r.exit_code, r.stdout) == (0, "")
