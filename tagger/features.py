"""TF-IDF features: fitted by scikit-learn in training, applied by our own code at label time.

Training (:func:`fit_tfidf`) runs scikit-learn's ``TfidfVectorizer`` with our
:class:`tagger.text.Analyzer` and keeps what it learned (vocabulary in column order, idf) as
plain data in :class:`TfidfFeatures`.  Labelling applies that data with a few lines of numpy
(:meth:`TfidfFeatures.transform_rows`): importing scikit-learn costs about 1 s, the transform
itself is simple, and ``tests/test_features.py`` checks ours equals ``TfidfVectorizer.transform``
to 1e-12.  The formula is scikit-learn's: ``tf = 1 + ln(count)`` (``sublinear_tf``), times
``idf = ln((1 + n) / (1 + df)) + 1`` (``smooth_idf``), each row scaled to unit L2 norm.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import dataclass, field

from .text import Analyzer

#: vectorizer settings: min_df=2 drops hapaxes (they cannot generalise), max_df=0.9 drops terms
#: in nearly every abstract, and the 4,000 most frequent terms are kept: cross-validated
#: micro-F1 was 0.800-0.802 for 2,000 / 4,000 / 8,000 / all 23,500 terms alike
#: (benchmarks/tune_model.py, fixtures/README.md), while each booster file grows with the
#: feature count (LightGBM writes every feature's range) and 23,500 terms made a 31 MB model.
DEFAULT_TFIDF = {"ngram_max": 2, "min_df": 2, "max_df": 0.9, "max_features": 4000, "sublinear_tf": True, "stem": True}


@dataclass
class TfidfFeatures:
    """A fitted TF-IDF transform as plain data.

    Attributes
    ----------
    terms : list of str, length n_features
        Column order of every feature matrix.
    idf : list of float, length n_features
    stop_words : list of str
    stem_exceptions : dict str -> str
        Tokens where the label-time stemmer must give nltk's stem (see :mod:`tagger.stemming`).
    ngram_max, sublinear_tf, stem : analyzer and weighting settings.
    """

    terms: list[str]
    idf: list[float]
    stop_words: list[str] = field(default_factory=list)
    stem_exceptions: dict[str, str] = field(default_factory=dict)
    ngram_max: int = 2
    sublinear_tf: bool = True
    stem: bool = True

    def __post_init__(self):
        self.index = {t: i for i, t in enumerate(self.terms)}
        self._analyzer = None
        self._idf_np = None

    @property
    def n_features(self) -> int:
        return len(self.terms)

    def analyzer(self) -> Analyzer:
        """The label-time analyzer (nltk-free stemmer with this model's exceptions)."""
        if self._analyzer is None:
            from .stemming import label_time_stemmer

            stem = label_time_stemmer(self.stem_exceptions) if self.stem else None
            self._analyzer = Analyzer(stem=stem, stop_words=self.stop_words, ngram_max=self.ngram_max)
        return self._analyzer

    def weights(self, terms: list[str]) -> dict[int, float]:
        """``{column: tf-idf weight}`` of one document's term list (unit L2 norm)."""
        index = self.index
        counts = Counter([index[t] for t in terms if t in index])
        idf = self.idf
        if self.sublinear_tf:
            w = {j: (1.0 + math.log(c)) * idf[j] for j, c in counts.items()}
        else:
            w = {j: c * idf[j] for j, c in counts.items()}
        norm = math.sqrt(sum(v * v for v in w.values()))
        if norm > 0:
            w = {j: v / norm for j, v in w.items()}
        return w

    def vocabulary_terms(self, text: str) -> list[str]:
        """The terms of ``text`` that are in the vocabulary, with repeats (what :meth:`weights`
        counts).  Equal to filtering ``analyzer()(text)``, but an n-gram is only built when
        each of its stems occurs in some vocabulary term: no other n-gram can be a term."""
        stems = self.analyzer().stems(text)
        index, parts = self.index, self._parts()
        out = [s for s in stems if s in index]
        if self.ngram_max == 2:  # the common case, without the general loop's overhead
            keep = [s in parts for s in stems]
            for i in range(len(stems) - 1):
                if keep[i] and keep[i + 1]:
                    t = stems[i] + " " + stems[i + 1]
                    if t in index:
                        out.append(t)
            return out
        for n in range(2, self.ngram_max + 1):
            for i in range(len(stems) - n + 1):
                gram = stems[i:i + n]
                if all(g in parts for g in gram):
                    t = " ".join(gram)
                    if t in index:
                        out.append(t)
        return out

    def _parts(self) -> frozenset:
        if getattr(self, "_parts_set", None) is None:
            self._parts_set = frozenset(p for t in self.terms for p in t.split(" "))
        return self._parts_set

    def transform_rows(self, texts) -> list[dict[int, float]]:
        """One ``{column: weight}`` dict per text: the sparse rows of the TF-IDF matrix."""
        return [self.weights(self.vocabulary_terms(t)) for t in texts]

    def transform_dense(self, texts, columns=None):
        """Dense float64 array, shape (n_texts, n_features) or (n_texts, len(columns)).

        ``columns`` (a sequence of feature indices) keeps only those, in that order: the tree
        evaluator needs only the features its splits use.
        """
        import numpy as np

        rows = self.transform_rows(texts)
        if columns is None:
            out = np.zeros((len(rows), self.n_features))
            for i, r in enumerate(rows):
                for j, v in r.items():
                    out[i, j] = v
            return out
        pos = {int(c): k for k, c in enumerate(columns)}
        out = np.zeros((len(rows), len(pos)))
        for i, r in enumerate(rows):
            for j, v in r.items():
                k = pos.get(j)
                if k is not None:
                    out[i, k] = v
        return out

    def transform_csr(self, texts):
        """scipy CSR matrix (n_texts, n_features), for training and evaluation only."""
        import numpy as np
        import scipy.sparse as sp

        rows = self.transform_rows(texts)
        indptr = np.zeros(len(rows) + 1, dtype=np.int64)
        indptr[1:] = np.cumsum([len(r) for r in rows])
        indices = np.fromiter((j for r in rows for j in sorted(r)), dtype=np.int32, count=int(indptr[-1]))
        data = np.fromiter((r[j] for r in rows for j in sorted(r)), dtype=np.float64, count=int(indptr[-1]))
        return sp.csr_matrix((data, indices, indptr), shape=(len(rows), self.n_features))

    def to_json(self) -> dict:
        """Plain-data form for the model directory (``features.json``)."""
        return {"terms": self.terms, "idf": self.idf, "stop_words": self.stop_words,
                "stem_exceptions": self.stem_exceptions, "ngram_max": self.ngram_max,
                "sublinear_tf": self.sublinear_tf, "stem": self.stem}

    @classmethod
    def from_json(cls, data: dict) -> "TfidfFeatures":
        return cls(**data)


def fit_tfidf(texts, params: dict | None = None):
    """Fit TF-IDF on ``texts`` (list of str) with scikit-learn; returns ``(features, X)``.

    ``X`` is scikit-learn's CSR matrix, shape (n_texts, n_features), float64.  Imports
    scikit-learn and nltk: call it from training and evaluation only.
    """
    import numpy as np
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS, TfidfVectorizer

    from .stemming import stem_exceptions, training_stemmer

    p = {**DEFAULT_TFIDF, **(params or {})}
    stop = sorted(ENGLISH_STOP_WORDS)
    stem = training_stemmer() if p["stem"] else None
    analyzer = Analyzer(stem=stem, stop_words=stop, ngram_max=p["ngram_max"])
    vec = TfidfVectorizer(analyzer=analyzer, min_df=p["min_df"], max_df=p["max_df"], max_features=p["max_features"],
                          sublinear_tf=p["sublinear_tf"], dtype=np.float64)
    X = vec.fit_transform(texts)
    exceptions = {}
    if stem is not None:
        tokens = {tok for t in texts for tok, _ in Analyzer(stop_words=stop).tokens(t)}
        exceptions = stem_exceptions(tokens, stem)
    terms = [None] * len(vec.vocabulary_)
    for t, j in vec.vocabulary_.items():
        terms[j] = t
    feats = TfidfFeatures(terms=terms, idf=[float(v) for v in vec.idf_], stop_words=stop,
                          stem_exceptions=exceptions, ngram_max=p["ngram_max"],
                          sublinear_tf=p["sublinear_tf"], stem=p["stem"])
    feats._sklearn = vec  # for tests comparing the two transforms; never saved
    return feats, X


def dump_json(obj, fh):
    """Compact, deterministic JSON (sorted keys) for model files."""
    json.dump(obj, fh, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
