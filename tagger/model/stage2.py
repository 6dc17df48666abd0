"""Label dependencies: a second stage over the first stage's scores of every label.

For each label, an L2 logistic regression reads the logits of all L first-stage probabilities
(so ``method:cnn`` may lean on ``modality:image``) and gives the label's final probability.
It is trained on out-of-fold first-stage probabilities (each row scored by a first stage that
did not see it), never on the first stage's fit to its own training rows.  At label time it is
one (n, L) x (L, L) product in numpy: ``sigmoid(logit(P1) @ W.T + b)``.

Saved as ``stage2.npz`` (``W`` (L, L), ``b`` (L,), float64), columns in the model's label order.
"""

from __future__ import annotations

#: regularisation of the second-stage regressions (inverse strength, scikit-learn's C)
STAGE2_C = 1.0
#: first-stage probabilities are clipped to [EPS, 1 - EPS] before the logit
EPS = 1e-6


def logits(P):
    """Logits of probabilities ``P`` (any shape), clipped to +-ln((1 - EPS) / EPS)."""
    import numpy as np

    P = np.clip(P, EPS, 1 - EPS)
    return np.log(P / (1 - P))


def apply(P, W, b):
    """Second-stage probabilities (n, L) from first-stage ``P`` (n, L) and the weights."""
    import numpy as np

    return 1.0 / (1.0 + np.exp(-(logits(P) @ W.T + b)))


def fit(P, Y, C: float = STAGE2_C):
    """``(W, b)`` of the regressions of every label's ``Y`` (n, L) 0/1 on ``logits(P)``
    (P: (n, L) out-of-fold first-stage probabilities).  A label constant in ``Y`` keeps its
    first-stage score (weight 1 on itself)."""
    import numpy as np
    from sklearn.linear_model import LogisticRegression

    L = Y.shape[1]
    Z = logits(P)
    W, b = np.zeros((L, L)), np.zeros(L)
    for j in range(L):
        y = Y[:, j]
        if y.min() == y.max():
            W[j, j] = 1.0
            continue
        lr = LogisticRegression(C=C, max_iter=2000).fit(Z, y)
        W[j], b[j] = lr.coef_[0], lr.intercept_[0]
    return W, b


def crossfit(P, Y, folds, C: float = STAGE2_C):
    """Out-of-fold second-stage probabilities (n, L): each row's from regressions fitted on the
    other rows of ``P``/``Y``, over ``folds`` ((train_idx, test_idx) pairs covering every row),
    for tuning thresholds on scores of unseen rows."""
    import numpy as np

    out = np.zeros_like(P, dtype=np.float64)
    for tr, te in folds:
        out[te] = apply(P[te], *fit(P[tr], Y[tr], C))
    return out


def save(path, W, b) -> None:
    """Write ``stage2.npz``."""
    import numpy as np

    with open(path, "wb") as fh:
        np.savez_compressed(fh, W=W, b=b)


def load(path):
    """``(W, b)`` from ``stage2.npz``, loaded without pickle."""
    import numpy as np

    with np.load(path, allow_pickle=False) as z:
        return z["W"], z["b"]
