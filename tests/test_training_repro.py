"""Training: byte-identical in two processes, taxonomy thresholds, the kept model card."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from conftest import ROOT, write_jsonl

CMD = [sys.executable, "-m", "tagger"]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


@pytest.fixture(scope="module")
def small_corpus(tmp_path_factory, corpus_sample):
    rows = [{k: v for k, v in r.items() if k != "_line"} for r in corpus_sample[::6]]
    return write_jsonl(tmp_path_factory.mktemp("c") / "small.jsonl", rows)


def files(d):
    return {p.relative_to(d).as_posix(): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


@pytest.mark.slow
def test_training_twice_in_two_processes_gives_the_same_bytes(tmp_path, small_corpus):
    outs = []
    for seed in ("1", "2"):  # hash seeds differ between processes: nothing may depend on them
        out = tmp_path / f"m{seed}"
        env = {**ENV, "PYTHONHASHSEED": seed, "SOURCE_DATE_EPOCH": "1764547200"}
        r = subprocess.run(CMD + ["train", "--corpus", str(small_corpus), "--out", str(out), "--rounds", "8",
                                  "--folds", "2"], capture_output=True, env=env, timeout=900)
        assert r.returncode == 0, r.stderr
        outs.append(files(out))
    assert outs[0] == outs[1] and len(outs[0]) > 10
    assert json.loads(outs[0]["manifest.json"])["created"] == "2025-12-01T00:00:00Z"


def test_a_facet_threshold_replaces_the_tuned_ones(taxonomy):
    from dataclasses import replace

    from tagger.taxonomy import Taxonomy
    from tagger.model.training import tune_thresholds

    rng = np.random.default_rng(0)
    Y = (rng.random((200, len(taxonomy.label_ids))) < 0.3).astype(np.int8)
    P = np.clip(Y * 0.6 + rng.random(Y.shape) * 0.5, 0, 1)
    method = taxonomy.facet("method")
    own = method.labels[0]
    facets = tuple(replace(f, threshold=0.8, labels=(replace(own, threshold=0.3),) + f.labels[1:])
                   if f.id == "method" else f for f in taxonomy.facets)
    tax = Taxonomy(taxonomy.name, facets)
    th, facet_th = tune_thresholds(Y, P, tax)
    assert th[own.id] == 0.3 and all(th[lb.id] == 0.8 for lb in method.labels[1:]) and facet_th["method"] == 0.8
    tuned, _ = tune_thresholds(Y, P, taxonomy)
    assert any(tuned[lb.id] != 0.8 for lb in method.labels[1:])  # without the file's threshold: tuned
    assert tax.thresholds()[own.id] == 0.3 and len(tax.thresholds()) == len(method.labels)


def test_label_applies_the_thresholds_of_its_taxonomy(tmp_path, corpus_records):
    import yaml

    from tagger.model import Model
    from tagger.taxonomy import load_taxonomy

    tax = yaml.safe_load((ROOT / "taxonomy.yaml").read_text())
    for f in tax["facets"]:
        if f["id"] == "modality":
            f["threshold"] = 0.97
            for lb in f["labels"]:
                lb.pop("threshold", None)
    (tmp_path / "strict.yaml").write_text(yaml.safe_dump(tax, sort_keys=False))
    shipped, strict = Model.load(ROOT / "models"), Model.load(ROOT / "models", load_taxonomy(tmp_path / "strict.yaml"))
    for j, lb in enumerate(shipped.labels):
        assert strict.thresholds[j] == (0.97 if lb.startswith("modality:") else shipped.thresholds[j])
    p = write_jsonl(tmp_path / "in.jsonl", [{"id": r["id"], "abstract": r["abstract"]} for r in corpus_records[:60]])

    def run(*extra):
        out = subprocess.run(CMD + ["label", str(p), "-f", "jsonl", *extra], capture_output=True, env=ENV).stdout
        return [json.loads(line) for line in out.decode().splitlines()]

    base, narrow = run(), run("--taxonomy", str(tmp_path / "strict.yaml"))
    weak = [(r["id"], t) for r in base for t, s in r["scores"].items() if t.startswith("modality:") and s < 0.97]
    assert weak  # some modality tags of the model's own thresholds score below 0.97 ...
    for b, n in zip(base, narrow):  # ... and are gone; the other facets keep theirs
        assert [t for t in n["tags"] if t.startswith("modality:")] == [
            t for t in b["tags"] if t.startswith("modality:") and b["scores"][t] >= 0.97]
        assert [t for t in n["tags"] if not t.startswith("modality:")] == [
            t for t in b["tags"] if not t.startswith("modality:")]


def test_a_kept_model_card_gets_this_trainings_date(tmp_path, small_model_dir, corpus_sample, taxonomy):
    import shutil

    from tagger.model.modeldir import refresh_card
    from tagger.model.training import train

    d = tmp_path / "m"
    shutil.copytree(small_model_dir, d)
    manifest = json.loads((d / "manifest.json").read_text())
    card = "# Model card: x\n\nCreated 2020-01-01T00:00:00Z from 1 hand-tagged abstracts (old).\n1 TF-IDF terms, 1 trees; " \
           "versions: lightgbm 0.\n\n## Figures\n\n| all | 0.5 |\n"
    (d / "README.md").write_text(card)
    train(corpus_sample[::4], taxonomy, d, num_rounds=15, threshold_folds=0, created="2026-02-02T00:00:00Z",
          tfidf_params={"tree_terms": 2000})  # as small_model_dir: the same training
    new = (d / "README.md").read_text()
    assert new.splitlines()[2].startswith(f"Created 2026-02-02T00:00:00Z from {manifest['corpus_size']} hand-tagged")
    assert "1 TF-IDF terms, 1 trees" not in new and new.splitlines()[3].startswith(f"{manifest['n_features']} TF-IDF terms")
    assert new.endswith("## Figures\n\n| all | 0.5 |\n")  # the figures stay: the same training
    assert refresh_card(new, json.loads((d / "manifest.json").read_text())) == new


def test_retrain_message_names_the_labels_that_differ(tmp_path, small_model_dir):
    import yaml

    tax = yaml.safe_load((ROOT / "taxonomy.yaml").read_text())
    tax["facets"][0]["labels"].append({"id": tax["facets"][0]["id"] + ":audio-visual", "name": "Audio-visual",
                                       "description": "both"})
    (tmp_path / "t.yaml").write_text(yaml.safe_dump(tax, sort_keys=False))
    r = subprocess.run(CMD + ["label", "-", "--model", str(small_model_dir), "--taxonomy", str(tmp_path / "t.yaml")],
                       input=b"x\n", capture_output=True, env=ENV)
    assert r.returncode == 2 and f"labels only in the taxonomy: {tax['facets'][0]['id']}:audio-visual" in r.stderr.decode()
