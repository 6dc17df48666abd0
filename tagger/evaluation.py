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
from .training import (NUM_ROUNDS, fit, fitted_proba, label_matrix, out_of_fold_proba, stratified_folds,
                       tune_thresholds)
from .text import document_text

BASELINE_CS = (0.1, 1.0, 10.0, 100.0)

#: Annif's names for the figures (``annif eval``), beside our JSON keys
ANNIF_NAMES = [
    ("precision_samples", "Precision (doc avg)"), ("recall_samples", "Recall (doc avg)"),
    ("f1_samples", "F1 score (doc avg)"), ("precision_macro", "Precision (subj avg)"),
    ("recall_macro", "Recall (subj avg)"), ("f1_macro", "F1 score (subj avg)"),
    ("precision_micro", "Precision (microavg)"), ("recall_micro", "Recall (microavg)"),
    ("f1_micro", "F1 score (microavg)"), ("f1@5", "F1@5"), ("ndcg", "NDCG"),
    ("precision@1", "Precision@1"), ("precision@3", "Precision@3"), ("precision@5", "Precision@5"),
]


def figures(Y, P, T, taxonomy, rows=None) -> dict:
    """All figures for the rows ``rows`` (default all): ``{"all": {...}, facet: {...}}``.

    Each block holds the :func:`~tagger.metrics.prf` and :func:`~tagger.metrics.ranking`
    figures and ``documents``.  ``Y``/``T`` are 0/1 (n, L), ``P`` probabilities (n, L).
    """
    if rows is not None:
        Y, P, T = Y[rows], P[rows], T[rows]
    labels = taxonomy.label_ids
    out = {"all": {**prf(Y, T), **ranking(Y, P), "documents": int(len(Y))}}
    for f in taxonomy.facets:
        cols = [labels.index(lb.id) for lb in f.labels]
        out[f.id] = {**prf(Y[:, cols], T[:, cols]), **ranking(Y[:, cols], P[:, cols]), "documents": int(len(Y))}
    return {k: {m: (round(v, 4) if isinstance(v, float) else v) for m, v in d.items()} for k, d in out.items()}


def _baseline_oof(texts, Y, taxonomy, tr, te, inner_k, seed, tfidf_params):
    """LR baseline for one outer fold: (probabilities on ``te``, thresholds)."""
    import numpy as np
    from sklearn.linear_model import LogisticRegression

    from .features import fit_tfidf

    tr_texts = [texts[i] for i in tr]
    Ytr = Y[tr]
    L = Y.shape[1]
    # inner out-of-fold probabilities for every C
    inner = {C: np.zeros((len(tr), L)) for C in BASELINE_CS}
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
    Xte = feats.transform_csr([texts[i] for i in te])
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
                   num_rounds=NUM_ROUNDS, tfidf_params=None, progress=None) -> dict:
    """k-fold cross-validation of the tagger (and optionally the LR baseline).

    Returns ``{"folds": k, "documents": n, "tagger": {"all": figures, "uniform": figures,
    "per_label": [...], "thresholds_mean": {...}, "threshold_curves": {...}, "confusions": [...]},
    "baseline": {...} (if asked)}`` (curves and confusions from the pooled out-of-fold scores, the
    curves marked at ``thresholds_mean``); the
    ``uniform`` block covers only the rows whose ``sample`` is ``uniform`` (the uniform random
    arXiv sample), since rows found by search inflate the labels they were searched for.
    """
    import numpy as np

    texts = [document_text(r) for r in records]
    Y = label_matrix(records, taxonomy.label_ids)
    uniform = np.array([r.get("sample") == "uniform" for r in records])
    systems = ["tagger"] + (["baseline"] if baseline else [])
    P = {s: np.zeros(Y.shape) for s in systems}
    T = {s: np.zeros(Y.shape, dtype=np.int8) for s in systems}
    th_sum = {s: np.zeros(Y.shape[1]) for s in systems}
    folds = stratified_folds(Y, k, seed)
    steps = len(folds) * len(systems)
    done = 0
    for tr, te in folds:
        tr_texts = [texts[i] for i in tr]
        Pin = out_of_fold_proba(tr_texts, Y[tr], taxonomy, inner_k, seed + 1, params, num_rounds, tfidf_params)
        thresholds, _ = tune_thresholds(Y[tr], Pin, taxonomy)
        fm = fit(tr_texts, Y[tr], taxonomy, params, num_rounds, tfidf_params)
        P["tagger"][te] = fitted_proba(fm, taxonomy, [texts[i] for i in te])
        T["tagger"][te] = decide(P["tagger"][te], thresholds, taxonomy)
        th_sum["tagger"] += [thresholds[lb] for lb in taxonomy.label_ids]
        done += 1
        if progress:
            progress(done, steps)
        if baseline:
            Pb, thb = _baseline_oof(texts, Y, taxonomy, tr, te, inner_k, seed, tfidf_params)
            P["baseline"][te] = Pb
            T["baseline"][te] = decide(Pb, thb, taxonomy)
            th_sum["baseline"] += [thb[lb] for lb in taxonomy.label_ids]
            done += 1
            if progress:
                progress(done, steps)
    out = {"folds": k, "documents": len(records), "uniform_documents": int(uniform.sum())}
    for s in systems:
        out[s] = {
            "all": figures(Y, P[s], T[s], taxonomy),
            "uniform": figures(Y, P[s], T[s], taxonomy, uniform) if uniform.sum() > 1 else None,
            "per_label": per_label(Y, T[s], taxonomy.label_ids),
            "thresholds_mean": {lb: round(float(v / k), 4) for lb, v in zip(taxonomy.label_ids, th_sum[s])},
        }
        _add_drawn(out[s], Y, P[s], T[s], out[s]["thresholds_mean"], taxonomy)
    return out


def _add_drawn(block, Y, P, T, thresholds, taxonomy) -> None:
    """What ``evaluate --html`` draws besides the figures, into a system's ``block``:
    ``threshold_curves`` (:func:`~tagger.metrics.threshold_curves`) and ``confusions``
    (:func:`~tagger.metrics.confused_pairs`)."""
    block["threshold_curves"] = threshold_curves(Y, P, thresholds, taxonomy)
    block["confusions"] = confused_pairs(Y, T, taxonomy)


def evaluate_model(model, records, taxonomy) -> dict:
    """Figures of a trained ``model`` on hand-tagged ``records`` (a separate test file)."""
    import numpy as np

    texts = [document_text(r) for r in records]
    Y = label_matrix(records, taxonomy.label_ids)
    P = model.predict_proba(texts)
    T = decide(P, dict(zip(model.labels, model.thresholds.tolist())), taxonomy)
    uniform = np.array([r.get("sample") == "uniform" for r in records])
    out = {"documents": len(records), "tagger": {
        "all": figures(Y, P, T, taxonomy),
        "uniform": figures(Y, P, T, taxonomy, uniform) if uniform.sum() > 1 else None,
        "per_label": per_label(Y, T, taxonomy.label_ids)}}
    _add_drawn(out["tagger"], Y, P, T, dict(zip(model.labels, model.thresholds.tolist())), taxonomy)
    return out


def format_report(result: dict, taxonomy) -> str:
    """Annif-style text report: one row per figure, a column per facet (and the baseline)."""
    lines = []
    systems = [s for s in ("tagger", "baseline") if s in result]
    for part in ("all", "uniform"):
        if result["tagger"].get(part) is None:
            continue
        n = result["tagger"][part]["all"]["documents"]
        title = "whole corpus" if part == "all" else "uniform random arXiv sample only"
        lines.append(f"== {title}: {n} documents" + (f", {result['folds']}-fold cross-validation" if "folds" in result else ""))
        cols = ["all"] + [f.id for f in taxonomy.facets]
        lines.append(f"{'':28}" + "".join(f"{c[:12]:>13}" for c in cols for s in systems))
        if len(systems) > 1:  # a second header row: which system each column is
            lines.append(f"{'':28}" + "".join(f"{s[:12]:>13}" for c in cols for s in systems))
        for key, name in ANNIF_NAMES:
            vals = "".join(f"{result[s][part][c][key]:>13.4f}" for c in cols for s in systems)
            lines.append(f"{name:28}{vals}")
        lines.append("")
    return "\n".join(lines)


def write_per_label(path, rows) -> None:
    """The per-label table as TSV: label, support, tp, fp, fn, precision, recall, f1."""
    import csv

    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, delimiter="\t", lineterminator="\n")
        keys = ["label", "support", "tp", "fp", "fn", "precision", "recall", "f1"]
        w.writerow(keys)
        for r in rows:
            w.writerow([r[k] for k in keys])


def model_card(manifest: dict, result: dict, taxonomy) -> str:
    """The model card (``models/README.md``) as Markdown: corpus, figures per facet and per
    label beside the baseline, thresholds, parameters, date and versions."""
    import json

    t, b = result["tagger"], result.get("baseline")
    L = []
    L.append(f"# Model card: {manifest.get('taxonomy_name', taxonomy.name)}\n")
    L.append(f"Created {manifest.get('created')} from {manifest.get('corpus_size')} hand-tagged abstracts "
             f"(corpus sha256 `{manifest.get('corpus_sha256', '')[:16]}…`), taxonomy fingerprint "
             f"`{manifest.get('taxonomy_fingerprint', '')[:16]}…`, model format {manifest.get('format_version')}.")
    L.append(f"{manifest.get('n_features')} TF-IDF terms, {manifest.get('n_trees')} trees; versions: "
             + ", ".join(f"{k} {v}" for k, v in manifest.get("versions", {}).items()) + ".\n")
    if "folds" in result:
        L.append(f"## Cross-validated figures ({result['folds']} folds, {result['documents']} documents)\n")
        L.append("Everything that learns (vectorizer, boosters, thresholds) was fitted inside each training "
                 "fold. Baseline: one-vs-rest logistic regression, `class_weight='balanced'`, C per label from "
                 "{0.1, 1, 10, 100} by inner cross-validation, thresholds tuned the same way, same folds and features.\n")
    else:
        L.append(f"## Figures on a separate hand-tagged test file ({result['documents']} documents)\n")
    for part, title in (("all", "Whole corpus"), ("uniform", "Uniform random arXiv sample only")):
        if not t.get(part):
            continue
        L.append(f"### {title} ({t[part]['all']['documents']} documents)\n")
        L.append("| facet | micro-F1 | macro-F1 | samples-F1 | precision (micro) | recall (micro) |"
                 + (" baseline micro-F1 | baseline macro-F1 |" if b else ""))
        L.append("|---|---:|---:|---:|---:|---:|" + ("---:|---:|" if b else ""))
        for f in ["all"] + [x.id for x in taxonomy.facets]:
            r = t[part][f]
            row = f"| {f} | {r['f1_micro']:.3f} | {r['f1_macro']:.3f} | {r['f1_samples']:.3f} | {r['precision_micro']:.3f} | {r['recall_micro']:.3f} |"
            if b:
                row += f" {b[part][f]['f1_micro']:.3f} | {b[part][f]['f1_macro']:.3f} |"
            L.append(row)
        r = t[part]["all"]
        L.append(f"\nRanking (all labels): F1@5 {r['f1@5']:.3f}, NDCG {r['ndcg']:.3f}, precision@1/3/5 "
                 f"{r['precision@1']:.3f} / {r['precision@3']:.3f} / {r['precision@5']:.3f}.\n")
    L.append("## Per label (whole corpus)\n")
    L.append("| label | support | precision | recall | F1 |" + (" baseline F1 |" if b else "") + " threshold |")
    L.append("|---|---:|---:|---:|---:|" + ("---:|" if b else "") + "---:|")
    bl = {r["label"]: r for r in b["per_label"]} if b else {}
    for r in t["per_label"]:
        row = f"| {r['label']} | {r['support']} | {r['precision']:.3f} | {r['recall']:.3f} | {r['f1']:.3f} |"
        if b:
            row += f" {bl[r['label']]['f1']:.3f} |"
        row += f" {manifest.get('thresholds', {}).get(r['label'], float('nan')):.3f} |"
        L.append(row)
    L.append("\n## Parameters\n")
    L.append("```json\n" + json.dumps(manifest.get("parameters", {}), indent=1, sort_keys=True) + "\n```\n")
    L.append("Thresholds: per label, tuned on out-of-fold scores of the training corpus to maximise F1 and shrunk "
             "toward the facet's threshold with weight n_pos / (n_pos + 10); `tagger label --threshold` overrides them.\n")
    return "\n".join(L)
