"""Screen text-space settings on the hand-tagged corpus and on the real-use parts (issue 18).

Single level, as ``tune_model.py`` screens: per fold seed, 5-fold out-of-fold probabilities
(vectorizer, linear base and boosters refitted inside every training fold; the text space is
fitted once without labels and never per fold), thresholds tuned on the pooled out-of-fold
scores, then micro/macro-F1 (each label thresholded on its own, exclusive facets included):

* ``all``, ``field-uniform`` (the sample), ``before-2010`` (rows with a year before 2010);
* ``bib-ml``, ``bib-outside-ml``: bib-eval by ``part``, scored by a model fitted on the whole
  corpus with each seed's thresholds (the texts are read from the shared folder);
* ``few300-*``, ``few1000-*``: trained on 300 / 1,000 random corpus rows, drawn anew for each
  seed (thresholds from a 3-fold out-of-fold pass inside them), scored on the other rows and
  on bib-eval's parts.

Every part is a list of (micro-F1, macro-F1), one per seed, and ``mean`` holds their means.

Usage (from the repository root; TAGGER_SHARED names the shared folder)::

    python benchmarks/screen_space.py OUT.jsonl SETTING [--seeds 0,1,2] [--jobs 2]

SETTING is ``none``, ``package`` (models/space) or a space directory, with ``*W`` appended to
scale the components by W (``tagger train --space-weight W``), and ``:lin`` appended when only
the linear base reads the components (``--no-space-trees``).
One JSON line per setting goes to OUT.jsonl; the out-of-fold probabilities are saved beside it
(``OUT.SETTING-seedS.npy``).
"""
import argparse
import json
import multiprocessing as mp
import os
import sys
import time

import numpy as np

sys.path.insert(0, ".")

from tagger.evaluation.bibeval import load_bib_eval  # noqa: E402
from tagger.model.training import (fit, fitted_proba, label_matrix, out_of_fold_proba,  # noqa: E402
                                   stratified_folds, tune_thresholds)
from tagger.taxonomy import load_taxonomy  # noqa: E402
from tagger.text import document_text  # noqa: E402

_G = {}  # texts, Y, taxonomy, setting: set before the pool forks (no model is fitted before it)


def space_of(setting):
    """The :class:`TextSpace` of a setting, or None."""
    name = setting.split(":")[0]
    name, _, weight = name.partition("*")
    if name == "none":
        return None
    from tagger.model.space import TextSpace

    space = TextSpace.load("models/space" if name == "package" else name)
    if weight:  # every projection (training's transform and the model's) scaled by the weight
        space.weight = float(weight)
    return space


def micro_macro(Y, P, th):
    """(micro-F1, macro-F1 over labels present in Y) of ``P >= th``, rounded to 4 places."""
    D = (P >= th).astype(int)
    tp, fp, fn = (D & Y).sum(0), (D & (1 - Y)).sum(0), ((1 - D) & Y).sum(0)
    mi = 2 * tp.sum() / max(2 * tp.sum() + fp.sum() + fn.sum(), 1)
    f1 = np.where(2 * tp + fp + fn > 0, 2 * tp / np.maximum(2 * tp + fp + fn, 1), 0.0)
    return round(float(mi), 4), round(float(f1[Y.sum(0) > 0].mean()), 4)


def _learners(setting) -> dict:
    """The keywords of ``fit`` for a setting: its space and whether the trees read it."""
    return {"space": space_of(setting), "space_in_trees": not setting.endswith(":lin")}


def _fold(args):
    tr, te, setting = args
    np.random.seed(0)
    fm = fit([_G["texts"][i] for i in tr], _G["Y"][tr], _G["tax"], **_learners(setting))
    return te, fitted_proba(fm, _G["tax"], [_G["texts"][i] for i in te])


def screen(out, setting, seeds, jobs):
    """Run one setting; returns the JSON row written to ``out``."""
    tax = load_taxonomy("taxonomy.yaml")
    recs = [json.loads(line) for line in open("fixtures/corpus.jsonl", encoding="utf-8")]
    texts = [document_text(r) for r in recs]
    Y = label_matrix(recs, tax.label_ids)
    _G.update(texts=texts, Y=Y, tax=tax)
    brows, _ = load_bib_eval("fixtures/bib-eval.jsonl", tax)
    btexts = [document_text(r) for r in brows]
    BY = label_matrix(brows, tax.label_ids)
    bpart = np.array([r.get("part") for r in brows])
    res = {"setting": setting, "n": len(recs), "seeds": seeds}
    t0 = time.time()
    masks = {"all": np.ones(len(recs), bool),
             "field-uniform": np.array([r.get("sample") == "field-uniform" for r in recs]),
             "before-2010": np.array([(r.get("year") or 9999) < 2010 for r in recs])}
    ths = []
    for seed in seeds:
        P = np.zeros(Y.shape)
        with mp.get_context("fork").Pool(jobs) as pool:
            for te, p in pool.imap_unordered(_fold, [(tr, te, setting) for tr, te in stratified_folds(Y, 5, seed)]):
                P[te] = p
        np.save(f"{out}.{setting.replace('/', '_')}-seed{seed}.npy", P)
        th_d, _ = tune_thresholds(Y, P, tax)
        ths.append(np.array([th_d[lb] for lb in tax.label_ids]))
        for k, m in masks.items():
            res.setdefault(k, []).append(micro_macro(Y[m], P[m], ths[-1]))
    kw = _learners(setting)
    fm = fit(texts, Y, tax, **kw)
    PB = fitted_proba(fm, tax, btexts)
    for th in ths:  # one model on the whole corpus, each seed's thresholds
        for part in ("ml", "outside-ml"):
            m = bpart == part
            res.setdefault(f"bib-{part}", []).append(micro_macro(BY[m], PB[m], th))
    for seed in seeds:  # the few-label draw and its inner folds follow the seed (seed 0: rng 7, as before)
        rng = np.random.default_rng(7 + seed)
        for n in (300, 1000):
            idx = rng.permutation(len(recs))
            tr, rest = idx[:n], idx[n:]
            Ptr = out_of_fold_proba([texts[i] for i in tr], Y[tr], tax, 3, seed, **kw)
            thd, _ = tune_thresholds(Y[tr], Ptr, tax)
            th_n = np.array([thd[lb] for lb in tax.label_ids])
            fm = fit([texts[i] for i in tr], Y[tr], tax, **kw)
            res.setdefault(f"few{n}-corpus", []).append(
                micro_macro(Y[rest], fitted_proba(fm, tax, [texts[i] for i in rest]), th_n))
            Pb = fitted_proba(fm, tax, btexts)
            for part in ("ml", "outside-ml"):
                m = bpart == part
                res.setdefault(f"few{n}-bib-{part}", []).append(micro_macro(BY[m], Pb[m], th_n))
    res["mean"] = {k: [round(float(np.mean([v[i] for v in vals])), 4) for i in (0, 1)]
                   for k, vals in res.items() if isinstance(vals, list) and vals and isinstance(vals[0], tuple)}
    res["seconds"] = round(time.time() - t0)
    with open(out, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(res) + "\n")
    return res


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("setting")
    ap.add_argument("--seeds", default="0")
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args(argv)
    if not os.environ.get("TAGGER_SHARED") and not os.path.isdir("../shared"):
        sys.exit("screen_space: the bib-eval texts are read from the shared folder; set TAGGER_SHARED")
    print(json.dumps(screen(a.out, a.setting, [int(s) for s in a.seeds.split(",")], a.jobs)))


if __name__ == "__main__":
    main()
