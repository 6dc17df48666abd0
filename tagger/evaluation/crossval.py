"""Honest evaluation: cross-validation in which everything that learns stays inside the fold.

:func:`cross_validate` splits a hand-tagged corpus into ``k`` folds by multi-label iterative
stratification (Sechidis et al. 2011; the iterative-stratification package).  For each
outer fold, the TF-IDF vocabulary, the boosters and the per-label thresholds are fitted on the
training part only (thresholds from an inner out-of-fold pass over that part, exactly as
``tagger train`` does), and the held-out part is scored once.  The pooled out-of-fold
decisions give every figure.  ``baseline=True`` runs one-vs-rest logistic regression
(``class_weight='balanced'``, C from {0.1, 1, 10, 100} chosen per label by the same inner
folds, thresholds tuned the same way) on the same folds and features, so each modelling
change is judged against a baseline given the same chances.

:func:`evaluate_model` scores an already trained model on a separate hand-tagged file.
"""

from __future__ import annotations

from .metrics import confused_pairs, decide, per_label, prf, ranking, threshold_curves
from ..model.training import (NUM_ROUNDS, THRESHOLD_FOLDS, corpus_hash, fit, fitted_proba, label_matrix,
                              out_of_fold_proba, report_progress, stratified_folds, tune_thresholds)
from ..text import document_text

BASELINE_CS = (0.1, 1.0, 10.0, 100.0)


def figures(Y, P, T, taxonomy, rows=None, present_only: bool = False) -> dict:
    """All figures for the rows ``rows`` (default all): ``{"all": {...}, facet: {...}}``.

    Each block holds the :func:`~tagger.evaluation.metrics.prf` and
    :func:`~tagger.evaluation.metrics.ranking` figures and ``documents``.  ``Y``/``T`` are
    0/1 (n, L), ``P`` probabilities (n, L).
    ``present_only`` (a separate test set, bib-eval): the macro averages are over the labels
    the hand tags hold at least once (``macro_labels`` of ``macro_of``), since a label absent
    from a small set would count as F1 0 whatever the model does; micro and the rest pool
    every label as before.
    """
    if rows is not None:
        Y, P, T = Y[rows], P[rows], T[rows]
    labels = taxonomy.label_ids

    def block(cols):
        b = {**prf(Y[:, cols], T[:, cols]), **ranking(Y[:, cols], P[:, cols]), "documents": int(len(Y))}
        if present_only:
            have = [c for c in cols if Y[:, c].any()]
            if have and len(have) < len(cols):
                macro = prf(Y[:, have], T[:, have])
                b.update({k: v for k, v in macro.items() if k.endswith("_macro")})
            b["macro_labels"], b["macro_of"] = len(have), len(cols)
        return b

    out = {"all": block(list(range(len(labels))))}
    for f in taxonomy.facets:
        out[f.id] = block([labels.index(lb.id) for lb in f.labels])
    return {k: {m: (round(v, 4) if isinstance(v, float) else v) for m, v in d.items()} for k, d in out.items()}


#: the corpus samples (``sample`` field), in report order
SAMPLES = ("seed", "uniform", "rare-label-search", "older-uniform", "active", "field-uniform")
#: eras by ``year``: (name, first year or None, last year or None); rows without a year are in none
ERAS = (("before 2010", None, 2009), ("2010-2018", 2010, 2018), ("2019 on", 2019, None))


def parts(records, first: int | None = None) -> dict:
    """Boolean row masks (numpy, shape (n,)) of the reported parts of ``records``:
    ``{"samples": {sample: mask}, "eras": {era: mask}, "rows": {"first N rows": mask}}``, only
    parts with at least 2 rows.  A sample not in :data:`SAMPLES` is reported after them; rows
    without an int ``year`` belong to no era; ``rows`` is there only with ``first`` (an int
    below ``len(records)``): the first ``first`` records, e.g. the corpus as it stood before
    later rows were appended."""
    import numpy as np

    seen = [r.get("sample") for r in records]
    names = [s for s in SAMPLES if s in seen] + sorted({s for s in seen if s and s not in SAMPLES})
    samples = {s: np.array([x == s for x in seen]) for s in names}
    years = [r.get("year") if isinstance(r.get("year"), int) and not isinstance(r.get("year"), bool) else None
             for r in records]
    eras = {name: np.array([y is not None and (lo is None or y >= lo) and (hi is None or y <= hi) for y in years])
            for name, lo, hi in ERAS}
    out = {"samples": {k: m for k, m in samples.items() if m.sum() > 1},
           "eras": {k: m for k, m in eras.items() if m.sum() > 1}}
    if first is not None and 1 < first < len(records):
        out["rows"] = {f"first {first} rows": np.arange(len(records)) < first}
    return out


def _part_figures(Y, P, T, taxonomy, masks, present_only: bool = False) -> dict:
    """``{"samples": {name: figures}, "eras": {name: figures}}`` for :func:`parts` masks."""
    return {kind: {name: figures(Y, P, T, taxonomy, m, present_only) for name, m in d.items()}
            for kind, d in masks.items()}


def _baseline_fit_score(tr_texts, Ytr, te_texts, taxonomy, inner_k, seed, tfidf_params):
    """LR baseline fitted on ``tr_texts``/``Ytr`` (C and thresholds from inner folds), scoring
    ``te_texts``: (probabilities (len(te_texts), L), thresholds by label)."""
    import numpy as np
    from sklearn.linear_model import LogisticRegression

    from ..model.features import fit_tfidf

    L = Ytr.shape[1]
    # inner out-of-fold probabilities for every C
    inner = {C: np.zeros((len(tr_texts), L)) for C in BASELINE_CS}
    for itr, ite in stratified_folds(Ytr, inner_k, seed + 1):
        feats, X = fit_tfidf([tr_texts[i] for i in itr], tfidf_params)
        Xte = feats.transform_csr([tr_texts[i] for i in ite])
        for j in range(L):
            y = Ytr[itr, j]
            for C in BASELINE_CS:
                inner[C][ite, j] = _lr_proba(LogisticRegression, X, y, Xte, C)
    best_c = []
    for j in range(L):
        scores = [_best_f1(Ytr[:, j], inner[C][:, j]) for C in BASELINE_CS]
        best_c.append(BASELINE_CS[int(np.argmax(scores))])
    P_inner = np.column_stack([inner[best_c[j]][:, j] for j in range(L)])
    thresholds, _ = tune_thresholds(Ytr, P_inner, taxonomy)
    feats, X = fit_tfidf(tr_texts, tfidf_params)
    Xte = feats.transform_csr(te_texts)
    P = np.column_stack([_lr_proba(LogisticRegression, X, Ytr[:, j], Xte, best_c[j]) for j in range(L)])
    return P, thresholds


def _lr_proba(LogisticRegression, X, y, Xte, C):
    import numpy as np

    if y.min() == y.max():
        return np.full(Xte.shape[0], float(y[0]))
    clf = LogisticRegression(C=C, class_weight="balanced", max_iter=2000, solver="liblinear")
    clf.fit(X, y)
    return clf.predict_proba(Xte)[:, 1]


def _best_f1(y, p) -> float:
    import numpy as np

    best = 0.0
    for t in np.arange(0.05, 0.951, 0.05):
        pred = p >= t
        tp = int((pred & (y == 1)).sum())
        if tp:
            best = max(best, 2 * tp / (pred.sum() + (y == 1).sum()))
    return best


def cross_validate(records, taxonomy, *, k=5, seed=0, inner_k=3, baseline=False, params=None,
                   num_rounds=NUM_ROUNDS, tfidf_params=None, progress=None, bib_eval=None,
                   bib_eval_note=None, space=None, space_in_trees=None, jobs=1, first=None) -> dict:
    """k-fold cross-validation of the tagger (and optionally the LR baseline).

    Returns ``{"folds": k, "documents": n, "tagger": {"all": figures, "uniform": figures,
    "samples": {sample: figures}, "eras": {era: figures}, "bib_eval": figures, "per_label":
    [...], "thresholds_mean": {...}, "threshold_curves": {...}, "confusions": [...]}, "baseline":
    {...} (if asked), "bib_eval": {...}}`` (curves and confusions from the pooled out-of-fold
    scores, the curves marked at ``thresholds_mean``).
    The ``uniform`` block (also under ``samples``) covers only the rows whose ``sample`` is
    ``uniform`` (the uniform random arXiv sample), since rows found by search inflate the
    labels they were searched for; eras (:data:`ERAS`) cover only rows with a ``year``.

    ``bib_eval`` (records from :func:`tagger.evaluation.bibeval.load_bib_eval`, never training data) is
    scored by a model fitted on all of ``records`` as ``tagger train`` fits it (thresholds from
    a ``THRESHOLD_FOLDS``-fold out-of-fold pass), the baseline likewise; ``bib_eval_note``
    (str) is carried into the result as ``bib_eval.note``.  ``space``: the text space the
    tagger reads (fitted once, without labels, on pools that hold the corpus's texts:
    unsupervised, so not refitted per fold), at its ``weight``; ``space_in_trees`` as for
    :func:`tagger.model.training.fit`.

    With ``baseline``, the two pinned peers of :mod:`tagger.evaluation.peers` (``plain_lr``,
    ``svm``) run on the same folds too (decisions only: their ``P`` is their 0/1 decision),
    and ``comparisons`` holds, per peer and part, the tagger's micro-F1 minus the peer's with
    a 95% paired bootstrap interval (:func:`tagger.evaluation.metrics.paired_bootstrap`).
    Bib-eval records with a ``part`` (``ml``, ``outside-ml``) are also reported per part.
    ``first`` (int): the first ``first`` records are reported as a part too (``rows``).
    """
    import numpy as np

    texts = [document_text(r) for r in records]
    Y = label_matrix(records, taxonomy.label_ids)
    uniform = np.array([r.get("sample") == "uniform" for r in records])
    from .peers import PEERS

    peers = list(PEERS) if baseline else []
    systems = ["tagger"] + (["baseline"] if baseline else []) + peers
    P = {s: np.zeros(Y.shape) for s in systems}
    T = {s: np.zeros(Y.shape, dtype=np.int8) for s in systems}
    th_sum = {s: np.zeros(Y.shape[1]) for s in systems}
    folds = stratified_folds(Y, k, seed)
    steps = (len(folds) + (1 if bib_eval else 0)) * len(systems)
    if progress:  # from the first second: a fold of the shipped corpus takes minutes
        report_progress(progress, 0, steps, f"{len(records)} documents, {k} folds of {inner_k} inner folds each; "
                                            f"starting fold 1 of {k}")
    context = dict(texts=texts, Y=Y, taxonomy=taxonomy, seed=seed, inner_k=inner_k, systems=systems, params=params,
              num_rounds=num_rounds, tfidf_params=tfidf_params, space=space,
              space_in_trees=space_in_trees, bib_texts=[document_text(r) for r in bib_eval] if bib_eval else None,
              progress=progress if jobs == 1 else None, k=k)
    tasks = [(f, tr, te) for f, (tr, te) in enumerate(folds, 1)]
    if bib_eval:  # the longest task: first when in parallel
        tasks = [("bib", None, None)] + tasks if jobs > 1 else tasks + [("bib", None, None)]
    done, bib = 0, None
    try:
        for fold, te, res in _map(_task, tasks, jobs, context):
            done += len(systems)
            if fold == "bib":
                bib = res
            else:
                for name, (Pf, Tf, th) in res.items():
                    P[name][te], T[name][te] = Pf, Tf
                    th_sum[name] += th
            if progress and jobs > 1:  # in this process, the task said each step itself
                report_progress(progress, done, steps, "bib-eval entries: all systems" if fold == "bib" else
                                f"fold {fold} of {k}: all systems")
    finally:
        _G.clear()
    from ..model.space import space_setting

    out = {"folds": k, "documents": len(records), "uniform_documents": int(uniform.sum()),
           "space": space_setting(space, space_in_trees), "corpus_sha256": corpus_hash(records),
           "taxonomy_fingerprint": taxonomy.fingerprint()}
    masks = parts(records, first)
    for s in systems:
        out[s] = {
            "all": figures(Y, P[s], T[s], taxonomy),
            "uniform": figures(Y, P[s], T[s], taxonomy, uniform) if uniform.sum() > 1 else None,
            **_part_figures(Y, P[s], T[s], taxonomy, masks),
            "per_label": per_label(Y, T[s], taxonomy.label_ids),
            "thresholds_mean": {lb: round(float(v / k), 4) for lb, v in zip(taxonomy.label_ids, th_sum[s])},
        }
        _add_drawn(out[s], Y, P[s], T[s], out[s]["thresholds_mean"], taxonomy)
    out["bib_eval"] = {"documents": len(bib_eval) if bib_eval else 0, "note": bib_eval_note}
    Tb = {}
    if bib_eval:
        Yb = label_matrix(bib_eval, taxonomy.label_ids)
        scores = {}
        for name, (Pb, Db) in bib.items():
            Tb[name] = Db
            if name in ("tagger", "baseline"):
                scores[name] = Pb
            out[name]["bib_eval"] = figures(Yb, Pb, Db, taxonomy, present_only=True)
        for name, D in Tb.items():
            out[name]["bib_eval_parts"] = {part: figures(Yb, scores.get(name, D), D, taxonomy, m, present_only=True)
                                           for part, m in bib_parts(bib_eval).items()}
    if peers:
        out["comparisons"] = _comparisons(Y, T, masks, peers, Yb if bib_eval else None, Tb,
                                          bib_parts(bib_eval) if bib_eval else {}, seed)
    return out


#: what the fold tasks read (set in this process, or in each worker by its initializer)
_G: dict = {}


def _map(func, tasks, jobs, context):
    """``func`` over ``tasks``, in this process (``jobs`` 1) or in ``jobs`` worker processes,
    results as they finish.  Workers come from a fork server, not a fork of this process: a
    process that has already trained LightGBM (its OpenMP runtime started) hangs in a fork
    child; ``context`` (texts, labels, taxonomy, text space) is pickled once per worker."""
    if jobs <= 1 or len(tasks) < 2:
        _G.update(context)
        yield from map(func, tasks)
        return
    import multiprocessing as mp

    with mp.get_context("forkserver").Pool(min(jobs, len(tasks)), initializer=_init, initargs=(context,)) as pool:
        yield from pool.imap_unordered(func, tasks)


def _init(context):
    _G.update(context)


def _task(args):
    """One outer fold, or (``fold`` "bib") the fit on the whole corpus that scores bib-eval:
    ``(fold, test rows, {system: (P, decisions, thresholds)})``, or for bib-eval
    ``("bib", None, {system: (P, decisions)})``."""
    import numpy as np

    from .peers import PEERS

    fold, tr, te = args
    g = _G
    texts, Y, tax, seed, inner_k = g["texts"], g["Y"], g["taxonomy"], g["seed"], g["inner_k"]
    np.random.seed((1000 * seed + (0 if fold == "bib" else fold)) % 2 ** 32)  # liblinear draws from it
    kw = dict(params=g["params"], num_rounds=g["num_rounds"], tfidf_params=g["tfidf_params"], space=g["space"],
              space_in_trees=g["space_in_trees"])
    if fold == "bib":
        tr_texts, Ytr, te_texts, th_k = texts, Y, g["bib_texts"], THRESHOLD_FOLDS
    else:
        tr_texts, Ytr, te_texts, th_k = [texts[i] for i in tr], Y[tr], [texts[i] for i in te], inner_k
    progress, n_sys = g["progress"], len(g["systems"])
    first = (g["k"] if fold == "bib" else fold - 1) * n_sys  # steps done before this task (in order)
    where = "bib-eval entries" if fold == "bib" else f"fold {fold} of {g['k']}"
    total = g["k"] * n_sys + (n_sys if g["bib_texts"] else 0)  # steps of the whole evaluation

    def say(system):
        if progress:
            report_progress(progress, first + len(res), total, f"{where}: {system}")

    def inner(n, of):
        if progress and fold != "bib":
            report_progress(progress, first, total, f"{where}: tagger, inner fold {n} of {of} done")

    Pin = out_of_fold_proba(tr_texts, Ytr, tax, th_k, seed + 1, progress=inner, **kw)
    fm = fit(tr_texts, Ytr, tax, **kw)
    thresholds, _ = tune_thresholds(Ytr, Pin, tax)
    Pt = fitted_proba(fm, tax, te_texts)
    res = {"tagger": (Pt, decide(Pt, thresholds, tax), [thresholds[lb] for lb in tax.label_ids])}
    say("tagger")
    if "baseline" in g["systems"]:
        Pb, thb = _baseline_fit_score(tr_texts, Ytr, te_texts, tax, inner_k, seed, g["tfidf_params"])
        res["baseline"] = (Pb, decide(Pb, thb, tax), [thb[lb] for lb in tax.label_ids])
        say("baseline")
    for peer in g["systems"]:
        if peer in PEERS:
            D = PEERS[peer](tr_texts, Ytr, te_texts)
            res[peer] = (D, D, np.zeros(Y.shape[1]))
            say(peer)
    if fold == "bib":
        return fold, None, {name: r[:2] for name, r in res.items()}
    return fold, te, res


def bib_parts(bib_eval) -> dict:
    """Row masks of the bib-eval records by ``part`` (``ml``, ``outside-ml``): ``{part: mask}``."""
    import numpy as np

    names = [r.get("part") for r in bib_eval]
    return {p: np.array([n == p for n in names]) for p in ("ml", "outside-ml") if names.count(p) > 1}


def _comparisons(Y, T, masks, peers, Yb, Tb, bparts, seed) -> dict:
    """Per peer: ``{part: {"diff", "lo", "hi"}}``, the tagger's micro-F1 minus the peer's on the
    whole corpus, each sample and era, bib-eval and its parts (95% paired bootstrap)."""
    import numpy as np

    from .metrics import paired_bootstrap

    out = {}
    for peer in peers:
        c = {"corpus": paired_bootstrap(Y, T["tagger"], T[peer], seed=seed)}
        for kind in ("samples", "eras", "rows"):
            for name, m in masks.get(kind, {}).items():
                c[name] = paired_bootstrap(Y[m], T["tagger"][m], T[peer][m], seed=seed)
        if Yb is not None and peer in Tb:
            c["bib-eval"] = paired_bootstrap(Yb, Tb["tagger"], Tb[peer], seed=seed)
            for name, m in bparts.items():
                c[f"bib-eval {name}"] = paired_bootstrap(Yb[m], Tb["tagger"][m], Tb[peer][m], seed=seed)
        out[peer] = c
    return out


def _add_drawn(block, Y, P, T, thresholds, taxonomy) -> None:
    """What ``evaluate --html`` draws besides the figures, into a system's ``block``:
    ``threshold_curves`` (:func:`~tagger.evaluation.metrics.threshold_curves`) and
    ``confusions`` (:func:`~tagger.evaluation.metrics.confused_pairs`)."""
    block["threshold_curves"] = threshold_curves(Y, P, thresholds, taxonomy)
    block["confusions"] = confused_pairs(Y, T, taxonomy)


def evaluate_model(model, records, taxonomy, bib_eval=None, bib_eval_note=None) -> dict:
    """Figures of a trained ``model`` on hand-tagged ``records`` (a separate test file), by
    sample and era as :func:`cross_validate` gives them, and on ``bib_eval`` records when given."""
    import numpy as np

    def score(recs):
        Y = label_matrix(recs, taxonomy.label_ids)
        P = model.predict_proba([document_text(r) for r in recs])
        return Y, P, decide(P, dict(zip(model.labels, model.thresholds.tolist())), taxonomy)

    Y, P, T = score(records)
    uniform = np.array([r.get("sample") == "uniform" for r in records])
    rows = per_label(Y, T, taxonomy.label_ids)
    out = {"documents": len(records), "tagger": {
        "all": figures(Y, P, T, taxonomy, present_only=True),
        "uniform": figures(Y, P, T, taxonomy, uniform, present_only=True) if uniform.sum() > 1 else None,
        **_part_figures(Y, P, T, taxonomy, parts(records), present_only=True),
        # a label the test set never holds has no F1 to report: left out of the table, counted
        "per_label": [r for r in rows if r["support"]],
        "labels_without_support": sum(1 for r in rows if not r["support"])},
        "bib_eval": {"documents": len(bib_eval) if bib_eval else 0, "note": bib_eval_note}}
    _add_drawn(out["tagger"], Y, P, T, dict(zip(model.labels, model.thresholds.tolist())), taxonomy)
    if bib_eval:
        out["tagger"]["bib_eval"] = figures(*score(bib_eval), taxonomy, present_only=True)
    return out
