"""Two pinned peers that ``tagger evaluate --baseline`` reports beside the tagger.

They are what a user could write in twenty lines of scikit-learn, fixed once so that every
figure compares with the same thing (the settings are part of the report, not tuned here):

* ``plain_lr``: ``TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True,
  stop_words="english")`` on title + ". " + abstract, one ``LogisticRegression(C=10,
  class_weight="balanced")`` per label, threshold 0.5;
* ``svm``: word 1-2-gram plus ``char_wb`` 2-5-gram TF-IDF (``min_df=2, max_df=0.9``,
  sublinear, no stemming), one ``LinearSVC(C=1, class_weight="balanced")`` per label, and one
  global decision threshold, chosen by out-of-fold micro-F1 over the training part
  (:data:`SVM_INNER_FOLDS` folds).

Each function fits on the training texts (list of str) and label matrix ``Ytr`` (n, L) int and
returns 0/1 decisions for the test texts, int8 array (len(te_texts), L).  A label constant in
the training part is predicted constant.  Imports scikit-learn.
"""

from __future__ import annotations

PLAIN_LR = {"ngram_range": (1, 2), "min_df": 2, "sublinear_tf": True, "stop_words": "english", "C": 10.0,
            "threshold": 0.5}
SVM = {"word_ngrams": (1, 2), "char_ngrams": (2, 5), "min_df": 2, "max_df": 0.9, "C": 1.0}
SVM_INNER_FOLDS = 3
NAMES = {"plain_lr": "plain TF-IDF + logistic regression", "svm": "LinearSVC, word + char n-grams"}


def _per_label(make, X, Ytr, Xte, score):
    import numpy as np

    out = np.zeros((Xte.shape[0], Ytr.shape[1]))
    for j in range(Ytr.shape[1]):
        y = Ytr[:, j]
        if y.min() == y.max():
            out[:, j] = np.inf if y[0] else -np.inf
            continue
        out[:, j] = score(make().fit(X, y), Xte)
    return out


def plain_lr(tr_texts, Ytr, te_texts):
    """Decisions of the plain TF-IDF + logistic-regression peer (see module docstring)."""
    import numpy as np
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression

    p = PLAIN_LR
    vec = TfidfVectorizer(ngram_range=p["ngram_range"], min_df=p["min_df"], sublinear_tf=p["sublinear_tf"],
                          stop_words=p["stop_words"])
    X = vec.fit_transform(tr_texts)
    Xte = vec.transform(te_texts)
    P = _per_label(lambda: LogisticRegression(C=p["C"], class_weight="balanced", solver="liblinear", max_iter=2000),
                   X, Ytr, Xte, lambda m, A: m.predict_proba(A)[:, 1])
    return (P >= p["threshold"]).astype(np.int8)


def _svm_features(tr_texts, te_texts):
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.pipeline import FeatureUnion

    s = SVM
    union = FeatureUnion([
        ("word", TfidfVectorizer(ngram_range=s["word_ngrams"], min_df=s["min_df"], max_df=s["max_df"],
                                 sublinear_tf=True)),
        ("char", TfidfVectorizer(analyzer="char_wb", ngram_range=s["char_ngrams"], min_df=s["min_df"],
                                 max_df=s["max_df"], sublinear_tf=True)),
    ])
    return union.fit_transform(tr_texts), union.transform(te_texts)


def _svm_scores(tr_texts, Ytr, te_texts):
    from sklearn.svm import LinearSVC

    X, Xte = _svm_features(tr_texts, te_texts)
    return _per_label(lambda: LinearSVC(C=SVM["C"], class_weight="balanced"), X, Ytr, Xte,
                      lambda m, A: m.decision_function(A))


def best_global_threshold(Y, S) -> float:
    """The decision threshold (one for every label) maximising micro-F1 of ``S >= t`` against
    ``Y`` (both (n, L)), over a grid from -1 to 1 in steps of 0.05; of equally good ones, the
    nearest to 0 (LinearSVC's own boundary)."""
    import numpy as np

    grid = np.round(np.arange(-1.0, 1.0001, 0.05), 2)
    f1 = []
    for t in grid:
        D = S >= t
        denom = int(D.sum()) + int(Y.sum())
        f1.append(2 * int((D & (Y == 1)).sum()) / denom if denom else 0.0)
    f1 = np.array(f1)
    best = grid[f1 == f1.max()]
    return float(best[np.argmin(np.abs(best))])


def svm(tr_texts, Ytr, te_texts, seed: int = 0):
    """Decisions of the LinearSVC peer (see module docstring); ``seed`` sets the inner folds."""
    import numpy as np

    from ..model.training import stratified_folds

    oof = np.zeros(Ytr.shape)
    for a, b in stratified_folds(Ytr, SVM_INNER_FOLDS, seed + 11):
        oof[b] = _svm_scores([tr_texts[i] for i in a], Ytr[a], [tr_texts[i] for i in b])
    t = best_global_threshold(Ytr, oof)
    return (_svm_scores(tr_texts, Ytr, te_texts) >= t).astype(np.int8)


PEERS = {"plain_lr": plain_lr, "svm": svm}
