"""tagger corpus merge / agreement: merging tagged batches and inter-annotator agreement."""

import json

import pytest
from click.testing import CliRunner
from hypothesis import given, settings, strategies as st

from tagger.annotate.agreement import agreement, disagreements
from tagger.annotate.batches import read_tagged
from tagger.annotate.merge import MergeConflict, merge_batches
from tagger.cli import cli

from conftest import ROOT, write_jsonl

AGREE = ROOT / "fixtures" / "agreement"


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def rows(path):
    return [json.loads(line) for line in open(path, encoding="utf-8")]


# --- agreement ------------------------------------------------------------------------

def test_agreement_of_the_two_passes_matches_the_published_figures():
    a, b = read_tagged(str(AGREE / "pass1.jsonl")), read_tagged(str(AGREE / "pass2.jsonl"))
    first = {r["id"] for r in b if r["annotator"] in ("agent:tagger-A1", "agent:tagger-A2")}  # the first round
    a, b = [r for r in a if r["id"] in first], [r for r in b if r["id"] in first]
    res = agreement(a, b)
    g = res["groups"]["all"]
    assert res["ids_both"] == 200 and g["identical"] == 159
    # fixtures/README.md, "Agreement": all 0.975, modality 0.967, method 0.971, evaluation 0.980, contribution 0.983
    assert {k: round(v, 3) for k, v in g["micro_f1"].items()} == {
        "all": 0.975, "modality": 0.967, "method": 0.971, "evaluation": 0.980, "contribution": 0.983}
    assert len(disagreements(a, b)) == 200 - 159


def test_agreement_hand_computed():
    a = [{"id": "x1", "labels": ["f:a", "g:b"]}, {"id": "x2", "labels": ["f:a"]}, {"id": "x3", "labels": []},
         {"id": "only-a", "labels": ["f:a"]}]
    b = [{"id": "x2", "labels": ["f:a", "f:c"]}, {"id": "x1", "labels": ["f:a"]}, {"id": "x3", "labels": ["f:c"]}]
    res = agreement(a, b)
    g = res["groups"]["all"]
    assert (res["ids_both"], res["only_a"], res["only_b"]) == (3, 1, 0)
    assert res["labels"] == ["f:a", "f:c", "g:b"]
    # first as reference: TP 2 (x1 f:a, x2 f:a), FN 1 (x1 g:b), FP 2 (x2 f:c, x3 f:c): F1 = 4/7
    assert g["micro_f1"]["all"] == pytest.approx(4 / 7)
    assert g["micro_f1"]["f"] == pytest.approx(4 / 6) and g["micro_f1"]["g"] == 0.0
    # f:a: 1,1,0 vs 1,1,0: perfect; f:c: 0,0,0 vs 0,1,1: observed 1/3, by chance 1*1/3 -> 0
    assert g["labels"]["f:a"]["kappa"] == pytest.approx(1.0)
    assert g["labels"]["f:c"] == {"kappa": 0.0, "a": 0, "b": 2, "both": 0}
    assert g["labels"]["g:b"] == {"kappa": 0.0, "a": 1, "b": 0, "both": 0}
    assert g["identical"] == 0
    d = disagreements(a, b)
    assert [r["id"] for r in d] == ["x1", "x2", "x3"]
    assert d[0]["only_a"] == ["g:b"] and d[1]["only_b"] == ["f:c"] and d[2]["b"]["labels"] == ["f:c"]


def test_agreement_undefined_figures():
    a = [{"id": "x", "labels": ["f:a"]}, {"id": "y", "labels": ["f:a"]}]
    res = agreement(a, a, labels=["f:a", "g:b"])
    g = res["groups"]["all"]
    assert g["labels"]["f:a"]["kappa"] is None  # every id has it, in both: chance agreement is 1
    assert g["micro_f1"]["g"] is None and g["micro_f1"]["f"] == 1.0
    with pytest.raises(ValueError):
        agreement(a, [{"id": "z", "labels": []}])


label_sets = st.lists(st.sampled_from(["f:a", "f:b", "g:c", "g:d"]), unique=True)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(label_sets, label_sets), min_size=1, max_size=12))
def test_agreement_is_symmetric_and_one_with_itself(pairs):
    a = [{"id": f"r{i}", "labels": x} for i, (x, _) in enumerate(pairs)]
    b = [{"id": f"r{i}", "labels": y} for i, (_, y) in enumerate(pairs)]
    ab, ba = agreement(a, b), agreement(b, a)
    assert ab["labels"] == ba["labels"]
    for k, v in ab["groups"]["all"]["micro_f1"].items():
        w = ba["groups"]["all"]["micro_f1"][k]
        assert (v is None and w is None) or v == pytest.approx(w)
    for lb, v in ab["groups"]["all"]["labels"].items():
        w = ba["groups"]["all"]["labels"][lb]
        assert (v["kappa"] is None) == (w["kappa"] is None)
        if v["kappa"] is not None:
            assert v["kappa"] == pytest.approx(w["kappa"])
    same = agreement(a, a)["groups"]["all"]
    assert all(v in (None, 1.0) for v in same["micro_f1"].values())
    assert all(v["kappa"] in (None, 1.0) for v in same["labels"].values())
    assert len(disagreements(a, b)) == sum(set(x) != set(y) for x, y in pairs)


def test_agreement_cli_by_sample_and_disagreements(tmp_path):
    a = write_jsonl(tmp_path / "a.jsonl", [
        {"id": "1", "labels": ["f:a"], "annotator": "ann", "sample": "s1", "abstract": "One."},
        {"id": "2", "labels": ["f:a", "f:b"], "annotator": "ann", "sample": "s2"},
        {"id": "3", "labels": ["f:b"], "annotator": "ann", "sample": "s2"}])
    b = write_jsonl(tmp_path / "b.jsonl", [
        {"id": "1", "labels": ["f:a"], "annotator": "bob"},
        {"id": "2", "labels": ["f:a"], "annotator": "bob"},
        {"id": "3", "labels": ["f:b"], "annotator": "bob"}])
    out = tmp_path / "dis.jsonl"
    r = run("corpus", "agreement", a, b, "--by", "sample", "--disagreements", out)
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert "3 ids in both" in lines[0] and "identical label sets: 2 of 3" in lines[0]
    head = next(line for line in lines if line.startswith("micro-F1")).split()
    assert head[1:] == ["all", "(3)", "s1", "(1)", "s2", "(2)"]
    # all: TP 3, FN 1 -> 6/7; s1: 1.0; s2: TP 2, FN 1 -> 4/5
    assert next(line for line in lines if line.startswith("all ")).split()[1:] == ["0.857", "1.000", "0.800"]
    kb = next(line for line in lines if line.startswith("f:b ")).split()
    assert kb[1:] == ["0.400", "n/a", "0.000", "2", "1", "1"]
    d = rows(out)
    assert [x["id"] for x in d] == ["2"] and d[0]["a"] == {"file": str(a), "annotator": "ann", "labels": ["f:a", "f:b"]}
    assert d[0]["only_a"] == ["f:b"] and d[0]["only_b"] == []
    js = json.loads(run("corpus", "agreement", a, b, "--json").stdout)
    assert js["groups"]["all"]["micro_f1"]["all"] == pytest.approx(6 / 7)


def test_agreement_cli_errors(tmp_path):
    a = write_jsonl(tmp_path / "a.jsonl", [{"id": "1", "labels": ["modality:text"]}])
    b = write_jsonl(tmp_path / "b.jsonl", [{"id": "2", "labels": []}])
    r = run("corpus", "agreement", a, b)
    assert r.exit_code == 2 and "no id in common" in r.stderr and "Traceback" not in r.output
    r = run("corpus", "agreement", a, tmp_path / "missing.jsonl")
    assert r.exit_code == 2 and r.stderr.strip() == f"tagger: error: {tmp_path / 'missing.jsonl'}: no such file"
    c = write_jsonl(tmp_path / "c.jsonl", [{"id": "1", "labels": ["modality:txt"]}])
    r = run("corpus", "agreement", a, c, "--taxonomy", ROOT / "taxonomy.yaml")
    assert r.exit_code == 2 and f"{c}:1: 1: unknown label 'modality:txt'" in r.stderr
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "1", "labels": "modality:text"}\n')
    r = run("corpus", "agreement", a, bad)
    assert r.exit_code == 2 and f"{bad}:1: 1: needs 'labels'" in r.stderr


# --- merge ----------------------------------------------------------------------------

def test_merge_of_the_passes_gives_the_corpus_rows(tmp_path):
    out = tmp_path / "merged.jsonl"
    r = run("corpus", "merge", AGREE / "pass1.jsonl", AGREE / "pass2.jsonl", "-o", out,
            "--adjudicated", AGREE / "adjudicated.jsonl")
    assert r.exit_code == 0, r.output
    n, n_adj = len(rows(AGREE / "pass1.jsonl")), len(rows(AGREE / "adjudicated.jsonl"))
    assert n >= 200 and n_adj >= 41  # the first round's 200 and 41, and what later rounds added
    assert f"{n} rows from 2 files ({n} tagged by more than one hand, {n_adj} adjudicated)" in r.stderr
    corpus = {x["id"]: x for x in rows(ROOT / "fixtures" / "corpus.jsonl")}
    bib_eval = {f'{x["file"]}#{x["key"]}': x for x in rows(ROOT / "fixtures" / "bib-eval.jsonl")} \
        if (ROOT / "fixtures" / "bib-eval.jsonl").exists() else {}
    merged = rows(out)
    assert len(merged) == n
    for m in merged:  # the corpus (or bib-eval) carries exactly these labels and names these hands
        row = corpus.get(m["id"]) or bib_eval[m["id"]]
        assert (m["labels"], m["annotator"]) == (sorted(row["labels"]), row["annotator"])
    assert sum(", adjudicated agent:adjudicator-ADJ" in m["annotator"] for m in merged) == n_adj


def test_merge_refuses_disagreements_and_leaves_output(tmp_path):
    a = write_jsonl(tmp_path / "a.jsonl", [
        {"id": "1", "title": "T", "abstract": "Text one.", "labels": ["f:a"], "annotator": "ann"},
        {"id": "2", "abstract": "Text two.", "labels": ["f:a"], "annotator": "ann"},
        {"id": "3", "abstract": "Text three.", "labels": ["f:b", "f:a"], "annotator": "ann"}])
    b = write_jsonl(tmp_path / "b.jsonl", [
        {"id": "3", "abstract": "Text  three.", "labels": ["f:a", "f:b"], "annotator": "bob", "source": "x"},
        {"id": "2", "labels": ["f:b"], "annotator": "bob"},
        {"id": "4", "abstract": "Four.", "labels": [], "annotator": "bob", "suggested": True}])
    out = tmp_path / "out.jsonl"
    out.write_text("kept\n")
    r = run("corpus", "merge", a, b, "-o", out)
    assert r.exit_code == 2
    assert r.stderr.startswith(f"tagger: error: 1 id tagged with different labels in {a} and {b}, "
                               "not settled by --adjudicated: 2 (")
    assert out.read_text() == "kept\n"
    adj = write_jsonl(tmp_path / "adj.jsonl", [{"id": "2", "labels": ["f:b", "f:a"], "annotator": "cy"},
                                               {"id": "9", "labels": [], "annotator": "cy"}])
    r = run("corpus", "merge", a, b, "-o", out, "--adjudicated", adj)
    assert r.exit_code == 0, r.output
    assert f"tagger: warning: {adj}:2: 9: in none of the files merged; ignored" in r.stderr
    assert rows(out) == [
        {"id": "1", "title": "T", "abstract": "Text one.", "labels": ["f:a"], "annotator": "ann"},
        {"id": "2", "abstract": "Text two.", "labels": ["f:a", "f:b"], "annotator": "ann+bob, adjudicated cy"},
        {"id": "3", "abstract": "Text three.", "labels": ["f:a", "f:b"], "annotator": "ann+bob", "source": "x"},
        {"id": "4", "abstract": "Four.", "labels": [], "annotator": "bob", "suggested": True}]


def test_merge_input_errors(tmp_path):
    a = write_jsonl(tmp_path / "a.jsonl", [{"id": "1", "abstract": "One text.", "labels": [], "annotator": "ann"}])
    b = write_jsonl(tmp_path / "b.jsonl", [{"id": "1", "abstract": "Another text.", "labels": [], "annotator": "bob"}])
    with pytest.raises(Exception, match=rf"{b}:1: 1: a different abstract from the one at {a}:1"):
        merge_batches([str(a), str(b)])
    dup = write_jsonl(tmp_path / "dup.jsonl", [{"id": "1", "labels": [], "annotator": "x"},
                                               {"id": "1", "labels": [], "annotator": "x"}])
    r = run("corpus", "merge", dup, "-o", tmp_path / "o.jsonl")
    assert r.exit_code == 2 and r.stderr.strip() == f"tagger: error: {dup}:2: 1: duplicate id (first at line 1)"
    assert not (tmp_path / "o.jsonl").exists()
    anon = write_jsonl(tmp_path / "anon.jsonl", [{"id": "1", "labels": []}])
    r = run("corpus", "merge", anon, "-o", tmp_path / "o.jsonl")
    assert r.exit_code == 2 and "no 'annotator'" in r.stderr
    with pytest.raises(MergeConflict) as e:
        merge_batches([str(a), str(write_jsonl(tmp_path / "c.jsonl", [{"id": "1", "labels": ["f:a"], "annotator": "c"}]))])
    assert e.value.ids == ["1"]


@settings(max_examples=30, deadline=None)
@given(st.lists(label_sets, min_size=1, max_size=8))
def test_merging_a_batch_with_itself_changes_only_label_order(tmp_path_factory, sets):
    d = tmp_path_factory.mktemp("m")
    src = [{"id": f"r{i}", "labels": s, "annotator": "ann", "abstract": f"text {i}"} for i, s in enumerate(sets)]
    p = str(write_jsonl(d / "a.jsonl", src))
    assert merge_batches([p, p]) == [{**r, "labels": sorted(r["labels"])} for r in src]


def test_output_that_is_no_regular_file_is_never_replaced(tmp_path):
    import os
    import threading

    src = write_jsonl(tmp_path / "a.jsonl", [{"id": "1", "labels": ["f:a"], "annotator": "ann"}])
    expect = '{"id": "1", "labels": ["f:a"], "annotator": "ann"}\n'
    real, link = tmp_path / "real.jsonl", tmp_path / "link.jsonl"
    real.write_text("old\n")
    link.symlink_to(real)
    assert run("corpus", "merge", src, "-o", link).exit_code == 0
    assert link.is_symlink() and real.read_text() == expect  # the target rewritten, the link kept
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(open(fifo).read()))
    reader.start()
    r = run("corpus", "merge", src, "-o", fifo)
    reader.join(10)
    assert r.exit_code == 0 and got == [expect]
    import stat

    assert stat.S_ISFIFO(os.stat(fifo).st_mode)  # written to, not replaced by a file
