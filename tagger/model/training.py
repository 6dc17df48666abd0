"""Training: TF-IDF + a linear base + LightGBM boosters per label, thresholds tuned out of fold.

:func:`fit` fits one model in memory (:class:`FittedModel`); :func:`out_of_fold_proba` and
:func:`tune_thresholds` give per-label thresholds from scores of rows held out of the fit;
:func:`train` does both and writes a model directory (:func:`tagger.model.modeldir.write_model_dir`).
Imports scikit-learn, lightgbm and iterative-stratification inside the functions that need them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from .features import DEFAULT_TFIDF, TfidfFeatures, feature_version
from .inference import DEFAULT_THRESHOLD, MODEL_FORMAT, Model
from .thresholds import SHRINK_K, stratified_folds, tune_thresholds  # noqa: F401 (re-exported)
from .space import DEFAULT_IN_TREES
from ..taxonomy import Taxonomy

#: LightGBM parameters for small hand-tagged corpora (hundreds to a few thousand abstracts,
#: tens of thousands of sparse TF-IDF columns, labels with as few as 15 positives):
#: - num_leaves=8 / max_depth=4: shallow trees; deeper ones memorise the few positives;
#: - min_data_in_leaf=3, min_sum_hessian_in_leaf=1e-3: a rare label's positives can still
#:   form a leaf (the default 20 would forbid most splits on a label with 15 positives);
#: - feature_fraction=0.5 with a fixed seed: decorrelates trees over the many weak n-grams;
#: - lambda_l2=1: mild shrinkage of leaf values on small leaves;
#: - num_threads=1, deterministic=True, seed: identical boosters on every run and machine;
#: - 60 rounds at learning_rate 0.15: chosen by cross-validation (fixtures/README.md), and kept
#:   small because prediction cost grows linearly with the tree count (perf-notes.md).
LGBM_PARAMS = {
    "learning_rate": 0.15,
    "num_leaves": 8,
    "max_depth": 4,
    "min_data_in_leaf": 3,
    "min_sum_hessian_in_leaf": 1e-3,
    "feature_fraction": 0.5,
    "lambda_l2": 1.0,
    "max_bin": 15,
    "num_threads": 1,
    "deterministic": True,
    "force_col_wise": True,
    "seed": 13,
    "verbose": -1,
}
NUM_ROUNDS = 60
#: Each binary label's trees boost from a linear base: an L2 logistic regression on the same
#: TF-IDF row (C=10), whose log-odds are the boosters' ``init_score``.  During training the
#: init score of every example is the out-of-fold log-odds of LINEAR_FOLDS regressions fitted
#: without it, so the trees learn what the linear model gets wrong on unseen text, not its
#: training fit.  The prediction is ``linear log-odds + trees``.  Cross-validated on the
#: corpus this raised micro-F1 from 0.802 to 0.814 and macro-F1 from 0.695 to 0.724 over
#: trees alone (and beat the regression alone, 0.798 / 0.696): fixtures/README.md.
LINEAR_C = 10.0
LINEAR_FOLDS = 5
#: folds of the out-of-fold pass that tunes thresholds in ``tagger train``
THRESHOLD_FOLDS = 5
#: whether the LightGBM boosters read the text space's components too (True), or only the
#: linear base does and the trees split on the TF-IDF terms alone (False: the default, kept by
#: the 3-seed screen of fixtures/README.md, "The text space at a weight")
SPACE_IN_TREES = DEFAULT_IN_TREES


def label_matrix(records, labels: list[str]):
    """Binary indicator matrix, shape (n_records, L), int8, from each record's ``labels``."""
    import numpy as np

    index = {lb: j for j, lb in enumerate(labels)}
    Y = np.zeros((len(records), len(labels)), dtype=np.int8)
    for i, r in enumerate(records):
        for lb in r.get("labels", []):
            if lb in index:
                Y[i, index[lb]] = 1
    return Y


@dataclass
class FittedModel:
    """What :func:`fit` returns: features, one booster per label/exclusive facet, and the
    raw-output layout that :class:`Model` and :mod:`tagger.model.forest` use."""

    features: TfidfFeatures
    boosters: dict  # booster file stem -> lightgbm.Booster
    binary_outputs: dict  # label -> raw column
    exclusive_outputs: dict  # facet -> [raw columns: none, *labels]
    booster_outputs: dict  # booster file stem -> raw columns of its classes
    bias: list
    n_outputs: int
    linear: tuple = None  # (W (n_outputs, n_features), b (n_outputs,)): the linear base
    space: object = None  # the text space (tagger.model.space.TextSpace) whose components follow the terms
    tree_columns: object = None  # int64 (n_tree_terms,): the term columns the boosters read, None: all
    space_in_trees: bool = False  # whether the boosters read the space's components after the terms


def _linear_base(X, y, folds, C=LINEAR_C):
    """Out-of-fold log-odds (n,) of L2 logistic regressions on ``X``, and the (w, b) of one
    fitted on all rows.  A label constant within a training part gets its prior log-odds."""
    import numpy as np
    from sklearn.linear_model import LogisticRegression

    def fit_lr(Xa, ya):
        if ya.min() == ya.max():
            return np.zeros(X.shape[1]), (8.0 if ya[0] else -8.0)
        lr = LogisticRegression(C=C, solver="liblinear", max_iter=2000).fit(Xa, ya)
        return lr.coef_[0].astype(np.float64), float(lr.intercept_[0])

    oof = np.zeros(X.shape[0])
    for a, b in folds:
        w, b0 = fit_lr(X[a], y[a])
        oof[b] = X[b] @ w + b0
    w, b0 = fit_lr(X, y)
    return oof, w, b0


def fit(texts, Y, taxonomy: Taxonomy, params=None, num_rounds=NUM_ROUNDS, tfidf_params=None,
        linear=True, space=None, space_in_trees=None) -> FittedModel:
    """Fit TF-IDF and the boosters on ``texts`` (list of str) and ``Y`` (n, L) int.

    Binary boosters per label of a multi-label facet; one multiclass booster (classes: none,
    then the facet's labels) per exclusive facet.  A label with no positive example gets no
    booster and a constant raw score of -30 (probability ~1e-13).  ``linear`` (default True)
    gives every binary label's trees the logistic-regression base of :data:`LINEAR_C`.
    ``space`` (a :class:`tagger.model.space.TextSpace`, fitted without labels) adds its ``k`` dense
    components after the TF-IDF columns, for the linear base, and for the trees too unless
    ``space_in_trees`` (default :data:`SPACE_IN_TREES`) is False.
    """
    import lightgbm as lgb
    import numpy as np

    from .features import fit_tfidf

    p = {**LGBM_PARAMS, **(params or {})}
    feats, X = fit_tfidf(texts, tfidf_params)
    X = X.astype(np.float64).tocsr()
    tree_terms = {**DEFAULT_TFIDF, **(tfidf_params or {})}.get("tree_terms")
    tree_cols = tree_columns(X, tree_terms)
    if space is not None:
        import scipy.sparse as sp

        X = sp.hstack([X, sp.csr_matrix(space.transform(texts))], format="csr")
    labels = taxonomy.label_ids
    inner = stratified_folds(Y, LINEAR_FOLDS, seed=1) if linear and len(texts) >= 2 * LINEAR_FOLDS else None
    n_out = len(labels) + sum(1 for f in taxonomy.facets if f.kind == "exclusive")
    W, b_lin = np.zeros((n_out, X.shape[1])), np.zeros(n_out)
    # one binned Dataset serves every booster: binning does not depend on the label
    ds_params = {"verbose": -1, "min_data_in_leaf": p["min_data_in_leaf"],
                 "min_sum_hessian_in_leaf": p["min_sum_hessian_in_leaf"], "max_bin": p["max_bin"]}
    if space_in_trees is None:
        space_in_trees = SPACE_IN_TREES
    Xt = X if space is None or space_in_trees else X[:, :feats.n_features]
    if tree_cols is not None:  # the trees read the most common terms (and the components, if any)
        Xt = Xt[:, _booster_columns(tree_cols, feats.n_features, Xt.shape[1] - feats.n_features)]
    ds = lgb.Dataset(Xt, label=np.zeros(X.shape[0]), params=ds_params, free_raw_data=False).construct()
    boosters, booster_outputs, binary_outputs, exclusive_outputs, bias = {}, {}, {}, {}, []
    for facet in taxonomy.facets:
        cols = [labels.index(lb.id) for lb in facet.labels]
        if facet.kind == "exclusive":
            y = np.zeros(len(texts), dtype=np.int64)
            for k, j in enumerate(cols, 1):
                y[Y[:, j] == 1] = k
            outs = list(range(len(bias), len(bias) + len(cols) + 1))
            bias.extend([0.0] * len(outs))
            exclusive_outputs[facet.id] = outs
            if len(set(y.tolist())) < 2:
                bias[outs[0]] = 30.0  # nothing to learn: always "none"
                continue
            ds.set_label(y.astype(np.float64))
            ds.set_init_score(None)
            b = lgb.train({**p, "objective": "multiclass", "num_class": len(outs)}, ds, num_boost_round=num_rounds)
            boosters[facet.id] = b
            booster_outputs[facet.id] = outs
        else:
            for lb, j in zip(facet.labels, cols):
                out = len(bias)
                bias.append(0.0)
                binary_outputs[lb.id] = out
                y = Y[:, j].astype(np.float64)
                if y.sum() == 0 or y.sum() == len(y):
                    bias[out] = -30.0 if y.sum() == 0 else 30.0
                    continue
                ds.set_label(y)
                if inner is not None:
                    oof, W[out], b_lin[out] = _linear_base(X, y, inner)
                    ds.set_init_score(oof)
                else:
                    ds.set_init_score(None)
                b = lgb.train({**p, "objective": "binary"}, ds, num_boost_round=num_rounds)
                stem = lb.id.replace(":", "__")
                boosters[stem] = b
                booster_outputs[stem] = [out]
    assert len(bias) == n_out
    return FittedModel(feats, boosters, binary_outputs, exclusive_outputs, booster_outputs, bias, len(bias),
                       (W, b_lin) if inner is not None else None, space=space,
                       tree_columns=tree_cols, space_in_trees=space is not None and space_in_trees)


def tree_columns(X, n: int | None):
    """The columns (sorted, int64) of the ``n`` terms in most rows of ``X`` (n_rows, n_terms),
    ties to the lower column, which the boosters read; None when ``n`` is None or keeps all.
    The linear base reads every column: it gains from the rare terms (fixtures/README.md,
    "Vocabulary of the linear base"), and the trees' cost grows with theirs."""
    import numpy as np

    if not n or X.shape[1] <= n:
        return None
    df = np.bincount(X.indices, minlength=X.shape[1])
    return np.sort(np.argsort(-df, kind="stable")[:n]).astype(np.int64)


def forest_of(fm: FittedModel):
    """The numpy :class:`~tagger.forest.Forest` of a :class:`FittedModel`'s boosters."""
    from .forest import flatten_boosters

    return flatten_boosters([(b.dump_model(), fm.booster_outputs[k]) for k, b in fm.boosters.items()],
                            fm.n_outputs, fm.bias, fm.features.n_features if fm.space is not None else None,
                            booster_columns(fm))


def booster_columns(fm: FittedModel):
    """The column of the model's feature row (terms, then the space's components) that each
    booster feature reads, int64; None when the boosters read the row as it is."""
    if fm.tree_columns is None:
        return None
    return _booster_columns(fm.tree_columns, fm.features.n_features,
                            fm.space.k if fm.space is not None and fm.space_in_trees else 0)


def _booster_columns(tree_cols, n_terms: int, n_dense: int):
    """The term columns the boosters read, then the ``n_dense`` component columns after the terms."""
    import numpy as np

    return np.concatenate([tree_cols, n_terms + np.arange(n_dense)]).astype(np.int64)


def fitted_proba(fm: FittedModel, taxonomy: Taxonomy, texts):
    """Probabilities (n, L) of a :class:`FittedModel` through the numpy path (no files)."""
    forest = forest_of(fm)
    manifest = _layout_manifest(fm, taxonomy)
    m = Model(".", manifest, fm.features, forest, fm.linear, fm.space)
    return m.predict_proba(texts)


def _layout_manifest(fm: FittedModel, taxonomy: Taxonomy, thresholds=None) -> dict:
    from .space import space_setting

    return {
        "format_version": MODEL_FORMAT,
        "feature_version": feature_version(),
        "labels": taxonomy.label_ids,
        "facets": [{"id": f.id, "kind": f.kind, "labels": [lb.id for lb in f.labels]} for f in taxonomy.facets],
        "binary_outputs": fm.binary_outputs,
        "exclusive_outputs": fm.exclusive_outputs,
        "thresholds": thresholds or {lb: DEFAULT_THRESHOLD for lb in taxonomy.label_ids},
        "booster_files": {**{lb: f"{lb.replace(':', '__')}.txt.gz" for lb in fm.binary_outputs},
                          **{lb.id: f"{f.id}.txt.gz" for f in taxonomy.facets if f.kind == "exclusive" for lb in f.labels}},
        **({"space": {**space_setting(fm.space, fm.space_in_trees),
                      "location": getattr(fm.space, "location", "package")}} if fm.space is not None else {}),
    }


def out_of_fold_proba(texts, Y, taxonomy, k=THRESHOLD_FOLDS, seed=0, params=None, num_rounds=NUM_ROUNDS,
                      tfidf_params=None, progress=None, space=None, space_in_trees=None):
    """Out-of-fold probabilities (n, L): each row scored by a model fitted without it
    (features and boosters refitted inside every training fold)."""
    import numpy as np

    P = np.zeros(Y.shape)
    for n, (tr, te) in enumerate(stratified_folds(Y, k, seed)):
        fm = fit([texts[i] for i in tr], Y[tr], taxonomy, params, num_rounds, tfidf_params, space=space,
                 space_in_trees=space_in_trees)
        P[te] = fitted_proba(fm, taxonomy, [texts[i] for i in te])
        if progress:
            progress(n + 1, k)
    return P


def corpus_hash(records) -> str:
    """SHA-256 over (id, title, abstract, sorted labels) of every record, in order."""
    import hashlib

    h = hashlib.sha256()
    for r in records:
        h.update(json.dumps([r.get("id"), r.get("title") or "", r.get("abstract"), sorted(r.get("labels", []))],
                            ensure_ascii=False).encode())
    return h.hexdigest()


def report_progress(progress, done: int, total: int, what: str) -> None:
    """Call ``progress(done, total, what)``, or ``progress(done, total)`` for a callback of
    two arguments (what ``train(progress=...)`` took before)."""
    try:
        progress(done, total, what)
    except TypeError:
        progress(done, total)


def created_time() -> str:
    """Now as ``YYYY-MM-DDTHH:MM:SSZ`` (UTC), or the time ``$SOURCE_DATE_EPOCH`` (seconds
    since 1970) names, so that two trainings can be byte-identical (reproducible-builds.org)."""
    import os
    import time

    epoch = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    t = int(epoch) if epoch.isdigit() else time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def train(records, taxonomy: Taxonomy, out_dir, *, params=None, num_rounds=NUM_ROUNDS,
          tfidf_params=None, threshold_folds=THRESHOLD_FOLDS, progress=None, created=None,
          space=None, space_in_trees=None) -> dict:
    """Train on hand-tagged ``records`` and write the model directory ``out_dir`` atomically.

    ``progress(done, total, what)``, if given, is called after each step (each fold of the
    out-of-fold pass, then the final fit), ``what`` saying which.

    Steps: an out-of-fold pass (``threshold_folds`` folds) gives the probabilities that tune
    per-label thresholds (:func:`tune_thresholds`); then the final model is fitted on all
    records.  The directory is built in a temporary sibling and swapped in by rename, so an
    interrupted run leaves the old model intact.
    ``space``: a :class:`tagger.model.space.TextSpace` whose components the learners read beside the
    terms (None: none).  Its ``location`` attribute, ``"package"`` (the packaged
    ``models/space``, referred to) or ``"model"`` (copied into ``out_dir/space``), goes into
    the manifest with its sha256, its ``weight`` attribute and ``space_in_trees`` (default
    :data:`SPACE_IN_TREES`: whether the boosters read the components too, or only the linear
    base).  Returns the manifest.
    """
    import importlib.metadata as md

    from ..text import document_text

    texts = [document_text(r) for r in records]
    Y = label_matrix(records, taxonomy.label_ids)
    figures = {}
    tuning = bool(threshold_folds and threshold_folds > 1 and len(records) >= threshold_folds * 2)
    steps = threshold_folds + 1 if tuning else 1

    def step(done, what):
        if progress:
            report_progress(progress, done, steps, what)

    if tuning:
        P = out_of_fold_proba(texts, Y, taxonomy, threshold_folds, 0, params, num_rounds, tfidf_params,
                              lambda n, k: step(n, f"out-of-fold pass, fold {n} of {k}"), space, space_in_trees)
        thresholds, facet_th = tune_thresholds(Y, P, taxonomy)
        from .scores import scores_by_facet

        figures = {"out_of_fold": scores_by_facet(Y, P, taxonomy, thresholds), "folds": threshold_folds}
    else:
        thresholds = taxonomy.thresholds(DEFAULT_THRESHOLD)
        facet_th = {}
    fm = fit(texts, Y, taxonomy, params, num_rounds, tfidf_params, space=space, space_in_trees=space_in_trees)
    step(steps, f"final model on all {len(records)} abstracts")
    forest = forest_of(fm)
    manifest = _layout_manifest(fm, taxonomy, thresholds)
    from .. import __version__

    versions = {"tagger": __version__}
    for pkg in ("lightgbm", "scikit-learn", "nltk", "numpy", "snowballstemmer"):
        try:
            versions[pkg] = md.version(pkg)
        except md.PackageNotFoundError:
            versions[pkg] = None
    manifest.update({
        "taxonomy_name": taxonomy.name,
        "taxonomy_fingerprint": taxonomy.fingerprint(),
        "corpus_sha256": corpus_hash(records),
        "corpus_size": len(records),
        "label_counts": {lb: int(c) for lb, c in zip(taxonomy.label_ids, Y.sum(axis=0))},
        "facet_thresholds": facet_th,
        "parameters": {"lightgbm": {**LGBM_PARAMS, **(params or {})}, "num_rounds": num_rounds,
                       "tfidf": {**DEFAULT_TFIDF, **(tfidf_params or {})},
                       "threshold_folds": threshold_folds, "shrink_k": SHRINK_K,
                       "linear_base": {"C": LINEAR_C, "folds": LINEAR_FOLDS, "solver": "liblinear", "penalty": "l2"}},
        "n_features": fm.features.n_features,
        "n_trees": int(forest.n_trees),
        "figures": figures,
        "versions": versions,
        "created": created or created_time(),
    })
    from .modeldir import write_model_dir

    write_model_dir(out_dir, manifest, fm, forest)
    return manifest
