"""The Python API (tagger.load, Tagger.tag / tag_records / tag_frame): the same tags as
`tagger label`, the null rule, thresholds by label, laziness and a cheap `import tagger`."""

import itertools
import json
import subprocess
import sys

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

import tagger
from tagger.cli import cli
from tagger.errors import TaggerError

from conftest import ROOT, write_jsonl

pd = pytest.importorskip("pandas")


@pytest.fixture(scope="module")
def t():
    return tagger.load(ROOT / "models")


@pytest.fixture(scope="module")
def records(corpus_records):
    # every 7th of the first 420 corpus records, with a few that abstain (short, not English)
    rows = [{"id": r["id"], "title": r.get("title", ""), "abstract": r["abstract"]} for r in corpus_records[:420:7]]
    rows[3]["abstract"] = "Too short to tag."
    rows[5]["abstract"] = ("Wir stellen ein neues Verfahren zur Segmentierung von Bildern vor, das auf tiefen "
                           "neuronalen Netzen beruht und in allen Versuchen besser abschneidet als die bisherigen "
                           "Verfahren der Literatur.")
    return rows


def cli_label(tmp_path, rows, *args):
    p = write_jsonl(tmp_path / "in.jsonl", rows)
    r = CliRunner().invoke(cli, ["label", str(p), "-f", "jsonl", "--model", str(ROOT / "models"), *args])
    assert r.exit_code == 0, r.output
    return [json.loads(line) for line in r.output.splitlines()]


def test_import_is_cheap():
    code = ("import sys, tagger; tagger.Tagger; tagger.load; "
            "heavy = {'numpy', 'pandas', 'sklearn', 'lightgbm', 'nltk', 'pyarrow', 'dask', 'scipy'} & set(sys.modules); "
            "print(sorted(heavy))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "[]"


def test_load_returns_a_tagger_and_names_a_bad_model(tmp_path):
    t = tagger.load(ROOT / "models")
    assert isinstance(t, tagger.Tagger)
    assert t.labels == t.model.labels and "modality:image" in t.labels
    assert [f for f, _, _ in t.facets][:2] == ["modality", "method"]
    with pytest.raises(TaggerError, match="not a tagger model directory"):
        tagger.load(tmp_path)


def test_same_tags_as_tagger_label(t, records, tmp_path):
    want = [(r["tags"], r["scores"], r.get("reason")) for r in cli_label(tmp_path, records)]
    assert sum(bool(w[0]) for w in want) >= 0.8 * len(records)  # mostly tagged: the test means something
    assert want[3][2].startswith("too short") and want[5][2].startswith("not English")
    got = t.tag([r["abstract"] for r in records], [r["title"] for r in records])
    assert [(p.tags, p.scores, p.reason) for p in got] == want
    got = list(t.tag_records(records))
    assert [(r["tags"], r["scores"], r["reason"]) for r in got] == want
    assert [r["id"] for r in got] == [r["id"] for r in records]
    got = t.tag_frame(pd.DataFrame(records))
    assert [(a, b, c) for a, b, c in zip(got["tags"], got["scores"], got["reason"])] == want


def test_one_threshold_as_tagger_label_threshold(t, records, tmp_path):
    want = [r["tags"] for r in cli_label(tmp_path, records, "--threshold", "0.1")]
    got = [p.tags for p in t.tag([r["abstract"] for r in records], [r["title"] for r in records], thresholds=0.1)]
    assert got == want
    assert got != [p.tags for p in t.tag([r["abstract"] for r in records], [r["title"] for r in records])]


def test_thresholds_by_label(t, records):
    texts, titles = [r["abstract"] for r in records], [r["title"] for r in records]
    base = t.tag(texts, titles)
    label = "modality:text"  # a binary label most of these records have
    assert sum(label in p.tags for p in base) >= 5
    never = t.tag(texts, titles, thresholds={label: 1.0})
    always = t.tag(texts, titles, thresholds={label: 0.0})
    for b, n, a in zip(base, never, always):
        assert n.tags == [x for x in b.tags if x != label]
        if b.reason is None:
            assert label in a.tags and [x for x in a.tags if x != label] == [x for x in b.tags if x != label]
        else:
            assert a.tags == []
    with pytest.raises(TaggerError, match="unknown label 'modality:nope'"):
        t.tag(texts, thresholds={"modality:nope": 0.5})
    with pytest.raises(TaggerError, match="from 0 to 1"):
        t.tag(texts, thresholds=1.5)
    with pytest.raises(TaggerError) as e:
        t.tag(texts, thresholds={"method:finetuning": 0.5})
    assert str(e.value).startswith("threshold for unknown label 'method:finetuning'; did you mean method:fine-tuning")


def test_tag_frame_names_what_it_takes(t):
    with pytest.raises(TypeError, match="^tag_frame takes a pandas DataFrame, not list; for dicts use tag_records"):
        t.tag_frame([{"abstract": "x"}])


def test_facets(t, records):
    got = t.tag([r["abstract"] for r in records], facets=["modality"])
    assert any(p.tags for p in got) and all(x.startswith("modality:") for p in got for x in p.tags)
    with pytest.raises(TaggerError, match="unknown facet 'colour'"):
        t.tag(["x"], facets=["colour"])


def test_null_text_is_no_abstract(t, records):
    text = records[0]["abstract"]
    got = t.tag([None, float("nan"), "   ", text])
    assert [p.reason for p in got[:3]] == ["no abstract"] * 3 and all(p.tags == [] for p in got[:3])
    assert got[3].tags and got[3].reason is None
    df = pd.DataFrame({"abstract": [text, None, float("nan")], "title": [float("nan"), "t", None]})
    df["abstract"] = df["abstract"].astype("string")  # pandas' NA
    out = t.tag_frame(df)
    assert list(out["reason"]) == [None, "no abstract", "no abstract"]
    assert out["tags"][0] == t.tag([text])[0].tags  # a NaN title is no title, not the word "nan"
    recs = list(t.tag_records([{"id": 1}, {"id": 2, "abstract": None}]))
    assert [r["reason"] for r in recs] == ["no abstract", "no abstract"] and recs[0]["id"] == 1


def test_bad_records_name_the_record(t, records):
    with pytest.raises(TaggerError, match=r"^record 2: 'abstract' must be a string, not int$"):
        list(t.tag_records([records[0], {"abstract": 5}]))
    with pytest.raises(TaggerError, match="record 2: a list, not a dict"):
        list(t.tag_records([records[0], [1]]))
    with pytest.raises(TaggerError, match="not one string"):
        t.tag("one text")
    with pytest.raises(TaggerError, match="2 texts but 1 titles"):
        t.tag(["a", "b"], ["t"])
    with pytest.raises(TaggerError, match=r"no column 'summary' in the frame \(its columns: 'abstract'\)"):
        t.tag_frame(pd.DataFrame({"abstract": ["x"]}), text="summary")


def test_tag_records_is_lazy(t, records):
    endless = itertools.cycle(records)  # never ends: the first results must come out all the same
    got = list(itertools.islice(t.tag_records(endless), 3))
    assert [r["id"] for r in got] == [r["id"] for r in records[:3]]


def test_tag_frame_keeps_frame(t, records):
    df = pd.DataFrame(records).set_index("id")
    df["year"] = 2020
    out = t.tag_frame(df, text="abstract", title="title")
    assert list(out.columns) == ["title", "abstract", "year", "tags", "scores", "reason"]
    assert list(out.index) == list(df.index) and "tags" not in df.columns  # a copy
    renamed = t.tag_frame(df.rename(columns={"abstract": "summary", "title": "name"}), text="summary", title="name")
    assert list(renamed["tags"]) == list(out["tags"])
    empty = t.tag_frame(df.iloc[:0])
    assert len(empty) == 0 and "tags" in empty.columns


@settings(max_examples=15, deadline=None)
@given(st.lists(st.integers(0, 26), min_size=1, max_size=30))
def test_tags_do_not_depend_on_the_batch(t, records, picks):
    # any selection and order of texts gets each text's own tags
    alone = {i: t.tag([records[i]["abstract"]], [records[i]["title"]])[0] for i in set(picks)}
    got = t.tag([records[i]["abstract"] for i in picks], [records[i]["title"] for i in picks])
    assert [(p.tags, p.scores, p.reason) for p in got] == [(alone[i].tags, alone[i].scores, alone[i].reason)
                                                          for i in picks]
