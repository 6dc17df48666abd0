"""Multi-label quality figures, computed with scikit-learn's metrics.

All functions take ``Y`` (n_docs, n_labels) 0/1 ints (the hand tags) and either predicted
0/1 ``T`` of the same shape or probabilities ``P`` plus thresholds.  Averages follow
scikit-learn's definitions: *micro* pools every (document, label) decision, *macro* is the
unweighted mean over labels (labels with no true and no predicted positive count as F1 = 0,
``zero_division=0``), *samples* is the mean over documents.  Ranking figures (precision@k,
F1@5, NDCG) follow Annif's ``eval`` (rank all labels by probability).
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


def scores_by_facet(Y, P, taxonomy, thresholds) -> dict:
    """``{"all": {...}, "<facet>": {...}}`` of :func:`prf` figures (rounded to 4 places)."""
    T = decide(P, thresholds, taxonomy)
    labels = taxonomy.label_ids
    out = {"all": {k: round(v, 4) for k, v in prf(Y, T).items()}}
    for f in taxonomy.facets:
        cols = [labels.index(lb.id) for lb in f.labels]
        out[f.id] = {k: round(v, 4) for k, v in prf(Y[:, cols], T[:, cols]).items()}
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
