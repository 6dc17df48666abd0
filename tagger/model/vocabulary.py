"""A model's vocabulary as arrays: ``vocabulary.npz`` beside ``features.json``.

The linear base reads every term of the corpus (about 104,000 on the 8,032), and reading them
as JSON strings, then building the label-time lookup tables term by term, took about 0.2 s at
every start of ``tagger label``.  The file holds the terms (one UTF-8 blob, newline-separated:
a term never holds a newline), their idf, and the tables :func:`ngram_tables` makes of them,
so a start reads a few arrays.  Models without the file keep terms and idf in ``features.json``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

#: the arrays of vocabulary.npz besides the n-gram tables (``keys2``/``cols2``, ...)
ARRAYS = ("terms", "idf", "words", "unigram_col")


def ngram_tables(terms):
    """Label-time lookup tables of ``terms`` (list of str, column order).

    Returns ``(words, unigram_col, ngrams)``: ``words`` (list of str) the distinct words of
    the terms in order of first appearance (a word's part number is its place there);
    ``unigram_col`` (int64, max(len(words), 1)) the column of each word as a one-word term, -1 when
    it is none; ``ngrams`` a list of ``(n, keys, cols)`` per term length n >= 2, ``keys``
    (int64, sorted) the base-``len(words)`` number of the term's parts and ``cols`` their
    columns.  Raises ValueError when n-grams of that many words overflow 64-bit keys.
    """
    import numpy as np

    if all(" " not in t for t in terms):  # one-word terms only (a text space's): they are the words
        n = len(terms)
        return list(terms), (np.arange(n, dtype=np.int64) if n else np.full(1, -1, dtype=np.int64)), []
    parts: dict[str, int] = {}
    for t in terms:
        for w in t.split(" "):
            parts.setdefault(w, len(parts))
    P = max(len(parts), 1)
    unigram_col = np.full(P, -1, dtype=np.int64)
    grams: dict[int, tuple[list, list]] = {}
    for j, t in enumerate(terms):
        words = t.split(" ")
        if len(words) == 1:
            unigram_col[parts[t]] = j
            continue
        if P ** len(words) >= 2 ** 62:
            raise ValueError(f"{len(words)}-grams over {P} words do not fit 64-bit keys")
        key = 0
        for w in words:
            key = key * P + parts[w]
        keys, cols = grams.setdefault(len(words), ([], []))
        keys.append(key)
        cols.append(j)
    ngrams = []
    for n, (keys, cols) in sorted(grams.items()):
        keys, cols = np.array(keys, dtype=np.int64), np.array(cols, dtype=np.int64)
        o = np.argsort(keys, kind="stable")
        ngrams.append((n, keys[o], cols[o]))
    return list(parts), unigram_col, ngrams


def _blob(strings):
    import numpy as np

    if any("\n" in s for s in strings):
        raise ValueError("a term holds a newline")
    return np.frombuffer("\n".join(strings).encode("utf-8"), dtype=np.uint8)


def _strings(blob) -> list[str]:
    text = blob.tobytes().decode("utf-8")
    return text.split("\n") if text else []


class Terms(Sequence):
    """The terms of a ``vocabulary.npz``, in column order, read from the file on first use
    (``tagger label`` needs only their number); a read-only sequence of str."""

    def __init__(self, path, n: int):
        self._path, self._n, self._list = path, n, None

    def _terms(self) -> list[str]:
        if self._list is None:
            import numpy as np

            with np.load(self._path, allow_pickle=False) as z:
                self._list = _strings(z["terms"])
            if len(self._list) != self._n:
                raise ValueError(f"{self._path}: {len(self._list)} terms for {self._n} idf values")
        return self._list

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, i):
        return self._terms()[i]

    def __iter__(self):
        return iter(self._terms())


def save_features(directory, feats) -> None:
    """Write ``features.json`` (settings, stop words, stem exceptions) and ``vocabulary.npz``
    (terms, idf, lookup tables; zip-compressed, read without pickle) of a
    :class:`~tagger.model.features.TfidfFeatures` into the model ``directory``."""
    import numpy as np

    from .features import dump_json

    directory = Path(directory)
    data = feats.to_json()
    terms, idf = list(data.pop("terms")), data.pop("idf")
    words, unigram_col, ngrams = feats.tables()
    arrays = {"terms": _blob(terms), "idf": np.asarray(idf, dtype=np.float64), "words": _blob(words),
              "unigram_col": unigram_col}
    for n, keys, cols in ngrams:
        arrays[f"keys{n}"], arrays[f"cols{n}"] = keys, cols
    with open(directory / "vocabulary.npz", "wb") as fh:
        np.savez_compressed(fh, **arrays)
    with open(directory / "features.json", "w", encoding="utf-8") as fh:
        dump_json(data, fh)


def load_features(directory):
    """The :class:`~tagger.model.features.TfidfFeatures` of a model ``directory``, with its
    lookup tables when ``vocabulary.npz`` is there.  Raises OSError, ValueError or KeyError
    for missing or damaged files (the caller names the model)."""
    import numpy as np

    from .features import TfidfFeatures

    directory = Path(directory)
    data = json.loads((directory / "features.json").read_text(encoding="utf-8"))
    if "terms" in data:  # a model from before vocabulary.npz
        return TfidfFeatures.from_json(data)
    path = directory / "vocabulary.npz"
    with np.load(path, allow_pickle=False) as z:
        words, idf, unigram_col = _strings(z["words"]), z["idf"], z["unigram_col"]
        ngrams = [(int(k[4:]), z[k], z[f"cols{k[4:]}"]) for k in sorted(z.files) if k.startswith("keys")]
    if len(unigram_col) != max(len(words), 1) or any(len(k) != len(c) for _, k, c in ngrams):
        raise ValueError(f"{path}: the lookup tables differ in length")
    feats = TfidfFeatures.from_json({**data, "terms": Terms(path, len(idf)), "idf": idf})
    feats._tables = (words, unigram_col, ngrams)
    return feats
