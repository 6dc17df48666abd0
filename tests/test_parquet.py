"""tagger.parquet: Parquet to Parquet by batches (every column kept, types and all), Parquet
rows as records, and records to Parquet with a schema fixed by the first batch."""

import datetime
import os
import decimal
import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tagger
from tagger.readers import parquet as rp
from tagger.writers import parquet as tp
from tagger.readers import Record
from tagger.errors import TaggerError
from tagger.model import Prediction

from conftest import ROOT

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")


@pytest.fixture(scope="module")
def t():
    return tagger.load(ROOT / "models")


@pytest.fixture(scope="module")
def rows(corpus_records):
    return [{"id": r["id"], "title": r.get("title", ""), "abstract": r["abstract"]} for r in corpus_records[:300:6]]


def test_tag_parquet_keeps_every_column(t, rows, tmp_path, monkeypatch):
    monkeypatch.setattr(rp, "BATCH_ROWS", 16)
    monkeypatch.setattr(tp, "ROW_GROUP_ROWS", 20)
    n = len(rows)
    abstracts = [r["abstract"] for r in rows]
    abstracts[2], abstracts[3] = None, float("nan")
    table = pa.table({
        "id": [r["id"] for r in rows],
        "abstract": pa.array(abstracts, from_pandas=True),  # NaN -> null, as pandas writes it
        "title": [r["title"] for r in rows],
        "when": pa.array([datetime.datetime(2020, 1, 1 + i % 28) for i in range(n)], pa.timestamp("ms")),
        "price": pa.array([decimal.Decimal("1.25")] * n, pa.decimal128(5, 2)),
        "authors": [[{"name": "A", "orcid": None}]] * n,
        "tags": [["old"]] * n,  # replaced
    })
    pq.write_table(table, tmp_path / "in.parquet", row_group_size=25)
    buf = io.BytesIO()
    assert tp.tag_parquet(t, str(tmp_path / "in.parquet"), buf) == n
    out = pq.read_table(io.BytesIO(buf.getvalue()))
    f = pq.ParquetFile(io.BytesIO(buf.getvalue()))
    assert f.metadata.num_row_groups == 3  # 20-row groups of 16-row batches: 32, 32, 2 rows
    assert out.schema.names == ["id", "abstract", "title", "when", "price", "authors", "tags", "scores", "reason"]
    for name in ("id", "abstract", "title", "when", "price", "authors"):
        assert out.schema.field(name).type == table.schema.field(name).type
        assert out.column(name).equals(table.column(name))
    texts = [a if isinstance(a, str) else None for a in abstracts]
    want = t.tag(texts, [r["title"] for r in rows])
    got = out.select(["tags", "scores", "reason"]).to_pylist()
    assert [(g["tags"], dict(g["scores"]), g["reason"]) for g in got] == [(p.tags, p.scores, p.reason) for p in want]
    assert got[2]["reason"] == got[3]["reason"] == "no abstract" and got[2]["tags"] == []
    assert sum(bool(g["tags"]) for g in got) >= n - 5


def test_tag_parquet_errors(t, tmp_path):
    pq.write_table(pa.table({"summary": ["x"]}), tmp_path / "a.parquet")
    with pytest.raises(TaggerError, match=r"a.parquet: no column 'abstract' \(its columns: 'summary'\)"):
        tp.tag_parquet(t, str(tmp_path / "a.parquet"), io.BytesIO())
    (tmp_path / "b.parquet").write_text("not parquet")
    with pytest.raises(TaggerError, match="b.parquet: not a Parquet file"):
        tp.tag_parquet(t, str(tmp_path / "b.parquet"), io.BytesIO())
    with pytest.raises(TaggerError, match="c.parquet: no such file"):
        tp.tag_parquet(t, str(tmp_path / "c.parquet"), io.BytesIO())
    pq.write_table(pa.table({"abstract": [1, 2]}), tmp_path / "e.parquet")
    with pytest.raises(TaggerError, match=r"e.parquet:1: record 1: 'abstract' must be a string, not int"):
        tp.tag_parquet(t, str(tmp_path / "e.parquet"), io.BytesIO())


def test_reader_gives_json_values(tmp_path):
    pq.write_table(pa.table({
        "id": ["a", "b"], "abstract": ["x", None],
        "day": pa.array([datetime.date(2024, 5, 1), None], pa.date32()),
        "cost": pa.array([decimal.Decimal("3.10"), None], pa.decimal128(4, 2)),
        "blob": [b"\x00\x01", None],
        "m": pa.array([[("k", 1.5)], None], pa.map_(pa.string(), pa.float64())),
        "nested": [{"x": [1, 2]}, None]}), tmp_path / "w.parquet")
    recs = list(rp.reader(str(tmp_path / "w.parquet")))
    assert [(r.n, r.line, r.default_id) for r in recs] == [(1, 1, "w:1"), (2, 2, "w:2")]
    assert recs[0].fields == {"id": "a", "abstract": "x", "day": "2024-05-01", "cost": "3.10", "blob": "AAE=",
                              "m": {"k": 1.5}, "nested": {"x": [1, 2]}}
    assert recs[1].fields == {"id": "b", "abstract": None, "day": None, "cost": None, "blob": None, "m": None,
                              "nested": None}


def rec(fields, n):
    return Record(fields, n, n, "in.jsonl", f"in:{n}")


def test_record_writer_schema_fixed_by_first_batch():
    buf = io.BytesIO()
    w = tp.RecordWriter(buf, rows_per_group=2)
    w.write(rec({"id": "a", "year": 2020, "tags": ["x"]}, 1), Prediction(["m:a"], {"m:a": 0.9}))
    w.write(rec({"id": "b", "year": None}, 2), Prediction([], {}, "no abstract"))
    w.write(rec({"id": "c"}, 3), Prediction(["m:b"], {"m:b": 0.5}))
    w.close()
    out = pq.read_table(io.BytesIO(buf.getvalue()))
    assert out.schema.names == ["id", "year", "tags", "scores", "reason"]
    assert out.schema.field("year").type == pa.int64()
    assert [(r["id"], r["year"], r["tags"], r["scores"], r["reason"]) for r in out.to_pylist()] == [
        ("a", 2020, ["m:a"], [("m:a", 0.9)], None), ("b", None, [], [], "no abstract"),
        ("c", None, ["m:b"], [("m:b", 0.5)], None)]
    w = tp.RecordWriter(io.BytesIO(), rows_per_group=2)
    for i in range(2):
        w.write(rec({"id": str(i)}, i + 1), Prediction([], {}))
    with pytest.raises(TaggerError, match=r"in.jsonl:3: field 'doi' is not in the Parquet schema, which the first 2 "
                                          r"records fixed \(id, tags, scores, reason\)"):
        w.write(rec({"id": "x", "doi": "10.1/x"}, 3), Prediction([], {}))
        w.write(rec({"id": "y"}, 4), Prediction([], {}))
    w = tp.RecordWriter(io.BytesIO(), rows_per_group=1)
    w.write(rec({"year": 2020}, 1), Prediction([], {}))
    with pytest.raises(TaggerError, match=r"in.jsonl:2: field 'year' holds '2020a', which does not fit its Parquet "
                                          r"type int64"):
        w.write(rec({"year": "2020a"}, 2), Prediction([], {}))


def test_record_writer_no_records():
    buf = io.BytesIO()
    w = tp.RecordWriter(buf)
    w.close()
    out = pq.read_table(io.BytesIO(buf.getvalue()))
    assert out.num_rows == 0 and out.schema.names == ["tags", "scores", "reason"]


values = st.one_of(st.none(), st.integers(-2**40, 2**40))
texts = st.one_of(st.none(), st.text(max_size=20))


@settings(max_examples=40, deadline=None)
@given(st.tuples(st.text(max_size=20), st.integers(-2**40, 2**40)), st.lists(st.tuples(texts, values), max_size=30),
       st.integers(1, 7))
def test_record_writer_round_trip(first, rest, per_group):
    pairs = [first] + rest  # the first record's values fix the columns' types
    buf = io.BytesIO()
    w = tp.RecordWriter(buf, rows_per_group=per_group)
    preds = []
    for i, (s, v) in enumerate(pairs):
        p = Prediction([f"f:{i}"], {f"f:{i}": i / 100}) if i % 2 else Prediction([], {}, "no abstract")
        preds.append(p)
        w.write(rec({"s": s, "v": v}, i + 1), p)
    w.close()
    got = pq.read_table(io.BytesIO(buf.getvalue())).to_pylist()
    assert [(g["s"], g["v"], g["tags"], dict(g["scores"]), g["reason"]) for g in got] == [
        (s, v, p.tags, p.scores, p.reason) for (s, v), p in zip(pairs, preds)]


# --- the command line ---------------------------------------------------------------------

def cli(*args):
    from click.testing import CliRunner

    from tagger.cli import cli as app

    return CliRunner().invoke(app, [*map(str, args), "--model", str(ROOT / "models")])


@pytest.fixture()
def files(rows, tmp_path):
    import json

    rs = [dict(r, year=2000 + i) for i, r in enumerate(rows)]
    rs[1]["abstract"] = None
    (tmp_path / "w.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rs))
    pq.write_table(pa.Table.from_pylist(rs), tmp_path / "w.parquet")
    r = cli("label", tmp_path / "w.jsonl", "-f", "jsonl")
    assert r.exit_code == 0, r.output
    return tmp_path, [json.loads(line) for line in r.output.splitlines()]


def tagged(rows):
    return [(r["id"], r["tags"], dict(r["scores"]), r.get("reason")) for r in rows]


def test_label_parquet_to_parquet(files):
    d, want = files
    r = cli("label", d / "w.parquet", "-o", d / "t.parquet")
    assert r.exit_code == 0, r.output
    out = pq.read_table(d / "t.parquet")
    assert out.schema.names == ["id", "title", "abstract", "year", "tags", "scores", "reason"]
    assert out.schema.field("year").type == pa.int64()
    assert tagged(out.to_pylist()) == tagged(want)
    assert want[1]["reason"] == "no abstract" and sum(bool(w["tags"]) for w in want) >= len(want) - 5
    assert sorted(os.listdir(d)) == ["t.parquet", "w.jsonl", "w.parquet"]  # no temporary file left


def test_label_between_formats(files):
    import csv
    import json

    d, want = files
    assert cli("label", d / "w.jsonl", "-o", d / "a.parquet").exit_code == 0
    assert tagged(pq.read_table(d / "a.parquet").to_pylist()) == tagged(want)
    r = cli("label", d / "w.parquet", "-o", d / "b.jsonl")
    assert r.exit_code == 0, r.output
    back = [json.loads(line) for line in (d / "b.jsonl").read_text().splitlines()]
    assert tagged(back) == tagged(want) and back[0]["year"] == 2000
    assert cli("label", d / "w.parquet", "-o", d / "c.csv").exit_code == 0
    rows = list(csv.DictReader(open(d / "c.csv")))
    assert [(r["id"], r["tags"]) for r in rows] == [(w["id"], ";".join(w["tags"])) for w in want]
    with open(d / "in.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["id", "title", "abstract"])
        w.writerows([r["id"], r["title"], r["abstract"] or ""] for r in want)
    assert cli("label", d / "in.csv", "-o", d / "d.parquet").exit_code == 0
    out = pq.read_table(d / "d.parquet")
    assert out.schema.names == ["id", "title", "abstract", "tags", "scores", "reason"]
    assert tagged(out.to_pylist()) == tagged(want)


def test_later_new_field_is_an_error(files, monkeypatch):
    import json

    d, _ = files
    monkeypatch.setattr(tp, "ROW_GROUP_ROWS", 10)
    lines = (d / "w.jsonl").read_text().splitlines(keepends=True)
    extra = json.loads(lines[14])
    extra["doi"] = "10.1/x"
    lines[14] = json.dumps(extra) + "\n"
    (d / "x.jsonl").write_text("".join(lines))
    (d / "x.parquet").write_text("old")
    r = cli("label", d / "x.jsonl", "-o", d / "x.parquet")
    assert r.exit_code == 2
    assert "x.jsonl:15: field 'doi' is not in the Parquet schema, which the first 10 records fixed" in r.output
    assert (d / "x.parquet").read_text() == "old"  # left as it was


def test_filter_parquet(files):
    d, want = files
    r = cli("filter", "modality:text", d / "w.parquet", "-o", d / "f.parquet")
    assert r.exit_code == 0, r.output
    kept = pq.read_table(d / "f.parquet")
    assert kept.schema.names[-3:] == ["tags", "scores", "reason"]
    assert tagged(kept.to_pylist()) == tagged([w for w in want if "modality:text" in w["tags"]])
    assert 0 < kept.num_rows < len(want)
    # a tagged Parquet file's tags are trusted; -v keeps the others
    assert cli("label", d / "w.parquet", "-o", d / "t.parquet").exit_code == 0
    r = cli("filter", "-v", "modality:text", d / "t.parquet", "-o", d / "g.parquet")
    assert r.exit_code == 0, r.output
    assert [t[:3] for t in tagged(pq.read_table(d / "g.parquet").to_pylist())] == [  # (reason: as for JSON Lines)
        t[:3] for t in tagged([w for w in want if "modality:text" not in w["tags"]])]
    r = cli("filter", "-c", "modality:text", d / "w.parquet")
    assert r.output.strip() == str(kept.num_rows)


def test_parquet_input_errors(files):
    d, _ = files
    pq.write_table(pa.table({"id": ["a"], "abstract": ["x"], "doi": ["d"]}), d / "other.parquet")
    r = cli("label", d / "w.parquet", d / "other.parquet", "-o", d / "o.parquet")
    assert r.exit_code == 2 and "other.parquet: has no column 'title'" in r.output
    r = cli("label", d / "w.parquet", "-o", d / "o.parquet.gz")
    assert r.exit_code == 2 and "Parquet is compressed within" in r.output
    r = cli("label", d / "w.jsonl", "-o", d / "o.parquet.gz")  # from another format too
    assert r.exit_code == 2 and r.output == (f"tagger: error: {d / 'o.parquet.gz'}: Parquet is compressed within; "
                                             f"name the output {d / 'o.parquet'}\n")
    assert not (d / "o.parquet.gz").exists()
    r = cli("label", d / "w.parquet", "-o", d / "o.parquet", "--explain")
    assert r.exit_code == 2 and "not written to Parquet" in r.output
    r = cli("label", "-", "--input-format", "parquet", "-f", "jsonl")
    assert r.exit_code == 2 and "not read from standard input" in r.output
    assert not (d / "o.parquet").exists()


def test_openalex_inverted_index_in_parquet(files, tmp_path):
    """Works with ``abstract_inverted_index`` instead of text: rebuilt for Parquet output and for
    the other formats, as a map column, a struct column (one field per word, nulls elsewhere),
    or JSON text, with the same tags as the plain text."""
    import json

    d, want = files
    plain = [r for r in want if r.get("reason") is None][:4]
    src = [json.loads(x) for x in (d / "w.jsonl").read_text().splitlines()]
    texts = {r["id"]: r["abstract"] for r in src}

    def index(text):
        out = {}
        for i, w in enumerate(text.split()):
            out.setdefault(w, []).append(i)
        return out

    ids = [r["id"] for r in plain]
    ix = [index(texts[i]) for i in ids]
    map_type = pa.map_(pa.string(), pa.list_(pa.int64()))
    tables = {
        "map": pa.table({"id": ids, "abstract_inverted_index": pa.array([list(x.items()) for x in ix], map_type)}),
        "struct": pa.Table.from_pylist([{"id": i, "abstract_inverted_index": x} for i, x in zip(ids, ix)]),
        "json": pa.table({"id": ids, "abstract_inverted_index": [json.dumps(x) for x in ix]}),
    }
    from tagger.cli import cli as app
    from click.testing import CliRunner

    # the same texts as plain abstracts, split and joined by spaces as the index has them
    base = CliRunner().invoke(app, ["label", "-", "-f", "jsonl", "--model", str(ROOT / "models")],
                              input="".join(json.dumps({"id": i, "abstract": " ".join(texts[i].split())}) + "\n"
                                            for i in ids))
    expect = [(r["id"], r["tags"]) for r in map(json.loads, base.output.splitlines())]
    assert len(expect) == 4 and all(tags for _, tags in expect)
    for kind, table in tables.items():
        pq.write_table(table, tmp_path / f"{kind}.parquet")
        r = cli("label", tmp_path / f"{kind}.parquet", "-o", tmp_path / f"{kind}-out.parquet")
        assert r.exit_code == 0, (kind, r.output)
        got = pq.read_table(tmp_path / f"{kind}-out.parquet").to_pylist()
        assert [(x["id"], x["tags"]) for x in got] == expect, kind
        r = cli("label", tmp_path / f"{kind}.parquet", "-f", "jsonl")
        assert r.exit_code == 0, (kind, r.output)
        assert [(x["id"], x["tags"]) for x in map(json.loads, r.output.splitlines())] == expect, kind


def test_nan_doubles_are_null_in_json_and_empty_in_csv(tmp_path):
    """A Parquet double NaN (pyarrow keeps it a value, not a null) is written as JSON's null,
    never as the NaN no JSON parser but Python's reads; infinities too."""
    import json

    src = tmp_path / "n.parquet"
    pq.write_table(pa.table({"id": ["a", "b"], "abstract": ["x", "y"], "citations": [float("nan"), float("inf")],
                             "extra": pa.array([{"w": float("nan")}, {"w": 1.5}])}), src)
    r = cli("label", src, "-f", "jsonl")
    assert r.exit_code == 0, r.output
    rows = [json.loads(x, parse_constant=lambda c: pytest.fail(f"{c} in JSON output")) for x in r.output.splitlines()]
    assert [(x["citations"], x["extra"]) for x in rows] == [(None, {"w": None}), (None, {"w": 1.5})]
    r = cli("label", src, "-f", "json")
    assert [x["citations"] for x in json.loads(r.output, parse_constant=lambda c: pytest.fail(c))] == [None, None]
