"""Failures that must be visible (issue 19): a closed stderr never stops the work, empty
input is said, and Ctrl-C says what was not written."""

import json
import signal
import subprocess

import pytest

from conftest import ROOT
from test_pipeline import CMD, ENV, rows, wait_for_output

GOOD = ("We train a convolutional network on brain MRI images and compare it with three baselines on "
        "two public benchmarks, where it improves the Dice score by a wide margin.")


def test_a_closed_stderr_never_stops_the_work(tmp_path):
    """``tagger label bad.jsonl -o out 2>&1 | head -1``: exit 0, and out is written in full."""
    src = tmp_path / "in.jsonl"
    src.write_text("".join("{bad\n" if i % 2 else json.dumps({"id": i, "abstract": GOOD}) + "\n"
                           for i in range(4000)))
    out = tmp_path / "out.jsonl"
    cmd = " ".join(CMD) + f" label {src} --on-error skip -o {out} 2>&1 | head -1; exit ${{PIPESTATUS[0]}}"
    r = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, env=ENV, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.startswith("tagger: warning:") and r.stdout.count("\n") == 1
    assert len(out.read_text().splitlines()) == 2000


@pytest.mark.parametrize("name, content", [("empty.txt", ""), ("empty.json", "[]\n"), ("head.csv", "id,title,abstract\n"),
                                           ("empty.jsonl", "")])
def test_empty_input_is_one_line_and_exit_0(tmp_path, name, content):
    src = tmp_path / name
    src.write_text(content)
    out = tmp_path / ("out" + src.suffix)
    r = subprocess.run(CMD + ["label", str(src), "-o", str(out)], capture_output=True, text=True, env=ENV, cwd=tmp_path)
    assert r.returncode == 0
    assert r.stderr == f"tagger: no records read from {src}\n"
    assert out.exists()
    r = subprocess.run(CMD + ["filter", "modality:image", str(src)], capture_output=True, text=True, env=ENV)
    assert r.returncode == 1 and r.stderr == f"tagger: no records read from {src}\n"


def test_empty_standard_input_is_said(tmp_path):
    with open("/dev/null") as devnull:
        r = subprocess.run(CMD + ["label"], stdin=devnull, capture_output=True, text=True, env=ENV)
    assert r.returncode == 0 and r.stdout == "" and r.stderr == "tagger: no records read from standard input\n"


def test_a_non_empty_input_says_nothing(tmp_path):
    src = tmp_path / "a.jsonl"
    src.write_text(json.dumps({"abstract": GOOD}) + "\n")
    r = subprocess.run(CMD + ["label", str(src)], capture_output=True, text=True, env=ENV)
    assert r.returncode == 0 and r.stderr == ""


def test_ctrl_c_says_the_file_was_not_written_and_how_far_it_got(tmp_path, corpus_records):
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows(corpus_records, 100000)))
    out = tmp_path / "out.jsonl"
    p = subprocess.Popen(CMD + ["label", str(src), "-o", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env=ENV, cwd=ROOT)
    wait_for_output(tmp_path, p)
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 130
    lines = [line for line in err.decode().splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith(f"tagger: interrupted: {out} was not written (") and "records had been tagged)" in lines[0]
    done = int(lines[0].rsplit("(", 1)[1].split()[0])
    assert 0 < done < 100000
    assert sorted(x.name for x in tmp_path.iterdir()) == ["in.jsonl"]


# --- tagger bib: ignored corrections fail the hook; a label added back says how to keep it off

@pytest.mark.parametrize("correction, says", [
    ("+method:rnm", "unknown label `method:rnm` in the tagger field (closest: method:rnn); ignored"),
    ("method:rnm", "has no sign (+method:rnm pins it, -method:rnm vetoes it; closest label ids: method:rnn)"),
    ("+method:cnn, -method:cnn", "`method:cnn` is both pinned and vetoed in the tagger field; ignored"),
    ("+venue:journal, +venue:workshop", "are both pinned in the exclusive facet venue"),
])
def test_an_ignored_correction_fails_bib_and_check(tmp_path, correction, says):
    from bibtools import call

    f = tmp_path / "refs.bib"
    f.write_text("@misc{a,\n  abstract = {An entry.},\n  tagger = {%s},\n}\n\n@misc{b,\n  abstract = {Other.},\n}\n"
                 % correction)
    rc, out, err = call([f], check=True)
    assert rc == 2 and says in err and f"{f}:1: a: warning: " in err
    assert f"{f}:6: b: tags missing: +modality:text" in out
    rc, out, err = call([f])
    assert rc == 2 and says in err and out == f"Fixing {f}\n"
    text = f.read_text()
    assert "@misc{b,\n  abstract = {Other.},\n  keywords = {modality:text},\n}" in text  # the rest is written
    assert "1 warnings" in err.splitlines()[-1]


def test_a_label_added_to_tool_terms_says_how_to_keep_it_off(tmp_path):
    from bibtools import call

    f = tmp_path / "refs.bib"
    f.write_text("@misc{a,\n  abstract = {An entry.},\n  keywords = {mine, task:entry},\n}\n")
    rc, out, err = call([f], check=True)
    assert rc == 1 and out == (f"{f}:1: a: tags out of date: +modality:text; "
                               "to keep it off: tagger = {-modality:text}\n")
    rc, out, err = call([f])
    assert rc == 1 and f"{f}:1: a: +modality:text added; to keep it off: tagger = {{-modality:text}}\n" in err
    f.write_text(f.read_text().replace("  keywords", "  tagger = {-modality:text},\n  keywords"))
    f.write_text(f.read_text().replace("mine, modality:text, task:entry", "mine, task:entry"))
    assert call([f])[:2] == (0, "")


def test_a_bib_warning_is_never_cut_mid_hint(tmp_path):
    from bibtools import call

    d = tmp_path / ("a-long-folder-name-of-a-bibliography-repository" * 2)
    d.mkdir()
    f = d / "refs.bib"
    f.write_text("@misc{a-rather-long-citation-key-2024,\n  abstract = {An entry.},\n"
                 "  tagger = {+method:rnm, +modality:txt, method:cnnn, +%s},\n}\n" % ("x" * 80))
    rc, out, err = call([f])
    line = next(ln for ln in err.splitlines() if ": warning: " in ln)
    assert "(closest: method:rnn); ignored" in line and "(closest: modality:text); ignored" in line
    assert "closest label ids: method:cnn, method:rnn); ignored" in line and line.endswith("; ignored")
    assert "`" + "x" * 37 + "...`" in line  # a long quoted term is what is shortened
    assert err.splitlines()[-1].endswith(" 0 unreadable, 1 warnings")


# --- tagger bib --remove

def _bib_files():
    from bibtools import SHARED as BIB_SHARED  # noqa: F401  (the shared folder, when present)

    here = sorted((ROOT / "tests").glob("bib_cases*/*.bib"))
    real = sorted((ROOT.parent / "shared" / "bib").glob("real*/*.bib"))
    return here + real


def test_tag_then_remove_gives_the_file_back_byte_for_byte(tmp_path):
    """Every case file and (when ../shared is here) every real bibliography without
    label-shaped terms: tagged, then --remove'd, is the file it was."""
    from bibtools import LABELS, call

    checked = 0
    for src in _bib_files():
        data = src.read_bytes()
        if len(data) > 300_000 or any(lb.encode() in data for lb in LABELS):  # the big ones: tested by hand
            continue
        f = tmp_path / src.name
        f.write_bytes(data)
        f.chmod(0o644)
        call([f])
        tagged = f.read_bytes()
        rc, out, err = call([f], remove=True, check=True)
        assert (rc >= 1) == (tagged != data) or rc == 2, (src, rc)
        assert f.read_bytes() == tagged
        call([f], remove=True)
        assert f.read_bytes() == data, src
        checked += tagged != data
    assert checked >= 20


def test_remove_keeps_user_terms_and_a_field_the_tool_did_not_lay_out(tmp_path):
    from bibtools import call

    f = tmp_path / "refs.bib"
    f.write_text("@misc{a,\n  abstract = {An entry.},\n  keywords = {to read, modality:text, Method:CNN},\n}\n"
                 "@misc{b,\n  keywords = {modality:text},\n  abstract = {An entry.},\n}\n"
                 "@misc{c,\n  abstract = {An entry.},\n  keywords = {task:entry},\n}\n")
    rc, out, err = call([f], remove=True, check=True)
    assert rc == 1 and out == (f"{f}:1: a: tags to remove: -modality:text\n{f}:5: b: tags to remove: -modality:text\n"
                               f"{f}:9: c: tags to remove: -task:entry\n")
    rc, out, err = call([f], remove=True)
    assert rc == 1 and f.read_text() == ("@misc{a,\n  abstract = {An entry.},\n  keywords = {to read, Method:CNN},\n}\n"
                                         "@misc{b,\n  keywords = {},\n  abstract = {An entry.},\n}\n"
                                         "@misc{c,\n  abstract = {An entry.},\n}\n")
    assert call([f], remove=True)[:2] == (0, "")


def test_remove_from_the_command_line(tmp_path):
    f = tmp_path / "refs.bib"
    original = "@article{x,\n  title = {U-Net},\n  abstract = {%s},\n}\n" % GOOD
    f.write_text(original)
    assert subprocess.run(CMD + ["bib", str(f)], capture_output=True, env=ENV).returncode == 1
    assert "keywords = {" in f.read_text()
    r = subprocess.run(CMD + ["bib", "--check", "--remove", str(f)], capture_output=True, text=True, env=ENV)
    assert r.returncode == 1 and r.stdout.startswith(f"{f}:1: x: tags to remove: -")
    r = subprocess.run(CMD + ["bib", "--remove", str(f)], capture_output=True, text=True, env=ENV)
    assert r.returncode == 1 and f.read_text() == original


# --- tagger evaluate --test: id, text and labels are enough; macro over the labels present

def test_evaluate_test_needs_no_annotator_and_warns_on_duplicates(tmp_path, corpus_records):
    from conftest import write_jsonl

    rows = [{"id": r["id"], "abstract": r["abstract"], "labels": r["labels"]} for r in corpus_records[:40]]
    rows.append({"id": "again", "abstract": rows[0]["abstract"], "labels": rows[0]["labels"]})
    test = write_jsonl(tmp_path / "test.jsonl", rows)
    js, tsv = tmp_path / "r.json", tmp_path / "pl.tsv"
    r = subprocess.run(CMD + ["evaluate", "--test", str(test), "--no-bib-eval", "--json", str(js), "--per-label", str(tsv)],
                       capture_output=True, text=True, env=ENV, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert r.stderr.strip() == f"tagger: warning: {test}:41: again: duplicate abstract (same text as line 1)"
    result = json.loads(js.read_text())
    present = {lb for row in rows for lb in row["labels"]}
    t = result["tagger"]
    assert {x["label"] for x in t["per_label"]} == present and all(x["support"] for x in t["per_label"])
    assert t["labels_without_support"] == 40 - len(present) > 0
    assert len(tsv.read_text().splitlines()) == 1 + len(present)
    assert t["all"]["all"]["macro_labels"] == len(present) and t["all"]["all"]["macro_of"] == 40
    f1 = {x["label"]: x["f1"] for x in t["per_label"]}
    assert abs(t["all"]["all"]["f1_macro"] - sum(f1.values()) / len(f1)) < 1e-3  # the mean over the labels present
    assert f"over the labels present in it (whole corpus {len(present)} of 40)" in r.stdout
    assert f"per-label table: {40 - len(present)} labels with no support in the test set left out" in r.stdout


# --- small things

def test_bare_tagger_prints_help_and_exits_0():
    r = subprocess.run(CMD, capture_output=True, text=True, env=ENV)
    assert r.returncode == 0 and r.stdout.startswith("Usage: tagger") and "label" in r.stdout and r.stderr == ""


def test_corpus_check_on_another_taxonomys_corpus_is_one_line(tmp_path):
    from conftest import write_jsonl

    tags = {json.loads(ln)["id"]: json.loads(ln)["labels"]
            for ln in open(ROOT / "examples" / "robotics" / "hand-tags.jsonl", encoding="utf-8")}
    rows = [{**r, "labels": tags[r["id"]], "annotator": "me"}
            for r in map(json.loads, open(ROOT / "examples" / "robotics" / "abstracts.jsonl", encoding="utf-8"))]
    f = write_jsonl(tmp_path / "robotics.jsonl", rows)
    r = subprocess.run(CMD + ["corpus", "check", str(f)], capture_output=True, text=True, env=ENV)
    assert r.returncode == 1
    assert r.stdout.count("\n") == 1 and "looks like a corpus of another taxonomy" in r.stdout
    assert r.stdout.rstrip().endswith("pass its taxonomy with --taxonomy FILE")
    r = subprocess.run(CMD + ["corpus", "check", str(f), "--taxonomy", str(ROOT / "examples" / "robotics" / "taxonomy.yaml")],
                       capture_output=True, text=True, env=ENV)
    assert r.returncode == 0, r.stdout


def test_the_readme_api_example_gives_the_scores_it_shows():
    """The Python API example of README.md, run: its tags and scores are the model's."""
    import ast
    import re

    import tagger

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("## Python API", 1)[1].split("```python", 1)[1].split("```", 1)[0]
    call = re.search(r"preds = (t\.tag\(.*?\))\n", block, re.S).group(1)
    shown = re.search(r"# \((\[.*?\]),\s*#\s*(\{.*?\}), (None|'[^']*')\)", block, re.S)
    t = tagger.load()
    preds = eval(call, {"t": t})
    assert preds[0].tags == ast.literal_eval(shown.group(1))
    assert preds[0].scores == ast.literal_eval(re.sub(r"\n#\s*", " ", shown.group(2)))  # over comment lines
    assert preds[0].reason == ast.literal_eval(shown.group(3))


def test_evaluate_shows_progress_before_the_first_fold_is_done(tmp_path):
    """The first progress line comes before any model is fitted, then one per inner fold."""
    import time

    corpus = tmp_path / "c.jsonl"
    corpus.write_text("".join((ROOT / "fixtures" / "corpus.jsonl").read_text(encoding="utf-8").splitlines(True)[:100]))
    p = subprocess.Popen(CMD + ["evaluate", "--corpus", str(corpus), "--folds", "2", "--no-bib-eval"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
    start = time.monotonic()
    first = p.stderr.readline()
    took = time.monotonic() - start
    rest = p.stderr.read()
    assert p.wait(timeout=300) == 0
    assert first == "tagger: 2-fold cross-validation: 100 documents, 2 folds of 3 inner folds each; starting fold 1 of 2\n"
    assert took < 20  # the imports; before the first fit
    assert "fold 1 of 2: tagger, inner fold 1 of 3 done" in rest
