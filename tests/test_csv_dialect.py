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
