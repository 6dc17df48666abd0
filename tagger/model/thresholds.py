"""Per-label decision thresholds tuned on out-of-fold probabilities, and the folds that make them.

:func:`stratified_folds` splits a hand-tagged corpus for cross-validation (iterative
stratification, so that every fold holds its share of each label); :func:`tune_thresholds`
turns out-of-fold probabilities into one threshold per label, shrunk toward its facet's.
"""

from __future__ import annotations

from .inference import DEFAULT_THRESHOLD
from ..taxonomy import Taxonomy

#: a label's tuned threshold is shrunk toward its facet's: weight n_pos / (n_pos + SHRINK_K)
SHRINK_K = 10


def tune_thresholds(Y, P, taxonomy: Taxonomy, shrink_k: float = SHRINK_K) -> tuple[dict, dict]:
    """Per-label thresholds from out-of-fold probabilities.

    For each facet, one threshold maximising the facet's micro-F1 (from a grid 0.05..0.95);
    then per label the threshold maximising that label's F1, shrunk toward the facet's with
    weight ``n_pos / (n_pos + shrink_k)``, so labels with few examples stay near the facet
    value.  A threshold set in the taxonomy file replaces the tuned ones: a label's own for
    that label, a facet's for every label of the facet without its own.  Returns
    ``(thresholds by label, thresholds by facet)``.
    """
    import numpy as np

    grid = np.round(np.arange(0.05, 0.951, 0.025), 3)
    labels = taxonomy.label_ids

    def f1(tp, fp, fn):
        return 0.0 if tp == 0 else 2 * tp / (2 * tp + fp + fn)

    out, facet_th = {}, {}
    for facet in taxonomy.facets:
        cols = [labels.index(lb.id) for lb in facet.labels]
        y, p = Y[:, cols].astype(bool), P[:, cols]
        if facet.threshold is not None:
            ft = facet.threshold
        else:
            scores = [f1((y & (p >= t)).sum(), (~y & (p >= t)).sum(), (y & (p < t)).sum()) for t in grid]
            ft = float(grid[int(np.argmax(scores))]) if max(scores) > 0 else DEFAULT_THRESHOLD
        facet_th[facet.id] = ft
        for lb, j in zip(facet.labels, cols):
            if lb.threshold is not None or facet.threshold is not None:  # the taxonomy's, not tuned
                out[lb.id] = lb.threshold if lb.threshold is not None else facet.threshold
                continue
            yj, pj = Y[:, j].astype(bool), P[:, j]
            n_pos = int(yj.sum())
            if n_pos == 0:
                out[lb.id] = ft
                continue
            s = [f1((yj & (pj >= t)).sum(), (~yj & (pj >= t)).sum(), (yj & (pj < t)).sum()) for t in grid]
            best = float(grid[int(np.argmax(s))])
            w = n_pos / (n_pos + shrink_k)
            out[lb.id] = round(w * best + (1 - w) * ft, 4)
    return out, facet_th


def stratified_folds(Y, k: int, seed: int = 0):
    """``k`` (train_idx, test_idx) pairs by multi-label iterative stratification
    (Sechidis et al. 2011, via the iterative-stratification package)."""
    import numpy as np
    from iterstrat.ml_stratifiers import MultilabelStratifiedKFold

    mskf = MultilabelStratifiedKFold(n_splits=k, shuffle=True, random_state=seed)
    return list(mskf.split(np.zeros((len(Y), 1)), Y))
