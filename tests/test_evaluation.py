import json

import numpy as np
import pytest
from click.testing import CliRunner

from tagger.cli import cli
from tagger.evaluation import cross_validate, format_report
from tagger.metrics import per_label, prf, ranking
from tagger.taxonomy import parse_taxonomy

from conftest import write_jsonl
from test_taxonomy import MINI


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


@pytest.fixture(scope="module")
def small_cv(corpus_sample, taxonomy):
    recs = corpus_sample[::5]
    return cross_validate(recs, taxonomy, k=3, inner_k=2, baseline=True, num_rounds=10)


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


def test_report_uses_annifs_names(small_cv, taxonomy):
    text = format_report(small_cv, taxonomy)
    for name in ("F1 score (microavg)", "F1 score (subj avg)", "F1 score (doc avg)", "NDCG", "Precision@1"):
        assert name in text
    assert "uniform random arXiv sample only" in text
    heads = text.splitlines()[1:3]  # facet ids whole, then which system each column is
    assert heads[0].split() == [c for c in ["all"] + [f.id for f in taxonomy.facets] for _ in range(2)]
    assert heads[1].split() == ["tagger", "baseline"] * (1 + len(taxonomy.facets))


def test_evaluate_test_file_card_and_info(tmp_path, corpus_records, small_model_dir):
    import shutil

    test = write_jsonl(tmp_path / "t.jsonl", [{k: r[k] for k in ("id", "title", "abstract", "labels", "annotator", "sample")}
                                              for r in corpus_records[1::9]])
    model = tmp_path / "m"
    shutil.copytree(small_model_dir, model)
    r = CliRunner().invoke(cli, ["evaluate", "--test", str(test), "--model", str(model), "--json", str(tmp_path / "f.json"),
                                 "--per-label", str(tmp_path / "p.tsv"), "--card", str(model)])
    assert r.exit_code == 0, r.output
    assert "F1 score (microavg)" in r.output
    figs = json.loads((tmp_path / "f.json").read_text())
    assert 0 < figs["tagger"]["all"]["all"]["f1_micro"] <= 1
    rows = (tmp_path / "p.tsv").read_text().splitlines()
    assert rows[0] == "label\tsupport\ttp\tfp\tfn\tprecision\trecall\tf1" and len(rows) == 41
    r = CliRunner().invoke(cli, ["info", str(model)])
    assert r.exit_code == 0 and r.output.startswith("# Model card") and "modality:text" in r.output


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
