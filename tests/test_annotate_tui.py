"""tagger annotate in a real terminal (a pseudo-terminal driven by pexpect): tag three
records, quit, resume, go back and undo, and check the corpus file after each step."""

import json
import subprocess
import sys

from conftest import ROOT, write_jsonl
from terminal import CTRL_C, ENTER, TAB, Terminal

TAXONOMY = ROOT / "examples" / "robotics" / "taxonomy.yaml"
TEXTS = [
    "A seven-joint manipulator arm learns to grasp unseen household objects from depth images.",
    "We present a wheeled mobile robot that maps office corridors with a laser scanner.",
    "A legged robot walks over rough terrain using a model predictive controller for its gait.",
    "A team of drones explores a collapsed building and shares one map of what it finds.",
    "People teach a service robot new table-setting tasks by showing them once.",
]


def rows(path):
    return [json.loads(line) for line in open(path, encoding="utf-8")]


def labels(path):
    return {r["id"]: r["labels"] for r in rows(path)}


def test_tag_quit_resume_back_undo(tmp_path):
    pool = write_jsonl(tmp_path / "pool.jsonl", [
        {"id": f"p{i}", "title": f"Paper {i}", "abstract": t, "year": 2010 + i} for i, t in enumerate(TEXTS, 1)])
    out = tmp_path / "corpus.jsonl"
    args = ["annotate", pool, "--out", out, "--annotator", "tester", "--taxonomy", TAXONOMY, "--licence", "CC0-1.0"]

    t = Terminal(args, tmp_path)
    screen = t.wait("[1/5] p1", "Paper 1", "seven-joint manipulator", "Robot platform (one)", "( ) 1 arm",
                    "[ ] 7 manipulation")
    assert "Enter done" in screen
    t.press("1", "7", then=["(*) 1 arm", "[x] 7 manipulation"])
    t.press(ENTER, then="[2/5] p2")
    assert labels(out) == {"p1": ["platform:arm", "task:manipulation"]}  # on disk as soon as it is done
    t.press("3", then="(*) 3 legged")
    t.press("2", then=["(*) 2 wheeled", "( ) 3 legged"])  # radio: the other platform is cleared
    t.press("9", ENTER, then="[3/5] p3")
    t.press("?", then="Keys")
    t.press("x", then="( ) 3 legged")  # any key closes the help without acting
    t.press("3", "8", "c", ENTER, then="[4/5] p4")
    t.press("4", then="(*) 4 aerial")
    t.press(CTRL_C)
    assert t.finish() == 0
    assert "3 records tagged in this run, 3 in the file, 2 left in the pool" in t.output
    assert labels(out) == {"p1": ["platform:arm", "task:manipulation"], "p2": ["platform:wheeled", "task:mapping"],
                           "p3": ["platform:legged", "task:locomotion", "approach:control"]}
    first = rows(out)[0]
    assert first["annotator"] == "tester" and first["source"] == str(pool) and first["sample"] == "as-is"
    assert first["year"] == 2011 and first["licence"] == "CC0-1.0" and first["tagged_at"].endswith("Z")

    # resume: the three are not shown again; back reaches them, an edit rewrites the file
    t = Terminal(args, tmp_path)
    t.wait("[4/5] p4", "( ) 4 aerial")
    t.press("<", then=["[3/5] p3", "saved, editing", "(*) 3 legged", "[x] 8 locomotion"])
    t.press("6", ENTER, then="[4/5] p4")
    assert labels(out)["p3"] == ["platform:legged", "task:navigation", "task:locomotion", "approach:control"]
    t.press("-", then=["[3/5] p3", "change undone"])  # undo the edit
    assert labels(out)["p3"] == ["platform:legged", "task:locomotion", "approach:control"]
    t.press(ENTER, then="[4/5] p4")  # unchanged: forward again
    t.press("4", "0", ENTER, then="[5/5] p5")
    assert list(labels(out)) == ["p1", "p2", "p3", "p4"]
    t.press("-", then=["[4/5] p4", "taken out of the corpus", "(*) 4 aerial", "[x] 0 interaction"])
    assert list(labels(out)) == ["p1", "p2", "p3"]
    t.press("0", then="[ ] 0 interaction")
    t.press(TAB, then=["[4/5] p5", "p4: skipped"])  # skip p4: it comes back after p5
    t.press("0", "a", ENTER, then="[5/5] p4")
    t.press("4", "9", ENTER, then="all 5 records are done")
    t.press(CTRL_C)
    assert t.finish() == 0
    assert labels(out) == {"p1": ["platform:arm", "task:manipulation"], "p2": ["platform:wheeled", "task:mapping"],
                           "p3": ["platform:legged", "task:locomotion", "approach:control"],
                           "p5": ["task:interaction", "approach:learning"], "p4": ["platform:aerial", "task:mapping"]}
    check = subprocess.run([sys.executable, "-m", "tagger", "corpus", "check", str(out), "--taxonomy", str(TAXONOMY)],
                           capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr


def test_suggest_and_active_order_with_a_model(tmp_path, small_model_dir):
    pool = write_jsonl(tmp_path / "pool.jsonl", [
        {"id": "x1", "abstract": "We fine-tune a large language model with LoRA adapters on instruction data and "
                                 "evaluate it on reasoning benchmarks, where it outperforms strong baselines."},
        {"id": "x2", "abstract": "Too short."},
        {"id": "x3", "abstract": "A convolutional network segments tumours in magnetic resonance images of the "
                                 "brain, evaluated on a public benchmark of annotated scans from many hospitals."}])
    out = tmp_path / "c.jsonl"
    from tagger.model import Model

    model = Model.load(small_model_dir)
    t = Terminal(["annotate", pool, "--out", out, "--annotator", "me", "--model", small_model_dir, "--suggest",
                  "--order", "active"], tmp_path)
    screen = t.wait("[1/3]", "suggested by the model")
    first = "x1" if "[1/3] x1" in screen else "x3"
    pred = model.predict([{"abstract": [json.loads(x) for x in open(pool)][int(first[1]) - 1]["abstract"]}])[0]
    t.press(ENTER, then="[2/3]")
    t.press(CTRL_C)
    assert t.finish() == 0
    saved = rows(out)
    assert [r["id"] for r in saved] == [first] and saved[0]["labels"] == pred.tags and saved[0]["suggested"] is True
    assert saved[0]["sample"] == "active"


def test_every_label_of_the_default_taxonomy_is_reachable_at_80x24(tmp_path):
    """40 labels on an 80x24 terminal: the panel pages (its last line says what is below),
    the abstract pane yields, toggling a label off the page turns to it, and = lists the
    labels set (issue 19: 21 labels were shown and the rest cut off without a sign)."""
    from tagger.taxonomy import load_taxonomy

    tax = load_taxonomy(ROOT / "taxonomy.yaml")
    pool = write_jsonl(tmp_path / "pool.jsonl", [{"id": "p1", "title": "A paper", "abstract": " ".join(TEXTS * 4)}])
    out = tmp_path / "corpus.jsonl"
    t = Terminal(["annotate", pool, "--out", out, "--annotator", "me"], tmp_path, cols=80, rows=24)
    first = t.wait("[1/1] p1", "more lines of labels below (page 1/2)", "] next", "Enter done")
    t.press("]", then="(page 2/2)")
    second = t.text()
    shown = first + second
    for f in tax.facets:
        assert f.name in shown
        for lb in f.labels:
            assert " " + lb.id.split(":", 1)[1] in shown, lb.id
    assert "A paper" in first and "A paper" in second  # the abstract keeps its lines
    t.press("1", then=["(page 1/2)", "[x] 1 text"])  # a label on the other page: the panel turns to it
    t.press("D", then=["(page 2/2)", "[x] D tool"])
    t.press("=", then=["Labels set on this record (2", "modality:text", "contribution:tool"])
    t.press("x", then="(page 2/2)")  # any key closes the list without acting
    assert "[ ] x case-study" not in t.text()
    t.press(ENTER, then="all 1 records are done")
    t.press(CTRL_C)
    assert t.finish() == 0
    assert labels(out) == {"p1": ["modality:text", "contribution:tool"]}


def test_an_empty_pool_is_one_line_and_no_screen(tmp_path):
    pool = tmp_path / "pool.jsonl"
    pool.write_text("")
    t = Terminal(["annotate", pool, "--out", tmp_path / "c.jsonl", "--annotator", "me"], tmp_path, cols=80, rows=24)
    assert t.finish() == 0
    lines = [ln for ln in t.output.replace("\r", "").splitlines() if ln.strip()]
    assert lines == [f"tagger: no records read from {pool}"]
    assert "\x1b[?1049h" not in t.output  # the full screen was never entered
