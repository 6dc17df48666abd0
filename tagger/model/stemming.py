"""Stemming that is nltk's at training time and nltk-free at label time.

Training stems with nltk's Snowball (English) stemmer.  Importing ``nltk.stem.snowball``
imports all of nltk (about 1.3 s, ``../shared/perf-notes.md``), so ``tagger label`` uses the
``snowballstemmer`` package (the Snowball project's own Python port, ~2 ms import) instead,
which runs the Snowball project's C code through PyStemmer when that is installed (it is a
dependency: stemming new words in pure Python took a third of ``tagger label``'s time).
The two agree on all but a few dozen of ~66,000 arXiv word types (nltk keeps ``-ize``/``-ate``
after ``-ization``/``-ational``: ``quantization`` -> ``quantize``, not ``quantiz``), so training
records every token of its corpus on which they differ (:func:`stem_exceptions`) in the model,
and the label-time stemmer applies those first.  Over the training vocabulary the two are
therefore equal, which ``tests/test_stemming.py`` checks.
"""

from __future__ import annotations


def training_stemmer():
    """nltk's English Snowball stemmer as a ``str -> str`` function (imports nltk)."""
    from nltk.stem.snowball import SnowballStemmer

    return SnowballStemmer("english").stem


def label_time_stemmer(exceptions: dict[str, str] | None = None) -> "LabelTimeStemmer":
    """A stemmer equal to :func:`training_stemmer` on every token in ``exceptions``'s corpus.

    ``exceptions`` maps tokens to nltk's stems where ``snowballstemmer`` differs (from the model).
    """
    return LabelTimeStemmer(exceptions)


class LabelTimeStemmer:
    """``snowballstemmer``'s English stemmer with a table of exceptions applied first.

    Call it on one token (``str -> str``) or use :meth:`stem_words` on a list (one call into
    PyStemmer's C code for the whole list).
    """

    def __init__(self, exceptions: dict[str, str] | None = None):
        import snowballstemmer

        self._stemmer = snowballstemmer.stemmer("english")
        if hasattr(self._stemmer, "maxCacheSize"):  # PyStemmer: callers keep their own cache,
            self._stemmer.maxCacheSize = 0  # and its own costs 0.6 us a word (1.0 against 0.4)
        self.exceptions = dict(exceptions or {})

    def __call__(self, token: str) -> str:
        s = self.exceptions.get(token)
        return s if s is not None else self._stemmer.stemWord(token)

    def stem_words(self, tokens: list[str]) -> list[str]:
        """The stems of ``tokens``, in order."""
        exc = self.exceptions
        return [exc.get(t, s) for t, s in zip(tokens, self._stemmer.stemWords(tokens))]


def stem_exceptions(tokens, reference) -> dict[str, str]:
    """``{token: reference(token)}`` for each token where ``snowballstemmer`` gives another stem."""
    base = label_time_stemmer()
    return {t: reference(t) for t in sorted(set(tokens)) if base(t) != reference(t)}
