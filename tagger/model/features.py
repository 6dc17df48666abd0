"""TF-IDF features: fitted by scikit-learn in training, applied by our own code at label time.

Training (:func:`fit_tfidf`) runs scikit-learn's ``TfidfVectorizer`` with our
:class:`tagger.text.Analyzer` and keeps what it learned (vocabulary in column order, idf) as
plain data in :class:`TfidfFeatures`.  Labelling applies that data batch-wise in numpy
(:meth:`TfidfFeatures.transform`, :class:`_BatchAnalyzer`): importing scikit-learn costs about
1 s, the transform itself is simple, and ``tests/test_features.py`` checks ours equals
``TfidfVectorizer.transform`` to 1e-12.  The formula is scikit-learn's: ``tf = 1 + ln(count)`` (``sublinear_tf``), times
``idf = ln((1 + n) / (1 + df)) + 1`` (``smooth_idf``), each row scaled to unit L2 norm.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from collections import defaultdict
from itertools import count, islice

from .. import text as _text
from ..text import FUNCTION_WORDS, Analyzer, run_bytes, token_text

#: version of what turns a text into feature columns here (analyzer, n-gram keys, weighting);
#: bump it when a saved model's features would come out differently, so old models are refused
#: (:func:`feature_version`).  The optional features screened in issue 10 (negation, cues) were
#: settings in ``features.json``; their code was deleted, and a model that turned one on is
#: refused by :func:`tagger.model.loading.check_removed_options`.
FEATURES_VERSION = 1


def feature_version() -> dict:
    """``{"features": FEATURES_VERSION, "normaliser": text.NORMALIZER_VERSION}``: what the
    manifest records and :meth:`tagger.model.Model.load` compares (ints)."""
    return {"features": FEATURES_VERSION, "normaliser": _text.NORMALIZER_VERSION}

#: vectorizer settings: min_df=2 drops hapaxes (they cannot generalise), max_df=0.9 drops terms
#: in nearly every abstract, and the 8,000 most frequent terms are kept: on the 1,638 abstracts
#: of round one, 2,000 / 4,000 / 8,000 / all 23,500 terms gave micro-F1 0.800-0.802 alike; on
#: the 5,035 of round two, 8,000 terms beat 4,000 by +0.003 / +0.006 micro / macro-F1 (screen,
#: 3 fold seeds) and +0.005 / +0.005 (nested, tagger evaluate), no facet losing 0.005
#: (benchmarks/tune_model.py, fixtures/README.md).  Each booster file grows with the feature
#: count (LightGBM writes every feature's range; 23,500 terms made a 31 MB model): they are gzipped.
#: Since issue 18 the vocabulary keeps every term (``max_features`` None: 104,173 on the
#: 8,032) for the linear base, and the boosters read the ``tree_terms`` in most abstracts
#: (:func:`tagger.model.training.tree_columns`): fixtures/README.md, "Vocabulary of the linear base".
DEFAULT_TFIDF = {"ngram_max": 2, "min_df": 2, "max_df": 0.9, "max_features": None, "tree_terms": 8000,
                 "sublinear_tf": True, "stem": True}


#: optional features whose code was removed (fixtures/README.md, "Second round"); a model's
#: features.json may name them, switched off, under "extra" or at its top level
REMOVED_OPTIONS = ("negation", "cues", "title", "claims", "char")


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
        Tokens where the label-time stemmer must give nltk's stem (see :mod:`tagger.model.stemming`).
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
        self._index = None
        self._analyzer = None
        self._batcher = None
        self._tables = None  # what tables() returns, when read from a model's vocabulary.npz

    def __getstate__(self):
        """Pickled (for worker processes) without the batch analyzer, which holds a compiled
        automaton that cannot be pickled and is rebuilt on first use."""
        return {**self.__dict__, "_batcher": None}

    @property
    def index(self) -> dict[str, int]:
        """Term -> column, built on first use."""
        if self._index is None:
            self._index = {t: i for i, t in enumerate(self.terms)}
        return self._index

    def tables(self):
        """The label-time lookup tables of the vocabulary, :func:`tagger.model.vocabulary.ngram_tables`."""
        if self._tables is None:
            from .vocabulary import ngram_tables

            self._tables = ngram_tables(self.terms)
        return self._tables

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

    def transform(self, texts, tokens=None) -> "FeatureBatch":
        """The TF-IDF rows of ``texts`` (a sequence of str) as a sparse :class:`FeatureBatch`.
        ``tokens``: :func:`tokenize` of the same texts, when another vocabulary (a text space)
        reads them too (one tokenisation for both).

        Equal to scikit-learn's ``TfidfVectorizer.transform`` with this model's vocabulary and
        idf within 1e-12 (``tests/test_features.py``), computed batch-wise in numpy: each text
        is tokenised once (:func:`tagger.text.token_text`), each distinct token is stemmed once
        per process, and n-grams are looked up as integer keys.
        """
        if self._batcher is None:
            self._batcher = _BatchAnalyzer(self)
        return self._batcher.transform(list(texts), tokens)

    def transform_pair(self, other: "TfidfFeatures", texts) -> tuple["FeatureBatch", "FeatureBatch"]:
        """``(self.transform(texts), other.transform(texts))`` (``other``: a text space's vocabulary),
        one tokenisation and one id lookup per token for both (:meth:`_BatchAnalyzer.ids_from`)."""
        texts = list(texts)
        for f in (self, other):
            if f._batcher is None:
                f._batcher = _BatchAnalyzer(f)
        tokens = tokenize(texts)
        ids = self._batcher.token_ids(tokens[0])
        mine = self._batcher.transform(texts, tokens, ids)
        theirs = other._batcher.transform(texts, tokens, other._batcher.ids_from(self._batcher, ids))
        return mine, theirs

    def transform_rows(self, texts) -> list[dict[int, float]]:
        """One ``{column: weight}`` dict per text: the sparse rows of the TF-IDF matrix."""
        b = self.transform(texts)
        rows = [{} for _ in range(b.n_rows)]
        for i, j, v in zip(b.row.tolist(), b.col.tolist(), b.value.tolist()):
            rows[i][j] = v
        return rows

    def transform_dense(self, texts, columns=None):
        """Dense float64 array, shape (n_texts, n_features) or (n_texts, len(columns)) when
        ``columns`` (a sequence of feature indices) keeps only those, in that order."""
        X = self.transform(texts).dense(self.n_features)
        return X if columns is None else X[:, list(columns)]

    def transform_csr(self, texts):
        """scipy CSR matrix (n_texts, n_features), for training, evaluation and explanations."""
        return self.transform(texts).csr(self.n_features)

    def to_json(self) -> dict:
        """Plain-data form for the model directory (``features.json``)."""
        return {"terms": list(self.terms), "idf": [float(v) for v in self.idf], "stop_words": self.stop_words,
                "stem_exceptions": self.stem_exceptions, "ngram_max": self.ngram_max,
                "sublinear_tf": self.sublinear_tf, "stem": self.stem}

    @classmethod
    def from_json(cls, data: dict) -> "TfidfFeatures":
        """From :meth:`to_json`'s form; an ``extra`` (older models: the removed optional features,
        all off, as :func:`tagger.model.loading.check_removed_options` has checked) is ignored.
        Raises ValueError naming a field this version does not know (another version's model)."""
        import dataclasses

        known = {f.name for f in dataclasses.fields(cls)} | set(REMOVED_OPTIONS)  # those: off, as checked
        unknown = sorted(k for k in data if k not in known and k != "extra")
        if unknown:
            raise ValueError(f"features.json has {'fields' if len(unknown) > 1 else 'a field'} this version of "
                             f"tagger does not know: {', '.join(unknown)}")
        return cls(**{k: v for k, v in data.items() if k != "extra" and k not in REMOVED_OPTIONS})


@dataclass
class FeatureBatch:
    """TF-IDF rows of a batch of texts, sparse, in coordinate form sorted by row then column.

    Attributes
    ----------
    n_rows : int
    row, col : int64 arrays, shape (nnz,)
    value : float64 array, shape (nnz,)
        The weights; each row has unit L2 norm (a text without vocabulary terms has no entries).
    n_tokens : int64 array, shape (n_rows,)
        Tokens of each text (stop words included, pure numbers not).
    n_function_words : int64 array, shape (n_rows,)
        How many of those tokens are common English function words (``text.FUNCTION_WORDS``),
        for :func:`tagger.model.abstain.abstain_reason`.
    """

    n_rows: int
    row: "np.ndarray"
    col: "np.ndarray"
    value: "np.ndarray"
    n_tokens: "np.ndarray"
    n_function_words: "np.ndarray"
    #: a text space's components of the same texts, float64 (n_rows, k), or None
    #: (:meth:`tagger.model.Model.transform` sets it)
    components: "np.ndarray | None" = None

    def dense(self, n_features: int):
        """Dense float64 array, shape (n_rows, n_features)."""
        import numpy as np

        X = np.zeros((self.n_rows, n_features))
        X[self.row, self.col] = self.value
        return X

    def csr(self, n_features: int):
        """scipy CSR matrix, shape (n_rows, n_features), float64 (imports scipy)."""
        import numpy as np
        import scipy.sparse as sp

        indptr = np.searchsorted(self.row, np.arange(self.n_rows + 1))
        return sp.csr_matrix((self.value.copy(), self.col.astype(np.int32), indptr), shape=(self.n_rows, n_features))


class _BatchAnalyzer:
    """Label-time TF-IDF of whole batches: :class:`tagger.text.Analyzer` plus the vocabulary
    lookup and weighting, in numpy.

    Every distinct run of letters and digits gets an integer id (a dictionary, filled as
    runs are first seen and emptied when it reaches ``MAX_TOKENS`` so memory stays bounded),
    with two facts per id: its *part* (the id of its stem among the words of vocabulary
    terms; -1 for a kept token whose stem is in no term; -2 for a stop word or one-letter
    token, which n-grams skip; -3 for a pure number, no token at all) and whether it is a
    function word.  A batch is then a few numpy steps: parts of all runs, unigram columns,
    n-gram keys ``part1 * P + part2`` found by binary search in the sorted keys of the
    vocabulary's n-grams, counts, ``1 + ln(count)`` times idf, unit L2 norm per row.
    """

    MAX_TOKENS = 500_000

    def __init__(self, feats: TfidfFeatures):
        import numpy as np

        from .stemming import label_time_stemmer

        self.stem = label_time_stemmer(feats.stem_exceptions) if feats.stem else None
        self._stop_bytes = frozenset(w.encode("ascii", "replace") for w in feats.stop_words)
        self._function_words = frozenset(w.encode("ascii") for w in FUNCTION_WORDS)  # as runs
        self.sublinear = feats.sublinear_tf
        self.idf = np.asarray(feats.idf, dtype=np.float64)
        self.n_features = len(feats.terms)
        words, self.unigram_col, self.ngrams = feats.tables()  # (n, sorted keys, their columns)
        self.parts = dict(zip(words, range(len(words))))
        self.P = max(len(self.parts), 1)
        self._reset()

    def _reset(self) -> None:
        import numpy as np

        #: run -> id; looking up a run not seen before inserts it with the next id
        self.ids: dict[bytes, int] = defaultdict(count().__next__)
        #: :meth:`ids_from`'s array from another analyzer's table (``_from``) into this one
        self._from = self._from_into = self._map = None
        self.n_known = 0  # ids below this have their facts in the arrays below
        self.part = np.empty(4096, dtype=np.int64)
        self.function_word = np.empty(4096, dtype=bool)

    def _classify_new(self) -> None:
        """Part and function-word flag of the runs added to ``ids`` since the last call
        (the dictionary keeps insertion order, so they are its last keys); the ones that can
        be terms are stemmed in one call."""
        import numpy as np

        old, total = self.n_known, len(self.ids)
        runs = list(islice(reversed(self.ids), total - old))[::-1]
        while len(self.part) < total:  # grown by doubling: amortised O(1) per run
            self.part = np.concatenate([self.part, np.empty_like(self.part)])
            self.function_word = np.concatenate([self.function_word, np.empty_like(self.function_word)])
        stop, part, words, where = self._stop_bytes, [], [], []
        for k, r in enumerate(runs):
            if r.isdigit():
                part.append(-3)
            elif len(r) < 2 or r in stop:
                part.append(-2)
            else:
                part.append(-1)
                words.append(r.decode("ascii"))
                where.append(k)
        get = self.parts.get
        stems = self.stem.stem_words(words) if self.stem else words
        for k, s in zip(where, stems):
            part[k] = get(s, -1)
        self.part[old:total] = part
        self.function_word[old:total] = [r in self._function_words for r in runs]
        self.n_known = total

    def token_ids(self, runs) -> "np.ndarray":
        """Ids of ``runs`` (list of bytes), int64 (len(runs),); new runs get new ids."""
        import numpy as np

        if len(self.ids) > self.MAX_TOKENS:
            self._reset()
        return np.fromiter(map(self.ids.__getitem__, runs), dtype=np.int64, count=len(runs))

    def ids_from(self, other: "_BatchAnalyzer", other_ids) -> "np.ndarray":
        """Our ids of the runs ``other`` calls ``other_ids``: an array from its ids to ours, extended
        by the runs it added since the last call, rebuilt when either table was emptied."""
        import numpy as np

        if len(self.ids) > self.MAX_TOKENS:
            self._reset()
        if self._from is not other.ids or self._from_into is not self.ids:
            self._from, self._from_into, self._map = other.ids, self.ids, np.empty(0, dtype=np.int64)
        new = len(other.ids) - len(self._map)
        if new > 0:  # other's table keeps insertion order: its new runs are its last keys
            runs = list(islice(reversed(other.ids), new))[::-1]
            self._map = np.concatenate([self._map, np.fromiter(map(self.ids.__getitem__, runs), dtype=np.int64,
                                                               count=new)])
        return self._map[other_ids]

    def transform(self, texts: list[str], tokens=None, ids=None) -> FeatureBatch:
        """The batch of ``texts``; ``tokens`` (:func:`tokenize`) and ``ids`` when already known."""
        import numpy as np

        n_rows = len(texts)
        runs, lens = tokens if tokens is not None else tokenize(texts)
        if ids is None:
            ids = self.token_ids(runs)
        if len(self.ids) > self.n_known:
            self._classify_new()
        doc = np.repeat(np.arange(n_rows), lens)
        part = self.part[ids]
        is_token = part != -3
        n_tokens = np.bincount(doc[is_token], minlength=n_rows)
        n_function = np.bincount(doc[self.function_word[ids]], minlength=n_rows)
        kept = part >= -1
        seq, sdoc = part[kept], doc[kept]
        rows, cols = [], []
        known = seq >= 0
        uc = self.unigram_col[seq[known]]
        hit = uc >= 0
        rows.append(sdoc[known][hit])
        cols.append(uc[hit])
        for n, keys, kcols in self.ngrams:
            m = len(seq) - n + 1
            if m <= 0:
                continue
            ok = sdoc[:m] == sdoc[n - 1:]  # sdoc is sorted: first and last in the same row
            key = np.zeros(m, dtype=np.int64)
            for i in range(n):
                s = seq[i:i + m]
                ok &= s >= 0
                key = key * self.P + s
            key, kdoc = key[ok], sdoc[:m][ok]
            pos = np.minimum(np.searchsorted(keys, key), len(keys) - 1)
            hit = keys[pos] == key
            rows.append(kdoc[hit])
            cols.append(kcols[pos[hit]])
        flat = np.concatenate(rows) * self.n_features + np.concatenate(cols)
        flat, counts = np.unique(flat, return_counts=True)
        row, col = flat // self.n_features, flat % self.n_features
        tf = np.log(counts) + 1.0 if self.sublinear else counts.astype(np.float64)
        value = tf * self.idf[col]
        norm = np.sqrt(np.bincount(row, weights=value * value, minlength=n_rows))
        value /= norm[row]
        return FeatureBatch(n_rows, row, col, value, n_tokens, n_function)


def tokenize(texts) -> tuple[list[bytes], list[int]]:
    """The runs of letters and digits of each text (:func:`tagger.text.run_bytes` of its
    :func:`~tagger.text.token_text`), all in one list, and how many each text has: what
    :class:`_BatchAnalyzer` reads."""
    runs: list[bytes] = []
    lens = []
    for t in texts:
        r = run_bytes(token_text(t))
        runs += r
        lens.append(len(r))
    return runs, lens


def fit_tfidf(texts, params: dict | None = None):
    """Fit TF-IDF on ``texts`` (list of str) with scikit-learn; returns ``(features, X)``.

    ``X`` is scikit-learn's CSR matrix, shape (n_texts, n_features), float64.  Imports
    scikit-learn and nltk: call it from training and evaluation only.
    """
    import numpy as np
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS, TfidfVectorizer

    from .stemming import stem_exceptions, training_stemmer

    p = {**DEFAULT_TFIDF, **(params or {})}
    unknown = sorted(set(p) - set(DEFAULT_TFIDF))
    if unknown:  # e.g. the optional features screened in issue 10, whose code was deleted
        raise ValueError(f"unknown TF-IDF settings {unknown}; known: {sorted(DEFAULT_TFIDF)}")
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
