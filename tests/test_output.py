"""Output rendering: JSON Lines lines keep their input bytes; every format agrees with a
fresh serialisation of the same tagged record."""

import json

import pytest
from hypothesis import given, settings, strategies as st

from tagger.corpus import Record, parse_json_record
from tagger.model import Prediction
from tagger.writers import Renderer, Writer
from tagger.writers.jsonl import tagged_fields, tagged_json

PRED = Prediction(["modality:text", "method:transformer"], {"modality:text": 0.9812, "method:transformer": 0.5})


def lazy(line, n=1):
    return parse_json_record(Record(None, n, n, "x.jsonl", f"x:{n}", raw=line))


def test_input_line_is_kept_byte_for_byte():
    line = '{"id": "a", "abstract": "caf\\u00e9 \\"q\\"", "n": 1.50, "big": 1e400}'
    rec = lazy(line.replace("1e400", "1"))
    out = tagged_json(rec, PRED)
    assert out.startswith('{"id": "a", "abstract": "caf\\u00e9 \\"q\\"", "n": 1.50, "big": 1, "tags": ')
    assert json.loads(out) == tagged_fields(rec.fields, PRED)


def test_missing_id_is_added_and_empty_object_works():
    out = tagged_json(lazy("{}", 7), Prediction([], {}, "too short to judge: 0 words, fewer than 20"))
    assert json.loads(out) == {"id": "x:7", "tags": [], "scores": {}, "reason": "too short to judge: 0 words, fewer than 20"}
    assert out.startswith('{"id": "x:7", ')


def test_records_with_tool_fields_are_serialised_anew():
    rec = lazy('{"id": "a", "abstract": "t", "tags": ["old"], "reason": "stale"}')
    out = tagged_json(rec, PRED)
    assert json.loads(out) == {"id": "a", "abstract": "t", "tags": PRED.tags, "scores": PRED.scores}
    assert list(json.loads(out)) == ["id", "abstract", "tags", "scores"]


json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
                           | st.text(max_size=20), lambda inner: st.lists(inner, max_size=3)
                           | st.dictionaries(st.text(max_size=5), inner, max_size=3), max_leaves=8)


@settings(max_examples=300)
@given(st.dictionaries(st.text(max_size=8).filter(lambda k: k not in ("tags", "scores", "reason", "explanations")),
                       json_values, max_size=5),
       st.sampled_from([{}, {"indent": None, "separators": (",", ":")}, {"ensure_ascii": False}]),
       st.lists(st.sampled_from(["modality:text", "method:cnn", "evaluation:benchmark"]), unique=True),
       st.floats(0, 1))
def test_spliced_line_parses_to_the_reserialised_object(obj, dump_kw, tags, score):
    line = json.dumps(obj, **dump_kw)
    rec = lazy(line)
    pred = Prediction(tags, {t: round(score, 4) for t in tags})
    out = tagged_json(rec, pred)
    assert "\n" not in out
    assert json.loads(out) == tagged_fields(rec.fields, pred)
    assert list(json.loads(out)) == list(tagged_fields(rec.fields, pred))


@pytest.mark.parametrize("fmt", ["jsonl", "json", "pairs", "tsv", "text"])
def test_writer_renders_each_record_as_the_renderer_does(fmt):
    import io

    recs = [lazy('{"id": "a", "abstract": "x"}', 1), lazy('{"abstract": "y"}', 2)]
    one, batch = io.StringIO(), io.StringIO()
    w = Writer(one, fmt, facets=[("modality", "multi", []), ("method", "multi", [])])
    for r in recs:
        w.write(r, PRED)
    w.close()
    r = Renderer(fmt, facets=[("modality", "multi", []), ("method", "multi", [])])
    w2 = Writer(batch, fmt)
    w2.write_rendered((",\n" if fmt == "json" else "").join(r(x, PRED) for x in recs), 2)
    w2.close()
    assert one.getvalue() == batch.getvalue() and w.count == w2.count == 2
    if fmt == "json":
        assert [d["id"] for d in json.loads(one.getvalue())] == ["a", "x:2"]


@pytest.mark.parametrize("fmt", ["tsv", "pairs", "text"])
def test_an_id_starting_with_nul_is_just_an_id(fmt):
    rec = lazy('{"id": "\\u0000abc", "abstract": "x"}')
    out = Renderer(fmt, facets=[("modality", "multi", []), ("method", "multi", [])])(rec, PRED)
    assert out.startswith("\x00abc") and "abstract" not in out


@pytest.mark.parametrize("fmt, first", [("tsv", "a\\r\\nb\\tc\\\\d\t"), ("pairs", "a\\r\\nb\\tc\\\\d\t"),
                                        ("text", "a  b c\\d")])
def test_ids_with_line_breaks_stay_on_their_line(fmt, first):
    """TSV and pairs escape tabs, line breaks and backslashes (PostgreSQL's text format);
    text output, for people, shows them as spaces."""
    rec = lazy('{"id": "a\\r\\nb\\tc\\\\d", "abstract": "x"}')
    out = Renderer(fmt, facets=[("modality", "multi", [])])(rec, PRED)
    assert out.splitlines()[0].startswith(first)
    assert "\r" not in out and out.count("\n") == {"tsv": 1, "pairs": 2, "text": 3}[fmt]
