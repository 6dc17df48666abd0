import json

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings, strategies as st

from tagger.cli import cli
from tagger.evaluation.crossval import cross_validate
from tagger.evaluation.report import format_report
from tagger.evaluation.metrics import per_label, prf, ranking

from conftest import ROOT, write_jsonl


def test_metrics_by_hand():
    Y = np.array([[1, 0, 1], [0, 1, 0]])
    T = np.array([[1, 1, 0], [0, 1, 0]])
    m = prf(Y, T)
    # micro: tp=2, fp=1, fn=1
    assert m["precision_micro"] == pytest.approx(2 / 3) and m["recall_micro"] == pytest.approx(2 / 3)
    # macro over labels: F1 = 1, 2/3, 0
    assert m["f1_macro"] == pytest.approx((1 + 2 / 3 + 0) / 3)
    # samples: doc1 P=1/2 R=1/2 F1=1/2; doc2 F1=1
    assert m["f1_samples"] == pytest.approx(0.75)
    P = np.array([[0.9, 0.8, 0.1], [0.2, 0.7, 0.3]])
    r = ranking(Y, P)
    assert r["precision@1"] == pytest.approx(1.0) and r["precision@3"] == pytest.approx((2 / 3 + 1 / 3) / 2)
    rows = per_label(Y, T, ["a", "b", "c"])
    assert rows[1] == {"label": "b", "support": 1, "tp": 1, "fp": 1, "fn": 0, "precision": 0.5, "recall": 1.0, "f1": 0.6667}


BIB_CASE = ROOT / "tests" / "bib_eval_case"
YEARS = (2003, 2012, 2024, None, 2009, 2019)  # by row number, so each era has rows and some have no year


@pytest.fixture(scope="module")
def small_cv(corpus_sample, taxonomy):
    from tagger.evaluation.bibeval import load_bib_eval

    recs = [{**r, "year": YEARS[i % len(YEARS)]} for i, r in enumerate(corpus_sample[::5])]
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TAGGER_SHARED", str(BIB_CASE / "shared"))
        bib, note = load_bib_eval(BIB_CASE / "bib-eval.jsonl", taxonomy)
    return cross_validate(recs, taxonomy, k=3, inner_k=2, baseline=True, num_rounds=10, bib_eval=bib,
                          bib_eval_note=note, first=FIRST)


#: small_cv reports its first FIRST rows as a part too (evaluate --first)
FIRST = 40


def test_parts_by_sample_and_era():
    from tagger.evaluation.crossval import parts

    recs = [{"sample": "uniform", "year": 2009}, {"sample": "uniform", "year": 2010}, {"sample": "seed", "year": 2018},
            {"sample": "seed", "year": 2019}, {"sample": "active"}, {"sample": "older-uniform", "year": "2001"},
            {"sample": "uniform", "year": 1993}, {"sample": "seed", "year": None}, {"sample": "active", "year": 2030}]
    p = parts(recs)
    assert list(p["samples"]) == ["seed", "uniform", "active"]  # report order; older-uniform has 1 row
    assert p["samples"]["seed"].tolist() == [False, False, True, True, False, False, False, True, False]
    assert {k: np.flatnonzero(m).tolist() for k, m in p["eras"].items()} == {
        "before 2010": [0, 6], "2010-2018": [1, 2], "2019 on": [3, 8]}  # "2001" (a string) and None: no era
    assert "rows" not in p
    assert np.flatnonzero(parts(recs, 3)["rows"]["first 3 rows"]).tolist() == [0, 1, 2]
    assert "rows" not in parts(recs, 9) and "rows" not in parts(recs, 1)  # all rows, or one: no part


def test_cross_validation_reports_samples_eras_and_bib_eval(small_cv, corpus_sample, taxonomy):
    t, b = small_cv["tagger"], small_cv["baseline"]
    n = small_cv["documents"]
    eras = {k: v["all"]["documents"] for k, v in t["eras"].items()}
    assert eras == {"before 2010": sum(1 for i in range(n) if YEARS[i % 6] in (2003, 2009)),
                    "2010-2018": sum(1 for i in range(n) if YEARS[i % 6] == 2012),
                    "2019 on": sum(1 for i in range(n) if YEARS[i % 6] in (2019, 2024))}
    assert sum(eras.values()) < n  # rows without a year are in no era
    from tagger.evaluation.crossval import SAMPLES

    samples = corpus_sample[::5]
    counts = {s: sum(r["sample"] == s for r in samples) for s in SAMPLES}
    assert {k: v["all"]["documents"] for k, v in t["samples"].items()} == {s: c for s, c in counts.items() if c > 1}
    assert t["samples"]["uniform"] == t["uniform"]
    assert t["bib_eval"]["all"]["documents"] == 6 and b["bib_eval"]["all"]["documents"] == 6
    assert small_cv["bib_eval"] == {"documents": 6, "note": "bib-eval: 6 entries of 1 .bib file under "
                                    f"{BIB_CASE / 'shared' / 'bib'}"}
    text = format_report(small_cv, taxonomy)
    assert "== bib-eval: entries of real .bib files, never trained on: 6 documents, scored by a model trained" in text
    heads = [ln[3:].split(":")[0] for ln in text.splitlines() if ln.startswith("== ")]
    assert heads == (["whole corpus"] + [f"sample {s}" for s in t["samples"]] + [f"era {e}" for e in eras]
                     + [f"first {FIRST} rows", "bib-eval", "tagger minus peer, micro-F1 [95% paired bootstrap interval]"])
    # the pinned peers ran on the same folds; the tagger's lead over each, with its interval
    assert set(small_cv["comparisons"]) == {"plain_lr", "svm"}
    for peer, c in small_cv["comparisons"].items():
        assert small_cv[peer]["all"]["all"]["documents"] == n and small_cv[peer]["bib_eval"]["all"]["documents"] == 6
        assert set(c) >= {"corpus", "bib-eval"} and c["corpus"]["documents"] == n
        got = t["all"]["all"]["f1_micro"] - small_cv[peer]["all"]["all"]["f1_micro"]
        assert abs(c["corpus"]["diff"] - got) < 2e-4 and c["corpus"]["lo"] <= c["corpus"]["diff"] <= c["corpus"]["hi"]
        first = f"first {FIRST} rows"  # evaluate --first: the same out-of-fold decisions on the first rows
        assert c[first]["documents"] == FIRST == t["rows"][first]["all"]["documents"]
        got = t["rows"][first]["all"]["f1_micro"] - small_cv[peer]["rows"][first]["all"]["f1_micro"]
        assert abs(c[first]["diff"] - got) < 2e-4
    assert f"== era 2010-2018: {eras['2010-2018']} documents\n" in text
    section = text.split("== bib-eval")[1].split("\n\n")
    rows = {tuple(ln.split()[:2]) for ln in section[0].splitlines()[2:]}
    assert ("all", "tagger") in rows and ("baseline", f"{b['bib_eval']['all']['f1_micro']:.4f}") in rows
    assert section[1].startswith("bib-eval: 6 entries of 1 .bib file")  # the note, after the tables
    tb = f"{t['bib_eval']['all']['f1_micro']:.3f} / {b['bib_eval']['all']['f1_micro']:.3f}"
    from tagger.evaluation.report import model_card

    card = model_card({"created": "x", "corpus_sha256": "", "taxonomy_fingerprint": ""}, small_cv, taxonomy)
    line = next(x for x in card.splitlines() if x.startswith("| bib-eval |"))
    assert line.startswith(f"| bib-eval | 6 | {tb} | ")
    assert f"| era 2010-2018 | {eras['2010-2018']} |" in card
    assert f"| first {FIRST} rows | {FIRST} |" in card


def test_folds_in_two_processes_give_the_same_figures(small_cv, corpus_sample, taxonomy):
    """--jobs 2 forks the outer folds and the bib-eval fit; every figure equals the one-process run."""
    from tagger.evaluation.bibeval import load_bib_eval

    recs = [{**r, "year": YEARS[i % len(YEARS)]} for i, r in enumerate(corpus_sample[::5])]
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TAGGER_SHARED", str(BIB_CASE / "shared"))
        bib, note = load_bib_eval(BIB_CASE / "bib-eval.jsonl", taxonomy)
    steps = []
    two = cross_validate(recs, taxonomy, k=3, inner_k=2, baseline=True, num_rounds=10, bib_eval=bib,
                         bib_eval_note=note, jobs=2, first=FIRST, progress=lambda d, t, w: steps.append((d, t, w)))
    assert two == small_cv
    assert small_cv["tagger"]["all"]["all"]["f1_micro"] > 0.2  # a model that learned something, not empty figures
    assert steps[-1][:2] == (16, 16) and sorted(w for _, _, w in steps[1:]) == sorted(
        [f"fold {f} of 3: all systems" for f in (1, 2, 3)] + ["bib-eval entries: all systems"])


def test_cross_validation_reports_every_figure(small_cv, taxonomy):
    t = small_cv["tagger"]
    assert small_cv["folds"] == 3 and t["all"]["all"]["documents"] == small_cv["documents"]
    assert t["uniform"]["all"]["documents"] == small_cv["uniform_documents"] > 50
    keys = {"f1_micro", "f1_macro", "f1_samples", "precision_micro", "recall_macro", "f1@5", "ndcg",
            "precision@1", "precision@3", "precision@5"}
    for part in ("all", "uniform"):
        for facet in ["all"] + [f.id for f in taxonomy.facets]:
            block = t[part][facet]
            assert keys <= set(block) and all(0 <= block[k] <= 1 for k in keys)
    assert [r["label"] for r in t["per_label"]] == taxonomy.label_ids
    assert t["all"]["all"]["f1_micro"] > 0.5  # far above chance even on a fifth of the corpus
    assert small_cv["baseline"]["all"]["all"]["f1_micro"] > 0.5


def test_report_rows_per_facet_and_system_within_100_columns(small_cv, taxonomy):
    from tagger.evaluation.report import REPORT_COLUMNS

    text = format_report(small_cv, taxonomy)
    lines = text.splitlines()
    assert max(map(len, lines)) <= 100
    assert lines[0].startswith("== whole corpus: ") and lines[0].endswith("-fold cross-validation")
    assert lines[1].split() == ["facet", "system"] + [w for _, h in REPORT_COLUMNS for w in h.split()]
    facets = ["all"] + [f.id for f in taxonomy.facets]
    systems = ["tagger", "baseline", "plain_lr", "svm"]  # the tuned baseline, then the two pinned peers
    rows = lines[2:2 + len(systems) * len(facets)]
    step = len(systems)
    assert [r.split()[0] for r in rows[::step]] == facets and all(r.split()[1] == "tagger" for r in rows[::step])
    for i, name in enumerate(systems[1:], 1):
        assert all(r.split()[0] == name for r in rows[i::step])
    all_tagger = [float(x) for x in rows[0].split()[2:]]
    assert all_tagger == [round(small_cv["tagger"]["all"]["all"][k], 4) for k, _ in REPORT_COLUMNS]
    assert "== sample uniform: " in text  # each sample, each era, in the same shape


def test_report_shows_samples_and_eras_in_the_same_shape(small_cv, taxonomy):
    result = json.loads(json.dumps(small_cv))
    for s in ("tagger", "baseline"):
        result[s]["samples"] = {"uniform": result[s]["all"], "active-learning-round-with-a-long-name": result[s]["all"]}
        result[s]["eras"] = {"1993-2018": result[s]["all"]}
    text = format_report(result, taxonomy)
    heads = [ln for ln in text.splitlines() if ln.startswith("== ")]
    assert [h.split(":")[0] for h in heads] == ["== whole corpus", "== sample uniform",
                                               "== sample active-learning-round-with-a-long-name", "== era 1993-2018",
                                               f"== first {FIRST} rows", "== bib-eval",
                                               "== tagger minus peer, micro-F1 [95% paired bootstrap interval]"]
    assert max(map(len, text.splitlines())) <= 100 and text.count("\nall ") == 6


def test_evaluate_test_file_card_and_info(tmp_path, corpus_records, small_model_dir):
    import shutil

    test = write_jsonl(tmp_path / "t.jsonl", [{k: r[k] for k in ("id", "title", "abstract", "labels", "annotator", "sample")}
                                              for r in corpus_records[1::9]])
    model = tmp_path / "m"
    shutil.copytree(small_model_dir, model)
    r = CliRunner().invoke(cli, ["evaluate", "--test", str(test), "--model", str(model), "--json", str(tmp_path / "f.json"),
                                 "--per-label", str(tmp_path / "p.tsv"), "--card", str(model)])
    assert r.exit_code == 0, r.output
    assert "F1 micro" in r.output
    figs = json.loads((tmp_path / "f.json").read_text())
    assert 0 < figs["tagger"]["all"]["all"]["f1_micro"] <= 1
    rows = (tmp_path / "p.tsv").read_text().splitlines()
    assert rows[0] == "label\tsupport\ttp\tfp\tfn\tprecision\trecall\tf1" and len(rows) == 41
    r = CliRunner().invoke(cli, ["info", str(model)])
    assert r.exit_code == 0 and r.output.startswith("# Model card") and "modality:text" in r.output


def test_evaluate_scores_bib_eval_from_the_shared_folder(tmp_path, corpus_records, small_model_dir, taxonomy,
                                                          monkeypatch):
    from tagger.evaluation.bibeval import load_bib_eval
    from tagger.evaluation.metrics import decide
    from tagger.model import Model
    from tagger.text import document_text
    from tagger.model.training import label_matrix

    test = write_jsonl(tmp_path / "t.jsonl", [{k: r[k] for k in ("id", "abstract", "labels", "annotator", "sample")}
                                              for r in corpus_records[2::20]])
    args = ["evaluate", "--test", str(test), "--model", str(small_model_dir), "--bib-eval",
            str(BIB_CASE / "bib-eval.jsonl"), "--json", str(tmp_path / "f.json")]
    monkeypatch.setenv("TAGGER_SHARED", str(BIB_CASE / "shared"))
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 0, r.output
    got = json.loads((tmp_path / "f.json").read_text())["tagger"]["bib_eval"]
    bib, _ = load_bib_eval(BIB_CASE / "bib-eval.jsonl", taxonomy)
    m = Model.load(small_model_dir)
    P = m.predict_proba([document_text(x) for x in bib])
    T = decide(P, dict(zip(m.labels, m.thresholds.tolist())), taxonomy)
    Y = label_matrix(bib, taxonomy.label_ids)
    assert got["all"]["documents"] == 6
    assert got["all"]["f1_micro"] == round(prf(Y, T)["f1_micro"], 4)
    assert "bib-eval: 6 entries of 1 .bib file" in r.output
    monkeypatch.setenv("TAGGER_SHARED", str(tmp_path / "nowhere"))
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 0, r.output
    assert (f"bib-eval: skipped (6 entries of {BIB_CASE / 'bib-eval.jsonl'}): their texts are read from "
            f"{tmp_path / 'nowhere' / 'bib'}, absent here (set TAGGER_SHARED to the shared folder)") in r.output
    assert "bib_eval" not in json.loads((tmp_path / "f.json").read_text())["tagger"]


@pytest.mark.parametrize("row, message", [
    ({"file": "real/mini.bib", "key": "nokey", "labels": [], "annotator": "me"}, "has no entry 'nokey' with an abstract"),
    ({"file": "real/gone.bib", "key": "x", "labels": [], "annotator": "me"}, "gone.bib: no such .bib file"),
    ({"file": "real/mini.bib", "key": "rl2019", "labels": ["method:rl"], "annotator": "me"}, "unknown label 'method:rl'"),
    ({"file": "real/mini.bib", "key": "rl2019", "labels": [], "annotator": "me", "abstract": "x"}, "keep labels only"),
    ({"file": "real/mini.bib", "key": "rl2019", "labels": []}, "needs 'annotator'"),
    ({"file": "real/mini.bib", "key": 7, "labels": [], "annotator": "me"}, "needs 'key', a string"),
])
def test_bad_bib_eval_rows_are_one_line_errors(tmp_path, taxonomy, monkeypatch, row, message):
    from tagger.evaluation.bibeval import load_bib_eval
    from tagger.errors import TaggerError

    monkeypatch.setenv("TAGGER_SHARED", str(BIB_CASE / "shared"))
    p = write_jsonl(tmp_path / "b.jsonl", [{"file": "real/mini.bib", "key": "rl2019", "labels": [], "annotator": "me"}, row])
    with pytest.raises(TaggerError, match=f"^{p}:2: .*" + message.replace("(", r"\(")):
        load_bib_eval(p, taxonomy)


def test_explanations_quote_the_text(shipped_model):
    text = ("We fine-tune a large language model with LoRA adapters on instruction data and evaluate it on "
            "reasoning benchmarks, where it outperforms strong baselines by a wide margin.")
    p = shipped_model.predict([{"abstract": text}], explain=3)[0]
    assert p.tags and set(p.explanations) == set(p.tags)
    for tag, grams in p.explanations.items():
        assert 1 <= len(grams) <= 3
        contribs = [c for _, c in grams]
        assert all(c > 0 for c in contribs) and contribs == sorted(contribs, reverse=True)
        assert all(g in text for g, _ in grams), grams


# --- evaluate's output files: checked before the long part, written atomically ------------

@pytest.fixture
def tiny_corpus(tmp_path, corpus_records):
    """12 hand-tagged rows of the corpus, in a folder of their own."""
    d = tmp_path / "in"
    d.mkdir()
    return write_jsonl(d / "tiny.jsonl", corpus_records[:12])


def _no_work(monkeypatch):
    """Make any work past the options' checks fail the test."""
    import tagger.corpus
    import tagger.evaluation.crossval as ev

    def worked(*a, **k):
        pytest.fail("evaluate worked before refusing its options")

    for mod, name in ((ev, "cross_validate"), (ev, "evaluate_model"), (tagger.corpus, "load_corpus"),
                      (tagger.corpus, "check_corpus")):
        monkeypatch.setattr(mod, name, worked)


@pytest.mark.parametrize("option", ["--json", "--per-label", "--html"])
@pytest.mark.parametrize("problem", ["missing folder", "read-only file"])
def test_output_paths_are_refused_before_any_work(tmp_path, tiny_corpus, monkeypatch, option, problem):
    _no_work(monkeypatch)
    out = tmp_path / "out"
    out.mkdir()
    if problem == "read-only file":
        target = out / "kept.txt"
        target.write_text("mine\n")
        target.chmod(0o444)
        message = (f"tagger: error: {target}: is read-only (mode 0444), not replaced; "
                   f"make it writable or choose another {option}\n")
    else:
        target = out / "missing" / "f.txt"
        message = f"tagger: error: {target}: no such directory: {out / 'missing'}; create it or choose another {option}\n"
    for extra in ([], ["--test", str(tiny_corpus)]):
        r = CliRunner().invoke(cli, ["evaluate", "--corpus", str(tiny_corpus), "--no-bib-eval", option, str(target),
                                     *extra])
        assert r.exit_code == 2 and r.output == message, r.output
    assert sorted(p.name for p in out.iterdir()) == (["kept.txt"] if problem == "read-only file" else [])
    if problem == "read-only file":
        assert target.read_text() == "mine\n" and target.stat().st_mode & 0o777 == 0o444
    assert sorted(p.name for p in tiny_corpus.parent.iterdir()) == ["tiny.jsonl"]


@pytest.mark.parametrize("option", ["--json", "--per-label", "--html"])
def test_standard_output_and_a_folder_are_no_output_file(tmp_path, tiny_corpus, monkeypatch, option):
    _no_work(monkeypatch)
    for target, message in [("-", f"{option} -: standard output carries the text report; give {option} a file name"),
                            (str(tmp_path), f"{tmp_path}: is a directory; {option} needs a file name")]:
        r = CliRunner().invoke(cli, ["evaluate", "--corpus", str(tiny_corpus), "--no-bib-eval", option, target])
        assert r.exit_code == 2 and r.output == f"tagger: error: {message}\n", r.output


def test_a_read_only_model_card_is_refused_before_any_work(tmp_path, tiny_corpus, small_model_dir, monkeypatch):
    import shutil

    _no_work(monkeypatch)
    model = tmp_path / "m"
    shutil.copytree(small_model_dir, model)
    card = model / "README.md"
    card.write_text("# my card\n")
    card.chmod(0o444)
    r = CliRunner().invoke(cli, ["evaluate", "--corpus", str(tiny_corpus), "--no-bib-eval", "--card", str(model)])
    assert r.exit_code == 2 and r.output == (f"tagger: error: {card}: is read-only (mode 0444), not replaced; "
                                             "make it writable or choose another --card\n"), r.output
    assert card.read_text() == "# my card\n"
    assert sorted(p.name for p in model.iterdir()) == sorted({p.name for p in small_model_dir.iterdir()} | {"README.md"})


def test_evaluate_writes_json_and_tsv_atomically(tmp_path, tiny_corpus, small_model_dir, monkeypatch):
    """--json and --per-label replace their files as -o does: the whole file written beside
    it, then renamed onto it (a new inode, the old file's mode); the JSON is the result."""
    import os

    import tagger.evaluation.crossval as ev

    got, renames = [], []
    real_evaluate, real_replace = ev.evaluate_model, os.replace

    def spy_evaluate(*a, **k):
        got.append(real_evaluate(*a, **k))
        return got[-1]

    def spy_replace(src, dst):
        renames.append((os.path.basename(src), os.path.basename(dst), os.path.getsize(src)))
        real_replace(src, dst)

    monkeypatch.setattr(ev, "evaluate_model", spy_evaluate)
    monkeypatch.setattr(os, "replace", spy_replace)
    js, tsv = tmp_path / "f.json", tmp_path / "p.tsv"
    js.write_text("old\n")
    js.chmod(0o640)
    inode = js.stat().st_ino
    r = CliRunner().invoke(cli, ["evaluate", "--test", str(tiny_corpus), "--model", str(small_model_dir),
                                 "--no-bib-eval", "--json", str(js), "--per-label", str(tsv)])
    assert r.exit_code == 0, r.output
    assert len(got) == 1
    result = json.loads(js.read_text())
    assert result == json.loads(json.dumps(got[0])) and result["tagger"]["all"]["all"]["documents"] == 12
    rows = [line.split("\t") for line in tsv.read_text().splitlines()]
    assert rows[0] == ["label", "support", "tp", "fp", "fn", "precision", "recall", "f1"]
    assert rows[1:] == [[str(x[k]) for k in rows[0]] for x in got[0]["tagger"]["per_label"]]
    assert [(d, n) for _, d, n in renames] == [("f.json", js.stat().st_size), ("p.tsv", tsv.stat().st_size)]
    assert all(src.startswith(f".{d}.") and src.endswith(".tmp") for src, d, _ in renames)
    assert js.stat().st_ino != inode and js.stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.json", "in", "p.tsv"]


# --- evaluate --first -----------------------------------------------------------------------

def test_first_goes_with_cross_validation_not_test(tiny_corpus, monkeypatch):
    _no_work(monkeypatch)
    r = CliRunner().invoke(cli, ["evaluate", "--test", str(tiny_corpus), "--first", "5", "--no-bib-eval"])
    assert r.exit_code == 2 and r.output == "tagger: error: --first goes with cross-validation, not --test\n"


@settings(max_examples=25, deadline=None)
@given(st.integers(2, 40))
def test_first_must_be_below_the_corpus_size(tmp_path_factory, n):
    """--first N on a corpus of 12: refused (before the cross-validation) unless N < 12; below,
    the cross-validation is asked for the first N rows."""
    import tagger.evaluation.crossval as ev
    from conftest import CORPUS

    d = tmp_path_factory.mktemp("first")
    corpus = d / "c.jsonl"
    corpus.write_text("".join(CORPUS.read_text(encoding="utf-8").splitlines(keepends=True)[:12]), encoding="utf-8")
    asked = []

    def stub(*a, **k):
        asked.append(k["first"])
        raise SystemExit(0)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ev, "cross_validate", stub)
        r = CliRunner().invoke(cli, ["evaluate", "--corpus", str(corpus), "--no-bib-eval", "--folds", "2",
                                     "--first", str(n)])
    if n >= 12:
        assert r.exit_code == 2 and r.stderr == f"tagger: error: --first {n}: the corpus has only 12 examples\n"
        assert asked == []
    else:
        assert r.exit_code == 0 and asked == [n], r.output
