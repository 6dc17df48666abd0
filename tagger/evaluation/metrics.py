"""Multi-label quality figures, computed with scikit-learn's metrics.

All functions take ``Y`` (n_docs, n_labels) 0/1 ints (the hand tags) and either predicted
0/1 ``T`` of the same shape or probabilities ``P`` plus thresholds.  Averages follow
scikit-learn's definitions: *micro* pools every (document, label) decision, *macro* is the
unweighted mean over labels (labels with no true and no predicted positive count as F1 = 0,
``zero_division=0``), *samples* is the mean over documents.  Ranking figures (precision@k,
F1@5, NDCG) follow Annif's ``eval`` (rank all labels by probability).

:func:`decide`, :func:`prf` and :func:`scores_by_facet` are defined in
:mod:`tagger.model.scores` (``tagger train`` reports them, and the model does not import
the evaluation) and imported here.
"""

from __future__ import annotations

from ..model.scores import decide, prf, scores_by_facet  # noqa: F401  (defined below evaluation: training uses them)


def ranking(Y, P) -> dict:
    """precision@1/3/5, F1@5 (micro F1 of the top 5 labels of each document) and NDCG."""
    import numpy as np
    from sklearn.metrics import ndcg_score, precision_recall_fscore_support

    out = {}
    order = np.argsort(-P, axis=1, kind="stable")
    for k in (1, 3, 5):
        top = order[:, :k]
        hits = np.take_along_axis(Y, top, axis=1).sum(axis=1)
        out[f"precision@{k}"] = float((hits / k).mean())
    T5 = np.zeros_like(Y)
    np.put_along_axis(T5, order[:, :5], 1, axis=1)
    out["f1@5"] = float(precision_recall_fscore_support(Y, T5, average="micro", zero_division=0)[2])
    has = Y.sum(axis=1) > 0
    out["ndcg"] = float(ndcg_score(Y[has], P[has])) if has.sum() >= 1 and Y.shape[1] > 1 else 0.0
    return out


def per_label(Y, T, labels) -> list[dict]:
    """One row per label: support, TP, FP, FN, precision, recall, F1 (scikit-learn's
    ``multilabel_confusion_matrix`` and ``precision_recall_fscore_support``)."""
    from sklearn.metrics import multilabel_confusion_matrix, precision_recall_fscore_support

    cm = multilabel_confusion_matrix(Y, T)  # (L, 2, 2): [[tn, fp], [fn, tp]]
    p, r, f, support = precision_recall_fscore_support(Y, T, average=None, zero_division=0)
    return [{"label": lb, "support": int(support[j]), "tp": int(cm[j, 1, 1]), "fp": int(cm[j, 0, 1]),
             "fn": int(cm[j, 1, 0]), "precision": round(float(p[j]), 4), "recall": round(float(r[j]), 4),
             "f1": round(float(f[j]), 4)} for j, lb in enumerate(labels)]


#: thresholds of the F1 curves: the grid ``tagger train`` tunes thresholds on (0.05..0.95 by 0.025)
CURVE_GRID = tuple(round(0.05 + 0.025 * i, 3) for i in range(37))


def _f1_columns(Y, T):
    """F1 of every column of 0/1 ``Y``/``T`` (n, L), 0 where a column has no true positive."""
    import numpy as np

    y, t = Y.astype(bool), T.astype(bool)
    tp, fp, fn = (y & t).sum(0), (~y & t).sum(0), (y & ~t).sum(0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(tp > 0, 2 * tp / (2 * tp + fp + fn), 0.0)


def threshold_curves(Y, P, thresholds, taxonomy) -> dict:
    """F1 of each label as its threshold moves over :data:`CURVE_GRID`, from probabilities
    ``P`` (n, L) and hand tags ``Y`` (n, L) 0/1.

    A label of an exclusive facet counts as predicted only where it is also its facet's most
    probable label, as :func:`decide` applies it, so each point is the F1 that threshold would
    give.  ``thresholds`` (dict by label id) is the chosen one, marked on the curve.  Returns
    ``{"grid": [t, ...], "labels": {label: {"f1": [F1 per grid point], "threshold": t,
    "f1_at_threshold": F1 at t}}}``, figures rounded to 4 places.
    """
    import numpy as np

    labels = taxonomy.label_ids
    top = decide(P, -1.0, taxonomy).astype(bool)  # threshold below every score: only the facet mask
    f1 = np.column_stack([_f1_columns(Y, top & (P >= t)) for t in CURVE_GRID])  # (L, grid)
    th = np.array([thresholds[lb] for lb in labels])
    at = _f1_columns(Y, top & (P >= th))
    return {"grid": list(CURVE_GRID), "labels": {
        lb: {"f1": [round(float(v), 4) for v in f1[j]], "threshold": round(float(th[j]), 4),
             "f1_at_threshold": round(float(at[j]), 4)} for j, lb in enumerate(labels)}}


def confused_pairs(Y, T, taxonomy, top: int = 20) -> list[dict]:
    """The label pairs of one facet most often confused: ``documents`` counts the rows where
    ``predicted`` was given but not in the hand tags while ``gold`` was in the hand tags but
    not given (``Y``/``T`` 0/1 (n, L)).  Pairs across facets are left out (a wrong modality
    beside a missed contribution is two errors, not a confusion).  The ``top`` most frequent
    pairs with at least one document, most first (ties by label order), as ``[{"predicted",
    "gold", "documents"}]``.
    """
    import numpy as np

    labels = taxonomy.label_ids
    fp = (T.astype(bool) & ~Y.astype(bool)).astype(np.int64)
    fn = (Y.astype(bool) & ~T.astype(bool)).astype(np.int64)
    counts = fp.T @ fn  # (L, L): [a, b] = rows with a given wrongly and b missed
    out = []
    for f in taxonomy.facets:
        cols = [labels.index(lb.id) for lb in f.labels]
        out += [(int(counts[a, b]), a, b) for a in cols for b in cols if a != b and counts[a, b] > 0]
    out.sort(key=lambda x: (-x[0], x[1], x[2]))
    return [{"predicted": labels[a], "gold": labels[b], "documents": n} for n, a, b in out[:top]]


def paired_bootstrap(Y, A, B, n_boot: int = 1000, seed: int = 0) -> dict:
    """Micro-F1 of decisions ``A`` minus that of ``B`` against ``Y`` (all (n, L) 0/1), with a
    95% paired bootstrap interval: documents resampled with replacement ``n_boot`` times
    (Efron & Tibshirani 1993), both systems scored on the same resample.  Returns
    ``{"diff", "lo", "hi", "documents"}`` (floats rounded to 4 places)."""
    import numpy as np

    Y, A, B = (np.asarray(x, dtype=np.int64) for x in (Y, A, B))
    n = len(Y)
    if n == 0:
        return {"diff": 0.0, "lo": 0.0, "hi": 0.0, "documents": 0}

    def counts(D):  # per document: true positives and predicted + actual positives
        return (D & Y).sum(axis=1), D.sum(axis=1) + Y.sum(axis=1)

    (ta, sa), (tb, sb) = counts(A), counts(B)

    def f1(tp, s):
        tot = s.sum(axis=-1)
        return np.where(tot > 0, 2 * tp.sum(axis=-1) / np.maximum(tot, 1), 0.0)

    diff = float(f1(ta, sa) - f1(tb, sb))
    idx = np.random.default_rng(seed).integers(0, n, size=(n_boot, n))
    d = f1(ta[idx], sa[idx]) - f1(tb[idx], sb[idx])
    lo, hi = np.percentile(d, [2.5, 97.5])
    return {"diff": round(diff, 4), "lo": round(float(lo), 4), "hi": round(float(hi), 4), "documents": int(n)}
