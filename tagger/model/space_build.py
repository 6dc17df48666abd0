"""Learning a :class:`~tagger.model.space.TextSpace` from unlabelled abstracts (``tagger space
build``): stems, vocabulary, idf, then LSA and/or PPMI word vectors (the kinds and the files are
described in :mod:`tagger.model.space`).  Memory and time: about 10 GB and 3 to 5 minutes for the
370,000 abstracts of the four arXiv pools here."""

from __future__ import annotations

from .space import CDS_ALPHA, DEFAULT_K, KINDS, MAX_DF, MAX_TERMS, MIN_DF, SEED, WINDOW, TextSpace


def _stem_sequences(texts, progress=None):
    """Stems of each text's kept tokens (space stemmer, scikit-learn's stop words): list of lists."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    from ..text import Analyzer
    from .stemming import label_time_stemmer

    stop = sorted(ENGLISH_STOP_WORDS)
    an = Analyzer(stem=label_time_stemmer({}), stop_words=stop, ngram_max=1)
    out = []
    for i, t in enumerate(texts):
        out.append(an.stems(t))
        if progress and (i % 5000 == 0 or i == len(texts) - 1):
            progress(i + 1, len(texts), "stemming")
    return out, stop


def _vocabulary(seqs, max_terms, min_df, max_df):
    """Terms (sorted by document frequency, then alphabetically) and their document frequencies."""
    from collections import Counter

    df = Counter()
    for s in seqs:
        df.update(set(s))
    n = len(seqs)
    ok = [(c, t) for t, c in df.items() if c >= min_df and c <= max_df * n]
    ok.sort(key=lambda x: (-x[0], x[1]))
    ok = ok[:max_terms]
    return [t for _, t in ok], [c for c, _ in ok]


def _id_sequences(seqs, terms):
    """Each text's stems as int32 vocabulary ids (terms outside the vocabulary dropped): the
    flat id array and each text's length."""
    import numpy as np

    index = {t: j for j, t in enumerate(terms)}
    lens = np.zeros(len(seqs), dtype=np.int64)
    flat = []
    for i, s in enumerate(seqs):
        ids = [index[w] for w in s if w in index]
        lens[i] = len(ids)
        flat += ids
    return np.asarray(flat, dtype=np.int64), lens


def _tfidf_matrix(ids, lens, n_terms, idf):
    """CSR (n_texts, n_terms) float64: 1 + ln(count), times idf, unit L2 rows."""
    import numpy as np
    import scipy.sparse as sp

    n = len(lens)
    doc = np.repeat(np.arange(n), lens)
    key = doc * n_terms + ids
    key, counts = np.unique(key, return_counts=True)
    row, col = key // n_terms, key % n_terms
    val = (np.log(counts) + 1.0) * idf[col]
    norm = np.sqrt(np.bincount(row, weights=val * val, minlength=n))
    val /= norm[row]
    return sp.csr_matrix((val, (row, col)), shape=(n, n_terms))


def _lsa(X, k):
    from sklearn.decomposition import TruncatedSVD

    svd = TruncatedSVD(n_components=k, algorithm="randomized", n_iter=5, random_state=SEED)
    svd.fit(X)
    return svd.components_.T  # (n_terms, k)


def _ppmi(ids, lens, n_terms, k, progress=None):
    """Word vectors (n_terms, k) from the SVD of the PPMI word-context matrix."""
    import numpy as np
    import scipy.sparse as sp
    from sklearn.utils.extmath import randomized_svd

    doc = np.repeat(np.arange(len(lens)), lens)
    C = sp.csr_matrix((n_terms, n_terms), dtype=np.float64)
    chunk = 20_000_000
    for d in range(1, WINDOW + 1):
        for a in range(0, max(len(ids) - d, 0), chunk):
            b = min(a + chunk, len(ids) - d)
            ok = doc[a:b] == doc[a + d:b + d]
            w, c = ids[a:b][ok], ids[a + d:b + d][ok]
            key, cnt = np.unique(w * n_terms + c, return_counts=True)
            M = sp.csr_matrix((cnt.astype(np.float64), (key // n_terms, key % n_terms)), shape=(n_terms, n_terms))
            C = C + M + M.T
        if progress:
            progress(d, WINDOW, "counting contexts")
    C = C.tocoo()
    total = C.data.sum()
    pw = np.asarray(C.sum(axis=1)).ravel() / total
    cc = np.asarray(C.sum(axis=0)).ravel() ** CDS_ALPHA
    pc = cc / cc.sum()
    pmi = np.log(C.data / total) - np.log(pw[C.row]) - np.log(pc[C.col])
    keep = pmi > 0
    P = sp.csr_matrix((pmi[keep], (C.row[keep], C.col[keep])), shape=(n_terms, n_terms))
    U, S, _ = randomized_svd(P, k, n_iter=5, random_state=SEED)
    W = U * np.sqrt(S)
    # deterministic signs: the largest entry of each column positive
    sign = np.sign(W[np.abs(W).argmax(axis=0), np.arange(W.shape[1])])
    W *= sign
    norm = np.linalg.norm(W, axis=1, keepdims=True)
    norm[norm == 0] = 1.0
    return W / norm


def build_space(texts, k: int = DEFAULT_K, kind: str = "lsa", max_terms: int = MAX_TERMS, min_df: int = MIN_DF,
                max_df: float = MAX_DF, progress=None) -> TextSpace:
    """Learn a :class:`TextSpace` from ``texts`` (list of str, unlabelled).

    ``kind`` is one of :data:`KINDS`; ``k`` the number of components (for ``lsa+ppmi``, half
    each).  ``progress(done, total, what)`` is called now and then.  Memory: about 10 GB for
    the 370,000 abstracts of the four arXiv pools.  Raises ValueError for an unknown kind or
    too few texts for ``k``.
    """
    import numpy as np
    from threadpoolctl import threadpool_limits

    from .features import TfidfFeatures

    if kind not in KINDS:
        raise ValueError(f"unknown kind of text space {kind!r}; choose one of {', '.join(KINDS)}")
    seqs, stop = _stem_sequences(texts, progress)
    terms, df = _vocabulary(seqs, max_terms, min_df, max_df)
    if len(terms) <= k or len(texts) <= k:
        raise ValueError(f"{len(texts)} texts with {len(terms)} terms are too few for {k} components")
    n = len(texts)
    idf = np.log((1 + n) / (1 + np.asarray(df, dtype=np.float64))) + 1.0
    ids, lens = _id_sequences(seqs, terms)
    del seqs
    parts = []
    with threadpool_limits(1):  # one BLAS thread: byte-identical builds
        if "lsa" in kind:
            if progress:
                progress(0, 1, "LSA (truncated SVD)")
            parts.append(_lsa(_tfidf_matrix(ids, lens, len(terms), idf), k if kind == "lsa" else k // 2))
        if "ppmi" in kind:
            parts.append(_ppmi(ids, lens, len(terms), k if kind == "ppmi" else k - k // 2, progress))
    blocks, a = [], 0
    for p in parts:
        blocks.append((a, a + p.shape[1]))
        a += p.shape[1]
    comp = np.hstack(parts).astype(np.float16)
    feats = TfidfFeatures(terms=terms, idf=[float(v) for v in idf], stop_words=stop, stem_exceptions={},
                          ngram_max=1, sublinear_tf=True, stem=True)
    meta = {"texts": n, "min_df": min_df, "max_df": max_df, "window": WINDOW, "cds_alpha": CDS_ALPHA, "seed": SEED}
    return TextSpace(feats, comp, blocks, kind, meta)
