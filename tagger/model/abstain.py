"""Abstention: the records the model does not tag, and why (README "Abstention").

A record is not tagged when its abstract is too short to judge (fewer than :data:`MIN_WORDS`
words), or is not English: mostly letters of a script other than Latin, or under
:data:`MIN_ENGLISH_SHARE` of its tokens common English function words.  Each test returns the
reason (a short phrase) or None; :meth:`tagger.model.Model.predict` applies them.
"""

from __future__ import annotations

#: abstention: fewer words than this is too short to judge (a title alone is ~10 words,
#: the shortest real abstracts in the corpora ~40); see README "Abstention"
MIN_WORDS = 20
#: abstention: share of a text's tokens (title and abstract) that are common English function
#: words (``text.FUNCTION_WORDS``: "the", "of", "we"...); over all 14,621 abstracts of
#: arxiv-2025-uniform (>= 20 words) the lowest share is 7.8% (0.1% quantile 10.2%, median
#: 19.8%), while German, French, Spanish, Italian and Portuguese abstracts score 0% and a
#: Dutch one 5.2% (tests/test_model.py)
MIN_ENGLISH_SHARE = 0.05


def too_short_reason(abstract: str, min_words: int = MIN_WORDS) -> str | None:
    """"too short to judge: ..." when ``abstract`` (its markup and format characters
    removed: ``text.clean``) has fewer than ``min_words`` whitespace-separated words, else
    None; but a short text mostly of letters that are not Latin (Chinese, Japanese, Thai:
    scripts written without spaces) is "not English: ..." (:func:`script_reason`)."""
    if "<" in abstract or "&" in abstract or not abstract.isascii():
        from ..text import clean

        abstract = clean(abstract)
    n_words = len(abstract.split(None, min_words))  # stops splitting at min_words (exact below it)
    if n_words >= min_words:
        return None
    return script_reason(abstract) or f"too short to judge: {n_words} word{'' if n_words == 1 else 's'}, fewer than {min_words}"


def script_reason(text: str) -> str | None:
    """"not English: ..." when most letters of ``text`` are not Latin letters (naming the
    script of the first of them, as Unicode does: CJK, HIRAGANA, THAI, ...), else None."""
    if text.isascii():
        return None
    import unicodedata

    letters = [c for c in text if c.isalpha()]
    other = [c for c in letters if not ("a" <= c.lower() <= "z" or 0xC0 <= ord(c) < 0x250 or 0x1E00 <= ord(c) < 0x1F00)]
    if not letters or len(other) * 2 <= len(letters):
        return None
    script = unicodedata.name(other[0], "OTHER").split()[0]
    return f"not English: {len(other) / len(letters):.0%} of the letters are {script}, not Latin"


def not_english_reason(n_tokens: int, n_function_words: int) -> str | None:
    """"not English: ..." when under ``MIN_ENGLISH_SHARE`` of a text's ``n_tokens`` tokens
    are common English function words (``text.FUNCTION_WORDS``), else None."""
    if n_tokens == 0:
        return "not English: no words in Latin letters"
    share = n_function_words / n_tokens
    if share < MIN_ENGLISH_SHARE:
        return f"not English: {share:.1%} English function words, fewer than {MIN_ENGLISH_SHARE:.0%}"
    return None


def abstain_reason(abstract: str, min_words: int = MIN_WORDS, title: str = "") -> str | None:
    """Why a record should not be tagged, or None: the rule :meth:`Model.predict` applies.

    Two cheap tests: fewer than ``min_words`` words in the abstract ("too short"), and, over
    the tokens of title and abstract (the model's own tokens, stop words included), a share
    of common English function words below ``MIN_ENGLISH_SHARE`` ("not English").
    """
    from ..text import FUNCTION_WORDS, RUN_RE, document_text, is_token, token_text

    reason = too_short_reason(abstract, min_words)
    if reason:
        return reason
    tokens = [r for r in RUN_RE.findall(token_text(document_text({"abstract": abstract, "title": title}))) if is_token(r)]
    return not_english_reason(len(tokens), sum(t in FUNCTION_WORDS for t in tokens))
