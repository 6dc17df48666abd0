"""Probe: the linear base alone, with the text space's components at a weight (issue 18).

The tagger's linear base (the same stemmed TF-IDF as ``tagger train``, every min_df-2 term;
one L2 logistic regression per binary label, C = ``training.LINEAR_C``, liblinear) with the
packaged text space's components appended, multiplied by a weight ``w`` (0: no space).
5-fold out of fold (fold seed 0), thresholds tuned on them, micro/macro-F1 on the corpus,
``field-uniform`` and before 2010; bib-eval by ``part``, scored by the regressions fitted on
all rows.  Exclusive facets are scored per label as the screens do (one vs rest).

Usage (repository root; TAGGER_SHARED names the shared folder)::

    python benchmarks/probe_linear_space.py OUT.jsonl W [W ...] [--space DIR]

``--space DIR``: another space (``tagger space build``) instead of the packaged one.
"""
import json
import sys
import time

import numpy as np

sys.path.insert(0, ".")

from tagger.evaluation.bibeval import load_bib_eval  # noqa: E402
from tagger.model import training  # noqa: E402
from tagger.model.features import fit_tfidf  # noqa: E402
from tagger.model.training import label_matrix, stratified_folds, tune_thresholds  # noqa: E402
from tagger.taxonomy import load_taxonomy  # noqa: E402
from tagger.text import document_text  # noqa: E402

sys.path.insert(0, "benchmarks")
from screen_space import micro_macro  # noqa: E402


def lr_scores(X, Y, Xte):
    """Probabilities (len(Xte), L) of one L2 logistic regression per label fitted on X, Y."""
    from sklearn.linear_model import LogisticRegression

    P = np.zeros((Xte.shape[0], Y.shape[1]))
    for j in range(Y.shape[1]):
        y = Y[:, j]
        if y.min() == y.max():
            P[:, j] = float(y[0])
            continue
        lr = LogisticRegression(C=training.LINEAR_C, solver="liblinear", max_iter=2000).fit(X, y)
        P[:, j] = lr.predict_proba(Xte)[:, 1]
    return P


def features(tr_texts, te_texts, space, w):
    """(X_train, X_test) csr: TF-IDF fitted on ``tr_texts``, then ``w`` times the components."""
    import scipy.sparse as sp

    feats, X = fit_tfidf(tr_texts)
    Xte = feats.transform_csr(te_texts)
    if w:
        X = sp.hstack([X, sp.csr_matrix(w * space.transform(tr_texts))], format="csr")
        Xte = sp.hstack([Xte, sp.csr_matrix(w * space.transform(te_texts))], format="csr")
    return X.tocsr(), Xte.tocsr()


def main(out, weights, space_dir="models/space"):
    from tagger.model.space import TextSpace

    tax = load_taxonomy("taxonomy.yaml")
    recs = [json.loads(line) for line in open("fixtures/corpus.jsonl", encoding="utf-8")]
    texts = [document_text(r) for r in recs]
    Y = label_matrix(recs, tax.label_ids)
    brows, _ = load_bib_eval("fixtures/bib-eval.jsonl", tax)
    btexts = [document_text(r) for r in brows]
    BY = label_matrix(brows, tax.label_ids)
    bpart = np.array([r.get("part") for r in brows])
    space = TextSpace.load(space_dir)
    masks = {"all": np.ones(len(recs), bool),
             "field-uniform": np.array([r.get("sample") == "field-uniform" for r in recs]),
             "before-2010": np.array([(r.get("year") or 9999) < 2010 for r in recs])}
    for w in weights:
        t0 = time.time()
        P = np.zeros(Y.shape)
        for tr, te in stratified_folds(Y, 5, 0):
            X, Xte = features([texts[i] for i in tr], [texts[i] for i in te], space, w)
            P[te] = lr_scores(X, Y[tr], Xte)
        thd, _ = tune_thresholds(Y, P, tax)
        th = np.array([thd[lb] for lb in tax.label_ids])
        res = {"space": space_dir, "w": w, **{k: micro_macro(Y[m], P[m], th) for k, m in masks.items()}}
        X, Xb = features(texts, btexts, space, w)
        PB = lr_scores(X, Y, Xb)
        for part in ("ml", "outside-ml"):
            m = bpart == part
            res[f"bib-{part}"] = micro_macro(BY[m], PB[m], th)
        res["seconds"] = round(time.time() - t0)
        print(json.dumps(res), flush=True)
        with open(out, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(res) + "\n")


if __name__ == "__main__":
    args = sys.argv[1:]
    where = args.index("--space") if "--space" in args else None
    space_dir = args[where + 1] if where is not None else "models/space"
    if where is not None:
        del args[where:where + 2]
    main(args[0], [float(w) for w in args[1:]], space_dir)
