"""tagger annotate --queue: the records the model is least sure about, texts only."""

import json

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings, strategies as st

from tagger.annotate.pool import exclusions, pool_rows, record_year, text_key
from tagger.annotate.queue import margins, queue, score_rows
from tagger.cli import cli

from conftest import EXAMPLES, ROOT, write_jsonl

POOL = EXAMPLES / "iclr-2026-abstracts.txt"


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def test_margins_hand_computed():
    P = np.array([[0.5, 0.75, 0.1], [0.25, 1.0, 0.0]])
    t = np.array([0.5, 0.5, 0.2])
    assert margins(P, t).tolist() == [[0.0, 0.5, 0.5], [0.5, 1.0, 1.0]]


def test_record_year_and_text_key():
    assert record_year({"year": 2021}) == 2021 and record_year({"year": " 1993 "}) == 1993
    assert record_year({"listing_date": "2025-04-24"}) == 2025 and record_year({"published": "2019"}) == 2019
    assert record_year({"year": "n.d.", "date": "soon"}) is None and record_year({"year": True}) is None
    assert text_key("A  Text\nhere ") == text_key("a text here") != text_key("a text there")


def test_pool_rows_normalise_and_hide_model_fields(tmp_path):
    p = write_jsonl(tmp_path / "p.jsonl", [
        {"arxiv_id": "1", "summary": "Some text.", "tags": ["x"], "scores": {"x": 1}, "labels": ["y"],
         "listing_date": "2024-01-02", "extra": 5},
        {"arxiv_id": "2", "summary": "   "}, {"arxiv_id": "3"}])
    warnings = []
    rows = list(pool_rows([str(p)], text_field="summary", id_field="arxiv_id", warn=warnings.append))
    assert rows == [{"id": "1", "title": "", "abstract": "Some text.", "listing_date": "2024-01-02", "extra": 5,
                     "source": str(p), "year": 2024}]
    assert warnings == [f"{p}:2: record 2: 'summary' is empty; left out",
                        f"{p}:3: record 3 has no 'summary' field; left out"]


def test_queue_ranks_by_uncertainty(shipped_model):
    rows = list(pool_rows([str(POOL)]))
    scored = score_rows(shipped_model, rows)
    # independent: the margins of predict_proba's probabilities
    from tagger.text import document_text

    P = shipped_model.predict_proba([document_text(r, "abstract", "title") for r in rows])
    t = shipped_model.thresholds
    m = np.where(P >= t, (P - t) / (1 - t), (t - P) / t)
    expect = 1 - m.min(axis=1)
    assert [s[0] for s in scored] == pytest.approx(expect.tolist())
    chosen, counts = queue(shipped_model, rows, 5)
    assert counts == {"read": 19, "excluded": 0, "abstained": 0}
    assert [c[0]["id"] for c in chosen] == [rows[i]["id"] for i in np.argsort(-expect, kind="stable")[:5]]
    assert all(a[1] >= b[1] for a, b in zip(chosen, chosen[1:]))


@settings(max_examples=15, deadline=None)
@given(st.integers(1, 19), st.integers(0, 10))
def test_queue_of_n_is_a_prefix_of_a_longer_queue(shipped_model, n, more):
    rows = list(pool_rows([str(POOL)]))
    short = [c[0]["id"] for c in queue(shipped_model, rows, n)[0]]
    long = [c[0]["id"] for c in queue(shipped_model, rows, n + more)[0]]
    assert len(short) == n and long[:n] == short


def test_queue_leaves_out_excluded_repeated_and_abstained(shipped_model, tmp_path):
    rows = list(pool_rows([str(POOL)]))
    short = {"id": "short", "title": "", "abstract": "Too short to tag."}
    again = {**rows[3], "id": "copy-of-4", "abstract": rows[3]["abstract"].upper()}
    corpus = write_jsonl(tmp_path / "c.jsonl", [{"id": rows[0]["id"], "labels": []},
                                                {"id": "other", "abstract": rows[1]["abstract"], "labels": []}])
    ids, keys = exclusions([str(corpus)])
    chosen, counts = queue(shipped_model, rows + [short, again], 100, ids, keys)
    got = {c[0]["id"] for c in chosen}
    assert got == {r["id"] for r in rows[2:]}
    assert counts == {"read": 21, "excluded": 3, "abstained": 1}


def test_queue_cli_writes_texts_only_and_scores_apart(tmp_path, shipped_model):
    pool = write_jsonl(tmp_path / "pool.jsonl", [
        {"id": r["id"], "abstract": r["abstract"], "tags": ["modality:text"], "scores": {"modality:text": 0.9}}
        for r in pool_rows([str(POOL)])])
    out, scores = tmp_path / "batch.jsonl", tmp_path / "scores.jsonl"
    r = run("annotate", "--queue", 4, pool, EXAMPLES / "iclr-2026-abstracts.txt", "--out", out, "--scores", scores)
    assert r.exit_code == 0, r.output
    assert "queued 4 records of 38 read (19 excluded or repeated, 0 too short or not English)" in r.stderr
    batch = [json.loads(line) for line in open(out)]
    assert len(batch) == 4
    for b in batch:
        assert set(b) == {"id", "title", "abstract", "source"} and b["source"] == str(pool) and b["title"] == ""
    sc = [json.loads(line) for line in open(scores)]
    assert [s["id"] for s in sc] == [b["id"] for b in batch]
    assert sc[0]["uncertainty"] >= sc[-1]["uncertainty"]
    from tagger.text import document_text

    P = shipped_model.predict_proba([document_text(b, "abstract", "title") for b in batch])
    for s, p in zip(sc, P):
        assert s["scores"] == {lb: round(float(v), 4) for lb, v in zip(shipped_model.labels, p)}
        assert s["tags"] == shipped_model.decide(p[None, :])[0][0]
    # stdout by default; a bad exclude file is one line, exit 2
    r = run("annotate", "--queue", 2, POOL)
    assert r.exit_code == 0 and len(r.stdout.splitlines()) == 2
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n")
    r = run("annotate", "--queue", 2, POOL, "--exclude", bad)
    assert r.exit_code == 2 and r.stderr.startswith(f"tagger: error: {bad}:1: invalid JSON")


def test_annotate_help_imports_no_tui_library():
    import subprocess
    import sys

    code = ("import sys\nfrom tagger.cli import main\ntry:\n    main(['annotate', '--help'])\nexcept SystemExit:\n"
            "    pass\nprint(' '.join(sys.modules))")
    mods = set(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                              check=True).stdout.split())
    assert not {m for m in mods if m.split(".")[0] in ("prompt_toolkit", "textual", "urwid", "numpy", "sklearn")}
