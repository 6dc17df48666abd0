"""Compare model settings by cross-validation on the hand-tagged corpus (for choosing defaults).

Two protocols, both over several fold seeds (the issue's rule: a change is kept when micro-F1
or macro-F1 gains at least 0.005 as the mean over 3 fold seeds, no facet losing more than 0.005):

* screen (default): per seed, 5-fold out-of-fold probabilities (vectorizer and boosters refitted
  inside every training fold), thresholds tuned on those pooled OOF scores (every row shares the
  same small optimism), micro/macro F1 overall and micro-F1 per facet;
* ``--nested``: as ``tagger evaluate`` does it: in each outer fold, thresholds come from an
  inner 3-fold out-of-fold pass over the training part only, so no held-out row tunes anything.

Folds run in ``--jobs`` processes (fork; each task is one (seed, fold) fit).  Writes one JSON
line per setting: per-seed figures and their mean, seconds, and the model size of a fit.

Usage: python benchmarks/tune_model.py OUT.jsonl [--seeds 0,1,2] [--jobs 2] [--nested]
           [--corpus FILE] NAME=JSON [NAME=JSON ...]
  JSON keys: "tfidf" (features settings, e.g. {"tree_terms": 4000}), "lgbm" (LightGBM
  parameters), "rounds".  (The negation, cue, title, claim and character-n-gram features and
  the second stage screened in issue 10 were deleted: fixtures/README.md, "Second round".)
  e.g. python benchmarks/tune_model.py /tmp/t.jsonl base='{}' t4k='{"tfidf":{"tree_terms":4000}}'
"""
import argparse
import json
import multiprocessing as mp
import sys
import time

sys.path.insert(0, ".")

from tagger.corpus import load_corpus  # noqa: E402
from tagger.evaluation.metrics import decide, prf  # noqa: E402
from tagger.taxonomy import load_taxonomy  # noqa: E402
from tagger.text import document_text  # noqa: E402
from tagger.model.training import (NUM_ROUNDS, fit, fitted_proba, label_matrix, out_of_fold_proba,  # noqa: E402
                             stratified_folds, tune_thresholds)

_G = {}  # texts, Y, taxonomy: set before the pool forks


def _fit_kw(spec):
    return {"params": spec.get("lgbm"), "num_rounds": spec.get("rounds", NUM_ROUNDS), "tfidf_params": spec.get("tfidf")}


def _task(args):
    """One fold: (seed, fold number, test rows, probabilities, thresholds or None, n_features, n_trees)."""
    import numpy as np

    spec, seed, n, tr, te, nested = args
    np.random.seed(1000 * seed + n)  # liblinear draws from numpy's global state: the same per task, whichever process
    texts, Y, tax = _G["texts"], _G["Y"], _G["tax"]
    kw = _fit_kw(spec)
    tr_texts = [texts[i] for i in tr]
    th = None
    fm = fit(tr_texts, Y[tr], tax, **kw)
    if nested:  # as tagger evaluate: thresholds from an inner out-of-fold pass
        Pin = out_of_fold_proba(tr_texts, Y[tr], tax, 3, seed + 1, **kw)
        th, _ = tune_thresholds(Y[tr], Pin, tax)
    P = fitted_proba(fm, tax, [texts[i] for i in te])
    n_trees = sum(b.num_trees() for b in fm.boosters.values())
    return seed, n, te, P, th, fm.features.n_features, n_trees


def _figures(Y, T, tax):
    labels = tax.label_ids
    out = {"f1_micro": round(prf(Y, T)["f1_micro"], 4), "f1_macro": round(prf(Y, T)["f1_macro"], 4)}
    for f in tax.facets:
        cols = [labels.index(lb.id) for lb in f.labels]
        out[f"{f.id}_f1_micro"] = round(prf(Y[:, cols], T[:, cols])["f1_micro"], 4)
    return out


def run(name, spec, seeds, jobs, nested, tax, Y, save_oof=None):
    import numpy as np

    t = time.time()
    tasks = [(spec, s, n, tr, te, nested) for s in seeds for n, (tr, te) in enumerate(stratified_folds(Y, 5, s))]
    P = {s: np.zeros(Y.shape) for s in seeds}
    T = {s: np.zeros(Y.shape, dtype=np.int8) for s in seeds}
    size = None
    ctx = mp.get_context("fork")
    with ctx.Pool(jobs) as pool:
        for seed, n, te, Pf, th, n_feat, n_trees in pool.imap_unordered(_task, tasks):
            P[seed][te] = Pf
            if th is not None:
                T[seed][te] = decide(Pf, th, tax)
            size = {"n_features": n_feat, "n_trees": n_trees}
    if save_oof:
        for s in seeds:
            np.save(f"{save_oof}/{name}-seed{s}.npy", P[s])
    per_seed = {}
    for s in seeds:
        if not nested:
            th, _ = tune_thresholds(Y, P[s], tax)
            T[s] = decide(P[s], th, tax)
        per_seed[s] = _figures(Y, T[s], tax)
    keys = list(per_seed[seeds[0]])
    mean = {k: round(float(np.mean([per_seed[s][k] for s in seeds])), 4) for k in keys}
    return [{"name": name, "spec": spec, "protocol": "nested" if nested else "screen", "seeds": seeds,
             "documents": int(len(Y)), "seconds": round(time.time() - t, 1), **size, "mean": mean,
             "per_seed": per_seed}]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("settings", nargs="+", metavar="NAME=JSON")
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--nested", action="store_true")
    ap.add_argument("--corpus", default="fixtures/corpus.jsonl")
    ap.add_argument("--save-oof", metavar="DIR", help="save each seed's out-of-fold probabilities as DIR/NAME-seedS.npy")
    a = ap.parse_args(argv)
    tax = load_taxonomy("taxonomy.yaml")
    recs = load_corpus(a.corpus)
    _G.update(texts=[document_text(r) for r in recs], Y=label_matrix(recs, tax.label_ids), tax=tax)
    seeds = [int(s) for s in a.seeds.split(",")]
    for s in a.settings:
        name, spec = s.split("=", 1)
        spec = json.loads(spec)
        for row in run(name, spec, seeds, a.jobs, a.nested, tax, _G["Y"], save_oof=a.save_oof):
            print(json.dumps(row), flush=True)
            with open(a.out, "a") as fh:
                fh.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
