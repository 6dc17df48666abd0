"""Explanations: which n-grams of an abstract raised each of its tags' scores.

For a tag, the contribution of each feature of the abstract's TF-IDF row to the tag's raw
score is the sum of the linear base's term ``w_j * x_j`` and the trees' share from LightGBM
(``Booster.predict(..., pred_contrib=True)``, TreeSHAP: Lundberg et al. 2020, "From local
explanations to global understanding with explainable AI for trees").  The features with the
largest positive contribution that occur in the abstract are mapped back from stemmed terms
to the words as they appear in the text.  Importing lightgbm costs ~0.3-1 s, so only
``--explain`` pays it.
"""

from __future__ import annotations

from ..text import _TOKEN_RE, fold, normalize


def surface_forms(analyzer, text: str) -> dict[str, str]:
    """``{term: the first stretch of the text that produced it}`` for every term of ``text``.

    Terms are the analyzer's (stemmed) unigrams and bigrams; the stretch keeps the text's own
    case and the characters between the words (``"Self-Supervised"`` for ``self supervis``).
    """
    norm = normalize(text)
    folded = fold(norm)
    same_length = len(folded) == len(norm)
    toks = []  # (start, end, stem) of kept tokens
    for m in _TOKEN_RE.finditer(folded):
        tok = m.group()
        if len(tok) < 2 or tok in analyzer.stop_words:
            continue
        stem = analyzer.stem(tok) if analyzer.stem else tok
        toks.append((m.start(), m.end(), stem))
    src = norm if same_length else folded
    out: dict[str, str] = {}
    for n in range(1, analyzer.ngram_max + 1):
        for i in range(len(toks) - n + 1):
            term = " ".join(t[2] for t in toks[i:i + n])
            if term not in out:
                out[term] = src[toks[i][0]:toks[i + n - 1][1]]
    return out


def explain_batch(model, text: str, tags: list[str], top: int = 3) -> dict[str, list]:
    """``{tag: [[n-gram, contribution], ...]}``: for each tag, up to ``top`` n-grams of
    ``text`` with the largest positive contribution to its raw (log-odds) score, rounded."""
    import numpy as np

    if not tags:
        return {}
    feats = model.features
    X = feats.transform_csr([text])
    present = set(X.indices.tolist())  # the terms; a text space's components add to no n-gram
    if model.space is not None:
        import scipy.sparse as sp

        X = sp.hstack([X, sp.csr_matrix(model.space.transform([text]))], format="csr")
    forms = surface_forms(feats.analyzer(), text)
    out = {}
    for tag in tags:
        booster = model.booster(tag)
        Xb = model.booster_input(X)
        contrib = booster.predict(Xb, pred_contrib=True)  # sparse in, sparse out
        if isinstance(contrib, list):  # multiclass with sparse input: one matrix per class
            facet = tag.split(":", 1)[0]
            labs = next(labs for f, _, labs in model.facets if f == facet)
            contrib = contrib[1 + labs.index(tag)]  # class 0 is "none of the facet's labels"
        contrib = (contrib.toarray() if hasattr(contrib, "toarray") else np.asarray(contrib))[0]
        n_feat = Xb.shape[1] + 1
        if contrib.shape[0] > n_feat:  # multiclass, dense layout: class blocks of n_features + 1
            facet = tag.split(":", 1)[0]
            labs = next(labs for f, _, labs in model.facets if f == facet)
            k = 1 + labs.index(tag)
            contrib = contrib[k * n_feat:(k + 1) * n_feat]
        if model.forest.booster_columns is not None:  # back to the columns of X
            full = np.zeros(X.shape[1] + 1)
            full[model.forest.booster_columns] = contrib[:-1]
            full[-1] = contrib[-1]
            contrib = full
        out_col = model.manifest["binary_outputs"].get(tag)
        if model.linear is not None and out_col is not None:
            W = model.linear[0]
            contrib = contrib.copy()
            for j in present:
                contrib[j] += W[out_col, j] * X[0, j]
        ranked = sorted((j for j in present if contrib[j] > 0), key=lambda j: -contrib[j])[:top]
        out[tag] = [[forms.get(feats.terms[j], feats.terms[j]), round(float(contrib[j]), 3)] for j in ranked]
    return out
