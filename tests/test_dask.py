"""tagger.dask and `tagger label --dask` on a LocalCluster of 2 worker processes (loopback):
the same tags as `tagger label` on the concatenated input, one model load per worker, small
tasks, one atomic output per partition, reruns that skip what is complete."""

import gzip
import json
import os
import pickle

import pytest
from click.testing import CliRunner

from tagger.cli import cli

from conftest import ROOT

dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")
pd = pytest.importorskip("pandas")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

import tagger.dask  # noqa: E402

MODEL = str(ROOT / "models")
N_PARTS, PER_PART = 4, 12


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=None, silence_logs=40) as cluster:
        with distributed.Client(cluster) as c:
            yield c


@pytest.fixture(scope="module")
def rows(corpus_records):
    rows = [{"id": r["id"], "title": r.get("title", ""), "abstract": r["abstract"], "year": r.get("year", 0)}
            for r in corpus_records[:N_PARTS * PER_PART * 5:5]]
    rows[4]["abstract"] = "Too short to tag."
    return rows


@pytest.fixture(scope="module")
def data(tmp_path_factory, rows):
    """The rows as 4 JSON Lines partitions (the last gzip'd), 4 Parquet partitions, and the
    concatenated input tagged by `tagger label`."""
    d = tmp_path_factory.mktemp("parts")
    (d / "jsonl").mkdir()
    (d / "parquet").mkdir()
    for k in range(N_PARTS):
        part = rows[k * PER_PART:(k + 1) * PER_PART]
        text = "".join(json.dumps(r) + "\n" for r in part)
        if k == N_PARTS - 1:
            (d / "jsonl" / f"part-{k}.jsonl.gz").write_bytes(gzip.compress(text.encode()))
        else:
            (d / "jsonl" / f"part-{k}.jsonl").write_text(text)
        pq.write_table(pa.Table.from_pylist(part), d / "parquet" / f"part-{k}.parquet")
    (d / "all.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    r = CliRunner().invoke(cli, ["label", str(d / "all.jsonl"), "-f", "jsonl", "--model", MODEL])
    assert r.exit_code == 0, r.output
    return d, r.output


def want(data):
    return {o["id"]: (o["tags"], o["scores"], o.get("reason")) for o in map(json.loads, data[1].splitlines())}


def got(df):
    return {i: (t, s, r) for i, t, s, r in zip(df["id"], df["tags"], df["scores"], df["reason"])}


def test_tag_dataframe_from_jsonl_and_parquet(client, data):
    d, _ = data
    expected = want(data)
    assert sum(bool(v[0]) for v in expected.values()) >= 40  # most are tagged
    ddf = dd.read_json(sorted(str(p) for p in (d / "jsonl").glob("*.jsonl*")), lines=True, blocksize=None)
    tagged = tagger.dask.tag(ddf, text="abstract", title="title", model=MODEL)
    assert list(tagged.columns) == ["id", "title", "abstract", "year", "tags", "scores", "reason"]
    out = tagged.compute()
    assert len(out) == len(expected) and got(out) == expected
    pout = tagger.dask.tag(dd.read_parquet(str(d / "parquet")), model=MODEL).compute()
    assert got(pout) == expected
    loads = client.run(tagger.dask.loads)
    assert len(loads) == 2 and all(n <= 1 for n in loads.values()) and sum(loads.values()) >= 1, loads


def test_nan_text_is_no_abstract(client, rows):
    df = pd.DataFrame(rows[:6])
    df.loc[1, "abstract"] = None
    df.loc[2, "abstract"] = float("nan")
    out = tagger.dask.tag(dd.from_pandas(df, npartitions=2)).compute()  # each worker's packaged model
    assert list(out["reason"][1:3]) == ["no abstract", "no abstract"] and list(out["tags"][1:3]) == [[], []]
    assert out["tags"][0] and out["reason"][0] is None


def test_tag_bag(client, data):
    import dask.bag as db

    d, _ = data
    bag = db.read_text(sorted(str(p) for p in (d / "jsonl").glob("*.jsonl*"))).map(json.loads)
    out = tagger.dask.tag_bag(bag, model=MODEL).compute()
    assert {r["id"]: (r["tags"], r["scores"], r["reason"]) for r in out} == want(data)
    assert all(n <= 1 for n in client.run(tagger.dask.loads).values())


def test_task_pickle_is_small(data):
    d, _ = data
    tagged = tagger.dask.tag(dd.read_parquet(str(d / "parquet")), model=MODEL)
    graph = dict(tagged.__dask_graph__())
    ours = [v for k, v in graph.items() if "tag_frame_partition" in str(k) or "tag_frame_partition" in repr(v)]
    assert len(ours) == N_PARTS
    model_bytes = sum(f.stat().st_size for f in (ROOT / "models").rglob("*") if f.is_file())
    import cloudpickle

    sizes = [len(cloudpickle.dumps(v)) for v in ours]
    assert max(sizes) < 8_000 < model_bytes / 100, sizes


def test_bad_column_and_facet_fail_at_once(rows):
    ddf = dd.from_pandas(pd.DataFrame(rows[:4]), npartitions=1)
    with pytest.raises(tagger.TaggerError, match="no column 'summary'"):
        tagger.dask.tag(ddf, text="summary", model=MODEL)
    with pytest.raises(tagger.TaggerError, match="unknown facet 'colour'"):
        tagger.dask.tag(ddf, facets=["colour"], model=MODEL)


def run_cli(*args):
    return CliRunner().invoke(cli, ["label", *map(str, args), "--model", MODEL])


def read_out(path):
    data = path.read_bytes()
    return (gzip.decompress(data) if path.name.endswith(".gz") else data).decode()


def test_cli_dask_jsonl_partitions(client, data, tmp_path):
    d, whole = data
    out = tmp_path / "out"
    r = run_cli("--dask", client.scheduler.address, str(d / "jsonl" / "part-*"), "-o", f"{out}/")
    assert r.exit_code == 0, r.output
    names = sorted(os.listdir(out))
    assert names == ["part-0.jsonl", "part-1.jsonl", "part-2.jsonl", "part-3.jsonl.gz"]
    assert "".join(read_out(out / n) for n in names) == whole  # byte for byte `tagger label`'s output
    assert "4 partitions tagged (48 records)" in r.output
    # a rerun skips the complete partitions and redoes one cut short (no output, a leftover)
    before = {n: (out / n).stat().st_mtime_ns for n in names}
    (out / "part-1.jsonl").unlink()
    (out / ".part-1.jsonl.abc123.tmp").write_text('{"id": "half')
    r = run_cli("--dask", client.scheduler.address, str(d / "jsonl" / "part-*"), "-o", str(out))
    assert r.exit_code == 0, r.output
    assert "3 partitions already complete, skipped" in r.output and "1 partition tagged (12 records)" in r.output
    assert sorted(os.listdir(out)) == names
    assert all((out / n).stat().st_mtime_ns == before[n] for n in names if n != "part-1.jsonl")
    assert "".join(read_out(out / n) for n in names) == whole


def test_cli_dask_bad_partition_is_not_written(client, data, tmp_path):
    d, whole = data
    src = tmp_path / "in"
    src.mkdir()
    parts = sorted((d / "jsonl").glob("part-[012].jsonl"))
    for p in parts:
        (src / p.name).write_bytes(p.read_bytes())
    lines = (src / "part-1.jsonl").read_text().splitlines(keepends=True)
    (src / "part-1.jsonl").write_text("".join(lines[:5]) + "{not json\n" + "".join(lines[5:]))
    out = tmp_path / "out"
    r = run_cli("--dask", client.scheduler.address, str(src / "*.jsonl"), "-o", str(out))
    assert r.exit_code == 2
    assert "part-1.jsonl:6:" in r.output and "(part-1.jsonl not written)" in r.output
    assert sorted(os.listdir(out)) == ["part-0.jsonl", "part-2.jsonl"]  # no half file, no temporary
    (src / "part-1.jsonl").write_text("".join(lines))
    r = run_cli("--dask", client.scheduler.address, str(src / "*.jsonl"), "-o", str(out))
    assert r.exit_code == 0 and "2 partitions already complete" in r.output
    assert "".join(read_out(out / f"part-{k}.jsonl") for k in range(3)) == "".join(
        whole.splitlines(keepends=True)[:3 * PER_PART])


def test_cli_dask_usage_errors(data, tmp_path):
    d, _ = data
    glob = str(d / "jsonl" / "*.jsonl")
    for args, msg in [((glob,), "needs -o OUTPUT_DIR/"),
                      ((glob, "-o", str(tmp_path), "-f", "csv"), "leave out --format"),
                      ((glob, "-o", str(tmp_path), "--jobs", "2"), "leave out --jobs"),
                      ((str(d / "none-*.jsonl"), "-o", str(tmp_path)), "no file matches")]:
        r = run_cli("--dask", "tcp://127.0.0.1:1", *args)
        assert r.exit_code == 2 and msg in r.output, r.output
    (tmp_path / "f").write_text("x")
    r = run_cli("--dask", "tcp://127.0.0.1:1", glob, "-o", str(tmp_path / "f"))
    assert r.exit_code == 2 and "not a directory" in r.output
    (tmp_path / "a.csv").write_text("abstract\nx\n")
    r = run_cli("--dask", "tcp://127.0.0.1:1", str(tmp_path / "a.csv"), "-o", str(tmp_path / "o2"))
    assert r.exit_code == 2 and "not this kind of file" in r.output


def test_cli_dask_parquet_partitions(client, data, tmp_path):
    d, whole = data
    out = tmp_path / "out"
    r = run_cli("--dask", client.scheduler.address, str(d / "parquet" / "*.parquet"), "-o", f"{out}/")
    assert r.exit_code == 0, r.output
    names = sorted(os.listdir(out))
    assert names == [f"part-{k}.parquet" for k in range(N_PARTS)]
    table = pa.concat_tables([pq.read_table(out / n) for n in names])
    assert table.schema.names == ["id", "title", "abstract", "year", "tags", "scores", "reason"]
    scores = table.schema.field("scores").type
    assert pa.types.is_map(scores) and scores.key_type == pa.string() and scores.item_type == pa.float64()
    assert table.schema.field("tags").type == pa.list_(pa.string()) and table.schema.field("reason").nullable
    rows = table.to_pylist()
    expected = [json.loads(line) for line in whole.splitlines()]
    assert [(r["id"], r["tags"], dict(r["scores"]), r["reason"]) for r in rows] == [
        (e["id"], e["tags"], e["scores"], e.get("reason")) for e in expected]
    r = run_cli("--dask", client.scheduler.address, str(d / "parquet" / "*.parquet"), "-o", f"{out}/")
    assert r.exit_code == 0 and "4 partitions already complete, skipped" in r.output


def test_outputs_mirror_the_input_tree(tmp_path):
    from tagger.pipeline.partitions import plan

    for day in ("d=1", "d=2"):
        (tmp_path / "works" / day).mkdir(parents=True)
        (tmp_path / "works" / day / "part_000.gz").write_bytes(gzip.compress(b"{}\n"))
    got = plan([str(tmp_path / "works" / "*" / "part_*.gz")], str(tmp_path / "out"))
    assert got == [(str(tmp_path / "works" / d / "part_000.gz"), str(tmp_path / "out" / d / "part_000.gz"))
                   for d in ("d=1", "d=2")]
    got = plan([str(tmp_path / "works" / "d=1" / "part_000.gz")], str(tmp_path / "out"))
    assert got == [(str(tmp_path / "works" / "d=1" / "part_000.gz"), str(tmp_path / "out" / "part_000.gz"))]


def test_cli_dask_openalex_tree(client, rows, tmp_path):
    # OpenAlex's layout: updated_date=*/part_NNN.gz of works whose abstract is an inverted index
    def work(r):
        index = {}
        for pos, word in enumerate(r["abstract"].split()):
            index.setdefault(word, []).append(pos)
        return {"id": r["id"], "title": r["title"], "abstract_inverted_index": index}

    works = tmp_path / "works"
    texts = []
    for k, day in enumerate(("updated_date=2024-01-01", "updated_date=2024-01-02")):
        (works / day).mkdir(parents=True)
        part = [work(r) for r in rows[k * 6:(k + 1) * 6]]
        texts.append("".join(json.dumps(w) + "\n" for w in part))
        (works / day / "part_000.gz").write_bytes(gzip.compress(texts[-1].encode()))
    (tmp_path / "all.jsonl").write_text("".join(texts))
    whole = run_cli(tmp_path / "all.jsonl", "-f", "jsonl")
    assert whole.exit_code == 0, whole.output
    assert sum(bool(json.loads(line)["tags"]) for line in whole.output.splitlines()) >= 8
    r = run_cli("--dask", client.scheduler.address, str(works / "*" / "part_*.gz"), "-o", tmp_path / "tagged")
    assert r.exit_code == 0, r.output
    outs = [tmp_path / "tagged" / day / "part_000.gz" for day in ("updated_date=2024-01-01", "updated_date=2024-01-02")]
    assert "".join(read_out(p) for p in outs) == whole.output


def test_worker_with_another_model_fails():
    spec = tagger.dask.make_spec(MODEL)
    assert spec.model_id == tagger.dask.manifest_id(MODEL) and len(spec.model_id) == 64
    assert tagger.dask.worker_tagger(spec).model.path == ROOT / "models"
    other = tagger.dask.TagSpec(MODEL, None, "0" * 64)
    with pytest.raises(tagger.TaggerError, match="is not the client's"):
        tagger.dask.worker_tagger(other)
    assert len(pickle.dumps(spec)) < 1000
