"""Optional features beyond the bag of stemmed words, each a setting of the fitted features
(``features.json``), so a model trained without them reads text exactly as before.

* ``negation``: tokens in the scope of "without", "no", "not", "unlike", "instead of",
  "rather than", "no need for" (up to the next punctuation, at most :data:`NEG_SCOPE`
  tokens), and the word before "-free", become negated terms ``!stem``: "training-free,
  without fine-tuning" gives ``!train`` and ``!fine !tune``, never ``fine tune``.  Done by
  one rewrite of the folded text (:func:`mark_negation`): each such token gets the prefix
  :data:`NEG_MARK`, which both analyzers read as "negated".
* ``cues``: bigrams that stop-word removal breaks, a cue word and its neighbour over the
  token sequence *with* stop words: "we propose" -> ``@we propos``, "this survey" ->
  ``@this survey``, "participants were" -> ``particip @were``.
* ``title`` / ``claims`` (training-side screening only): unigrams of title tokens (``t:stem``)
  and of tokens in sentences with a first-person claim (``c:stem``).
* ``char``: character n-grams of each kept token (``#tok#`` padded), ``~gram`` (screening only).

:class:`FeatureAnalyzer` is the training side (handed to scikit-learn); the label-time side of
``negation`` and ``cues`` is in :class:`tagger.model.features._BatchAnalyzer` (with :func:`cue_bigrams`).
"""

from __future__ import annotations

import re

from ..text import _MISSING, _TOKEN_RE, Analyzer, token_text

#: prefix of a negated token in the rewritten text (letters only, so it stays part of the run)
NEG_MARK = "xnegx"
NEG_MARK_BYTES = NEG_MARK.encode("ascii")
#: most tokens a negation scope covers
NEG_SCOPE = 5
#: punctuation that ends a negation scope or a sentence
_NEG_RE = re.compile(r"\b(?:no need for|instead of|rather than|without|unlike|not|no)\b([^.,;:!?()\[\]]*)")
_FREE_RE = re.compile(r"\b([a-z0-9]+)-free\b")
_RUN_RE = re.compile(r"[a-z0-9]+")
#: cue words: the first word of a cue bigram (we propose, our results, this survey) ...
CUE_FIRST = frozenset({"we", "our", "this", "these", "here"})
#: ... or its second (participants were)
CUE_SECOND = frozenset({"were", "was"})
CUE = "@"
NEG = "!"
#: a title and its abstract, joined for the title namespace (screening): TITLE_SEP between them
TITLE_SEP = "\x1e"
_SENT_RE = re.compile(r"(?<=[.!?])\s+")
_CLAIM_RE = re.compile(r"\b(?:we|our|this paper)\b")


def _mark_scope(m: re.Match) -> str:
    scope = m.group(1)
    scope = _RUN_RE.sub(lambda r: r.group() if r.group().startswith(NEG_MARK) else NEG_MARK + r.group(),
                        scope, count=NEG_SCOPE)
    return m.group()[: m.start(1) - m.start()] + scope


def mark_negation(folded: str) -> str:
    """``folded`` (a :func:`tagger.text.token_text`) with every negated token prefixed by
    :data:`NEG_MARK`.  The runs of the result are those of ``folded`` one for one (only
    their spelling changes), so token counts and abstention are unaffected."""
    if "-free" in folded:
        folded = _FREE_RE.sub(lambda m: NEG_MARK + m.group(1) + " free", folded)
    if "no" not in folded and "without" not in folded and "unlike" not in folded and "instead" not in folded \
            and "rather" not in folded:
        return folded
    return _NEG_RE.sub(_mark_scope, folded)


class FeatureAnalyzer(Analyzer):
    """:class:`tagger.text.Analyzer` plus the optional features of this module.

    Extra parameters (all off by default): ``negation``, ``cues``, ``title``, ``claims`` (bools),
    ``char`` (n, the character n-gram length, or 0).  Calling it returns the terms (str, with
    repeats) of one text: the plain analyzer's unigrams and n-grams (negated tokens as
    ``!stem``), then cue bigrams, namespaced unigrams and character n-grams.
    """

    def __init__(self, stem=None, stop_words=frozenset(), ngram_max: int = 2, *, negation=False, cues=False,
                 title=False, claims=False, char=0):
        super().__init__(stem=stem, stop_words=stop_words, ngram_max=ngram_max)
        self.negation, self.cues, self.title, self.claims, self.char = negation, cues, title, claims, char

    def _stem_of(self, tok: str):
        """Stem of a (possibly negated) token, None for stop words and one-letter tokens."""
        neg = self.negation and tok.startswith(NEG_MARK) and len(tok) > len(NEG_MARK)
        base = tok[len(NEG_MARK):] if neg else tok
        if neg and base.isdigit():
            return None, base  # a negated number: no token, as the number itself
        s = self._cache.get(base, _MISSING)
        if s is _MISSING:
            s = self._stem_new(base)
        return (NEG + s if neg and s is not None else s), base

    def folded_tokens(self, text: str) -> list[str]:
        """The tokens (letters and digits, with a letter) of ``text`` as the analyzer reads them,
        stop words included; negated ones carry :data:`NEG_MARK`."""
        t = token_text(text)
        if self.negation:
            t = mark_negation(t)
        return _TOKEN_RE.findall(t)

    def tokens(self, text: str) -> list[tuple[str, str]]:
        out = []
        for tok in self.folded_tokens(text):
            s, base = self._stem_of(tok)
            if s is not None:
                out.append((base, s))
        return out

    def __call__(self, text: str) -> list[str]:
        body = text
        title = ""
        if TITLE_SEP in text:
            title, body = text.split(TITLE_SEP, 1)
            text = f"{title}. {body}"
        toks = self.folded_tokens(text)
        stems = [self._stem_of(t) for t in toks]
        terms = self.terms_from_stems([s for s, _ in stems if s is not None])
        if self.cues:
            for (a, (sa, _)), (b, (sb, _)) in zip(zip(toks, stems), zip(toks[1:], stems[1:])):
                if a in CUE_FIRST and sb is not None:
                    terms.append(f"{CUE}{a} {sb}")
                elif b in CUE_SECOND and sa is not None:
                    terms.append(f"{sa} {CUE}{b}")
        if self.title and title:
            terms.extend("t:" + s for _, s in self.tokens(title))
        if self.claims:
            for sent in _SENT_RE.split(token_text(body)):
                if _CLAIM_RE.search(sent):
                    terms.extend("c:" + s for _, s in self.tokens(sent))
        if self.char:
            n = self.char
            for base, s in self.tokens(text):
                w = f"#{base}#"
                terms.extend("~" + w[i:i + n] for i in range(len(w) - n + 1))
        return terms


def cue_bigrams(keys, kcols, P, cue_first, cue_second, ids, doc, part):
    """Label time: the ``(rows, cols)`` (int64 arrays) of the cue bigrams of a batch.

    ``keys``/``kcols``: the vocabulary's sorted bigram keys and their columns; ``P``: the key
    base; ``cue_first``/``cue_second``: per run id the part of ``@word`` (-1: not a cue);
    ``ids``, ``doc``, ``part``: run id, row and part of every token of the batch in order
    (stop words included, numbers not).  A cue word then a kept token (``@we propos``), or a
    kept token then a cue word (``particip @were``), within one row.
    """
    import numpy as np

    if len(ids) < 2:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    same = doc[:-1] == doc[1:]
    first, second = cue_first[ids], cue_second[ids]
    a = same & (first[:-1] >= 0) & (part[1:] >= 0)
    b = same & (second[1:] >= 0) & (part[:-1] >= 0)
    key = np.concatenate([first[:-1][a] * P + part[1:][a], part[:-1][b] * P + second[1:][b]])
    kdoc = np.concatenate([doc[:-1][a], doc[:-1][b]])
    pos = np.minimum(np.searchsorted(keys, key), len(keys) - 1)
    hit = keys[pos] == key if len(keys) else np.zeros(len(key), bool)
    return kdoc[hit], kcols[pos[hit]]
