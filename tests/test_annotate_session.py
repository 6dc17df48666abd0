"""The annotation session without a screen: saving, back, skip, undo, resume, the corpus file."""

import json
import os

import pytest
from click.testing import CliRunner
from hypothesis import given, settings, strategies as st

from tagger.annotate.session import LABEL_KEYS, Session, label_keys
from tagger.annotate.store import CorpusStore
from tagger.cli import cli
from tagger.corpus import InputError, check_corpus
from tagger.errors import TaggerError
from tagger.taxonomy import load_taxonomy, parse_taxonomy

from conftest import ROOT

ROBOTICS = ROOT / "examples" / "robotics" / "taxonomy.yaml"
CLOCK = "2026-12-01T10:00:00Z"


@pytest.fixture(scope="module")
def tax():
    return load_taxonomy(ROBOTICS)


def pool(n):
    return [{"id": f"r{i}", "title": f"Title {i}", "abstract": f"Abstract number {i} about robots.",
             "source": "pool.jsonl", "year": 2000 + i} for i in range(1, n + 1)]


def session(tax, path, rows, **kw):
    return Session(tax, CorpusStore(str(path)), rows, "me", kw.pop("sample", "as-is"), clock=lambda: CLOCK, **kw)


def file_rows(path):
    return [json.loads(line) for line in open(path, encoding="utf-8")]


def test_label_keys(tax):
    keys = label_keys(tax)
    assert list(keys)[:3] == ["1", "2", "3"] and keys["1"] == "platform:arm" and keys["9"] == "task:mapping" and keys["a"] == "approach:learning"
    assert len(keys) == 14
    big = "facets:\n  - id: f\n    labels:\n" + "".join(f"      - id: f:l{i}\n" for i in range(len(LABEL_KEYS) + 1))
    with pytest.raises(TaggerError, match="63 labels, but one screen has keys for 62"):
        label_keys(parse_taxonomy(big, "big.yaml"))


def test_done_appends_with_corpus_fields_and_check_accepts(tax, tmp_path):
    out = tmp_path / "c.jsonl"
    s = session(tax, out, pool(3), licence="CC0-1.0")
    s.toggle("task:navigation")
    s.toggle("platform:wheeled")
    s.done()
    assert file_rows(out) == [{"id": "r1", "title": "Title 1", "abstract": "Abstract number 1 about robots.",
                               "labels": ["platform:wheeled", "task:navigation"], "annotator": "me",
                               "source": "pool.jsonl", "sample": "as-is", "year": 2001, "licence": "CC0-1.0",
                               "tagged_at": CLOCK}]
    assert s.current["id"] == "r2" and s.labels == [] and s.position() == (2, 3)
    assert check_corpus(str(out), tax) == []


def test_exclusive_facet_is_a_radio_button(tax, tmp_path):
    s = session(tax, tmp_path / "c.jsonl", pool(1))
    s.toggle("platform:arm")
    s.toggle("task:manipulation")
    s.toggle("platform:legged")
    assert s.labels == ["platform:legged", "task:manipulation"]
    s.toggle("platform:legged")
    assert s.labels == ["task:manipulation"]
    s.toggle("task:mapping")
    assert s.labels == ["task:manipulation", "task:mapping"]  # multi: both
    s.undo()
    s.undo()
    assert s.labels == ["platform:legged", "task:manipulation"]


def test_back_edit_rewrites_and_undo_reverts(tax, tmp_path):
    out = tmp_path / "c.jsonl"
    s = session(tax, out, pool(3))
    for label in ("task:navigation", "task:manipulation"):
        s.toggle(label)
        s.done()
    inode = os.stat(out).st_ino
    s.back()
    assert s.current["id"] == "r2" and s.labels == ["task:manipulation"]
    s.back()
    assert s.current["id"] == "r1"
    s.back()
    assert s.message == "this is the first record"
    s.toggle("approach:planning")
    s.done()  # saves the change, goes forward to r2
    assert s.current["id"] == "r2" and os.stat(out).st_ino != inode  # rewritten by rename
    assert [r["labels"] for r in file_rows(out)] == [["task:navigation", "approach:planning"], ["task:manipulation"]]
    s.done()  # r2 unchanged: nothing written; back at the queue's front
    assert s.current["id"] == "r3" and s.back_pos is None
    s.undo()  # the edit of r1
    assert s.current["id"] == "r1" and [r["labels"] for r in file_rows(out)] == [["task:navigation"], ["task:manipulation"]]
    s.undo()  # the save of r2: out of the file, on screen again with its labels
    assert [r["id"] for r in file_rows(out)] == ["r1"]
    assert s.current["id"] == "r2" and s.labels == ["task:manipulation"] and s.back_pos is None
    s.done()
    assert [r["id"] for r in file_rows(out)] == ["r1", "r2"] and s.added == 2


def test_skip_comes_back_at_the_end(tax, tmp_path):
    out = tmp_path / "c.jsonl"
    s = session(tax, out, pool(3))
    s.skip()
    assert s.current["id"] == "r2"
    s.done()
    s.done()
    assert s.current["id"] == "r1"
    s.done()
    assert s.finished and [r["id"] for r in file_rows(out)] == ["r2", "r3", "r1"]
    s.reorder({"r1": 1.0})  # nothing left: no error
    s.back()
    assert s.current["id"] == "r1"


def test_reorder_keeps_screen_and_skipped(tax, tmp_path):
    s = session(tax, tmp_path / "c.jsonl", pool(5))
    s.skip()  # r1 skipped
    s.reorder({"r1": 0.9, "r2": 0.1, "r3": 0.2, "r4": 0.8})
    assert [r["id"] for r in s.pending] == ["r2", "r4", "r3", "r5", "r1"]


def test_resume_by_id_and_by_text(tax, tmp_path):
    out = tmp_path / "c.jsonl"
    s = session(tax, out, pool(3))
    s.done()
    s.done()
    moved = pool(3)
    moved[1]["id"] = "renamed"  # same text, another id
    s2 = session(tax, out, moved)
    assert [r["id"] for r in s2.pending] == ["r3"] and s2.position() == (3, 3)
    s2.back()
    assert s2.current["id"] == "r2"  # earlier runs' records can be edited


def test_suggest_marks_rows(tax, tmp_path):
    out = tmp_path / "c.jsonl"
    s = session(tax, out, pool(2), suggest=lambda row: ["task:mapping", "platform:aerial"] if row["id"] == "r1" else None)
    assert s.labels == ["platform:aerial", "task:mapping"] and s.suggested
    s.done()
    assert not s.suggested
    s.done()
    rows = file_rows(out)
    assert rows[0]["suggested"] is True and "suggested" not in rows[1]


def test_store_refuses_what_is_not_a_regular_file(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="not a regular file"):
        CorpusStore(str(fifo))
    with pytest.raises(InputError, match="no such directory"):
        CorpusStore(str(tmp_path / "no" / "c.jsonl"))
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x"}\n[1]\n')
    with pytest.raises(InputError, match=f"{bad}:2: expected a JSON object"):
        CorpusStore(str(bad))


def test_store_follows_a_link_and_keeps_it(tax, tmp_path):
    real = tmp_path / "real.jsonl"
    link = tmp_path / "link.jsonl"
    link.symlink_to(real)
    s = session(tax, link, pool(2))
    s.done()
    s.done()
    s.back()
    s.toggle("task:locomotion")
    s.done()
    assert link.is_symlink() and [r["labels"] for r in file_rows(real)] == [[], ["task:locomotion"]]


def test_append_after_a_last_line_without_newline(tax, tmp_path):
    out = tmp_path / "c.jsonl"
    out.write_text('{"id": "old", "abstract": "Old text.", "labels": [], "annotator": "x"}')
    s = session(tax, out, pool(1))
    s.done()
    assert [r["id"] for r in file_rows(out)] == ["old", "r1"]


actions = st.lists(st.sampled_from(["done", "skip", "back", "undo", "t1", "t2", "t6", "tb"]), max_size=40)


@settings(max_examples=60, deadline=None)
@given(actions)
def test_any_sequence_keeps_the_file_in_step(tmp_path_factory, tax, seq):
    out = tmp_path_factory.mktemp("s") / "c.jsonl"
    s = session(tax, out, pool(4))
    keys = label_keys(tax)
    for a in seq:
        if a.startswith("t"):
            s.toggle(keys[a[1]])
        else:
            getattr(s, a)()
        rows = file_rows(out) if out.exists() else []
        assert rows == s.store.rows
        ids = [r["id"] for r in rows]
        assert len(set(ids)) == len(ids)
        assert sorted(ids + [r["id"] for r in s.pending]) == ["r1", "r2", "r3", "r4"]
        assert sum(lb.startswith("platform:") for lb in s.labels) <= 1
        assert check_corpus(str(out), tax) == [] if rows else True


def test_annotate_refuses_without_a_terminal(tmp_path):
    p = tmp_path / "pool.txt"
    p.write_text("Some abstract about robots and their arms.\n")
    r = CliRunner().invoke(cli, ["annotate", str(p), "--out", str(tmp_path / "c.jsonl"), "--annotator", "me"])
    assert r.exit_code == 2 and "needs a terminal" in r.stderr
    r = CliRunner().invoke(cli, ["annotate", str(p), "--out", str(tmp_path / "c.jsonl")])
    assert r.exit_code == 2 and "--annotator NAME" in r.stderr
    r = CliRunner().invoke(cli, ["annotate", str(p), "--annotator", "me"])
    assert r.exit_code == 2 and "--out CORPUS.jsonl" in r.stderr
