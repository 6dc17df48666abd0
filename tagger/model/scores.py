"""The figures ``tagger train`` reports of its out-of-fold pass: decisions from
probabilities and thresholds (:func:`decide`) and their precision, recall and F1
(:func:`prf`, :func:`scores_by_facet`).

In :mod:`tagger.model` because training uses them and the model sits below
:mod:`tagger.evaluation` (which trains); :mod:`tagger.evaluation.metrics` re-exports them
beside the other figures, and its docstring gives the conventions (``Y``, ``T``, ``P``, the
averages).
"""

from __future__ import annotations


def decide(P, thresholds, taxonomy):
    """0/1 matrix from probabilities and per-label thresholds (a dict by label id or a float).

    Exclusive facets keep at most their most probable label.
    """
    import numpy as np

    labels = taxonomy.label_ids
    th = np.array([thresholds[lb] for lb in labels]) if isinstance(thresholds, dict) else np.full(len(labels), thresholds)
    T = (P >= th).astype(np.int8)
    for f in taxonomy.facets:
        if f.kind == "exclusive":
            cols = [labels.index(lb.id) for lb in f.labels]
            sub = P[:, cols]
            best = sub.argmax(axis=1)
            mask = np.zeros_like(sub, dtype=bool)
            mask[np.arange(len(sub)), best] = True
            T[:, cols] = T[:, cols] * mask
    return T


def prf(Y, T) -> dict:
    """Precision, recall and F1, micro-, macro- and samples-averaged (floats in [0, 1])."""
    import numpy as np
    from sklearn.metrics import precision_recall_fscore_support

    single = Y.shape[1] == 1
    if single:  # scikit-learn would read one column as "binary"; a zero column changes no
        Y, T = np.hstack([Y, np.zeros_like(Y)]), np.hstack([T, np.zeros_like(T)])  # micro/samples figure
    out = {}
    for avg in ("micro", "macro", "samples"):
        if single and avg == "macro":
            p, r, f, _ = precision_recall_fscore_support(Y[:, 0], T[:, 0], average="binary", zero_division=0)
        else:
            p, r, f, _ = precision_recall_fscore_support(Y, T, average=avg, zero_division=0)
        out[f"precision_{avg}"], out[f"recall_{avg}"], out[f"f1_{avg}"] = float(p), float(r), float(f)
    return out


def scores_by_facet(Y, P, taxonomy, thresholds) -> dict:
    """``{"all": {...}, "<facet>": {...}}`` of :func:`prf` figures (rounded to 4 places)."""
    T = decide(P, thresholds, taxonomy)
    labels = taxonomy.label_ids
    out = {"all": {k: round(v, 4) for k, v in prf(Y, T).items()}}
    for f in taxonomy.facets:
        cols = [labels.index(lb.id) for lb in f.labels]
        out[f.id] = {k: round(v, 4) for k, v in prf(Y[:, cols], T[:, cols]).items()}
    return out
