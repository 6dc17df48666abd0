"""Text normalisation and the analyzer that turns an abstract into TF-IDF terms.

Everything here is plain Python (``re``, ``unicodedata``; ``html`` for entities): ``tagger
label`` imports this module, and must not pay for scikit-learn or nltk.  Training hands
:class:`Analyzer` to scikit-learn's ``TfidfVectorizer(analyzer=...)``, so training and
labelling share one analyzer and cannot drift apart.  ``label``, ``filter``, ``bib`` and the
Python API all read text through it.

What the normalisation handles, in order (:func:`normalize`):

1. markup (:func:`strip_markup`): the tags of JATS (Crossref's ``<jats:p>``), MathML and
   HTML are removed (a heading element whose text is just "Abstract" goes entirely), then
   character entities are decoded (``&amp;`` -> ``&``); text like ``p < 0.05`` or ``<EOS>``
   is left alone;
2. Unicode format characters (category Cf: the soft hyphen U+00AD, the zero-width space
   U+200B, joiners, direction marks, a stray BOM) are removed, so that ``ima\u200bges`` is
   ``images``;
3. LaTeX as it appears in arXiv abstracts and BibTeX: accents (``{\\"o}``, ``\\'e``,
   ``\\v{C}``), escaped specials (``\\&``, ``\\%``), formatting commands (``\\emph{x}`` -> ``x``),
   inline math (``$\\alpha$`` -> ``alpha``), ``~`` ties and ``--`` dashes;
4. hard line breaks: a line ending in ``-`` joins the next line with the hyphen kept
   (arXiv wraps only at spaces, so such a hyphen is a real one, as in ``self-\\nsupervised``);
   every run of whitespace becomes one space;
5. Unicode: NFKC (ligatures, full-width forms), then, for matching, accents folded to ASCII
   (``Schrödinger`` and ``Schrodinger`` give the same term).

:data:`NORMALIZER_VERSION` names this behaviour; training writes it into the model's
manifest, since a model only fits text normalised as it was trained.
"""

from __future__ import annotations

import re
import unicodedata

#: the version of what :func:`normalize` and :func:`token_text` do to a text; raised with
#: every change that can change a term (1: LaTeX, soft hyphen, NFKC, folding; 2: markup,
#: entities and every format character removed)
NORMALIZER_VERSION = 2

# --- markup --------------------------------------------------------------------------------

#: elements of JATS (Crossref abstracts), MathML and HTML whose tags are removed; any tag
#: with a ``jats:``, ``mml:`` or ``m:`` prefix is removed too
MARKUP_ELEMENTS = frozenset("""
    abstract trans-abstract sec title p list list-item italic bold sc underline monospace roman
    overline strike styled-content named-content inline-formula disp-formula tex-math ext-link uri
    xref label caption fig table-wrap break email boxed-text def-list def-item term def
    statement disp-quote fn chem-struct alternatives inline-graphic graphic media preformat
    funding-statement
    math mi mo mn ms mtext mrow msub msup msubsup mfrac msqrt mroot munder mover munderover
    mtable mtr mtd mstyle mspace mpadded mphantom menclose mfenced semantics annotation
    annotation-xml mmultiscripts mprescripts
    html head body div span br hr i b u em strong small big sub sup a abbr acronym cite code
    kbd var samp q blockquote pre ul ol li dl dt dd h1 h2 h3 h4 h5 h6 section article header
    footer table thead tbody tfoot tr td th img font center tt del ins mark wbr nobr figure
    figcaption time
""".split())
#: tags whose removal leaves nothing between their neighbours (``H<sub>2</sub>O`` -> ``H2O``);
#: any other known tag leaves a space
_INLINE = frozenset("italic bold sc underline monospace roman overline sub sup i b u em strong small big span a "
                    "abbr acronym code kbd var samp tt font mark wbr nobr styled-content named-content "
                    "inline-formula tex-math mi mo mn ms mtext mrow msub msup msubsup mfrac msqrt mroot "
                    "munder mover munderover mstyle mspace mpadded mphantom menclose mfenced math "
                    "semantics".split())
#: an opening, closing or empty tag: a name, then only ``name="value"`` attributes (so that
#: ``a<b and c>d`` is not a tag)
_TAG_RE = re.compile(r"""<(/?)\s*(?:(jats|mml|m):)?([A-Za-z][A-Za-z0-9.-]*)"""
                     r"""((?:\s+[A-Za-z_:][\w:.-]*\s*=\s*(?:"[^"]*"|'[^']*'))*)\s*/?>""")
#: a heading whose text is just "Abstract": dropped with its text
_HEADING_RE = re.compile(r"""<((?:jats:)?(?:title|label)|h[1-6]|sec-title)\b[^<>]*>\s*abstract\s*[:.]?\s*"""
                         r"""</\1\s*>""", re.I)
_ENTITY_RE = re.compile(r"&(?:#\d+|#[xX][0-9a-fA-F]+|[A-Za-z][A-Za-z0-9]*);")


def _tag(m: re.Match) -> str:
    prefix, name = m.group(2), m.group(3).lower()
    if not prefix and name not in MARKUP_ELEMENTS:
        return m.group(0)  # <EOS>, <unk>: text, not markup
    return "" if name in _INLINE else " "


def strip_markup(text: str) -> str:
    """``text`` without the tags of JATS, MathML and HTML (a heading "Abstract" with its
    text), with character entities decoded (``&lt;`` -> ``<``, ``&#233;`` -> ``é``).

    ``<jats:p>We show ...</jats:p>`` -> `` We show ... ``; ``H<sub>2</sub>O`` -> ``H2O``;
    ``p < 0.05``, ``a<b and c>d`` and ``<EOS>`` are left as they are.  Decoding comes
    after the tags are removed, so ``&lt;p&gt;`` stays the text ``<p>``.
    """
    if "<" in text:
        if "bstract" in text or "BSTRACT" in text:
            text = _HEADING_RE.sub(" ", text)
        text = _TAG_RE.sub(_tag, text)
    if "&" in text and _ENTITY_RE.search(text):
        import html

        text = html.unescape(text)
    return text


# --- format characters -------------------------------------------------------------------

#: every character of Unicode's category Cf ("format": invisible, no glyph) of Unicode 14
#: (``tests/test_text.py`` checks it against ``unicodedata``); removed before tokenising
_FORMAT_RE = re.compile("[\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890-\u0891\u08e2\u180e\u200b-\u200f"
                        "\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd"
                        "\U00013430-\U00013438\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001"
                        "\U000e0020-\U000e007f]")


def drop_format_characters(text: str) -> str:
    """``text`` without Unicode format characters (category Cf), the soft hyphen included."""
    return text if text.isascii() else _FORMAT_RE.sub("", text)


def clean(text: str) -> str:
    """:func:`strip_markup` then :func:`drop_format_characters`: the first steps of
    :func:`normalize`, for word counts (``abstain.too_short_reason``)."""
    return drop_format_characters(strip_markup(text))


# --- LaTeX -------------------------------------------------------------------------------

_ACCENTS = {  # LaTeX accent command -> Unicode combining character
    '"': "\u0308", "'": "\u0301", "`": "\u0300", "^": "\u0302", "~": "\u0303", "=": "\u0304",
    ".": "\u0307", "u": "\u0306", "v": "\u030c", "H": "\u030b", "c": "\u0327", "k": "\u0328",
    "r": "\u030a", "d": "\u0323", "b": "\u0331",
}
_LETTERS = {"ss": "ß", "o": "ø", "O": "Ø", "ae": "æ", "AE": "Æ", "oe": "œ", "OE": "Œ",
            "aa": "å", "AA": "Å", "l": "ł", "L": "Ł", "i": "ı", "j": "ȷ"}
_ACCENT_RE = re.compile(
    r"""\{?\\([\"'`^~=.])\s*(?:\{\s*(\\?[A-Za-z])\s*\}|(\\?[A-Za-z]))\}?"""   # {\"o}, \"{o}, \'e
    r"""|\{?\\([uvHckrdb])(?:\s*\{\s*(\\?[A-Za-z])\s*\}|\s+([A-Za-z]))\}?"""  # \v{C}, {\c c}
)
_LETTER_RE = re.compile(r"\{?\\(ss|ae|AE|oe|OE|aa|AA|[oOlLij])(?![A-Za-z])\}?")
_ESCAPED_RE = re.compile(r"\\([&%$#_{}])")
_CMD_ARG_RE = re.compile(r"\\[A-Za-z]+\*?\s*(?:\[[^\]]*\])?\{([^{}]*)\}")  # \emph{x} -> x
_CMD_RE = re.compile(r"\\([A-Za-z]+)")                                  # \alpha -> alpha
#: commands whose argument is not text: dropped with it (\cite{key}, \ref{fig}, the URL of \href)
_DROP_ARG_RE = re.compile(
    r"\\(?:cite[a-zA-Z]*|[a-z]*cite|nocite|ref|eqref|autoref|[cC]ref|pageref|label|href)\*?\s*(?:\[[^\]]*\]\s*)*\{[^{}]*\}"
)
_SPACING_RE = re.compile(r"\\([-,;:! ])")  # \- (hyphenation point) -> nothing; \, \; \: \! \  -> space
#: formatting commands and declarations: their name is not a word of the text, even when their
#: argument holds braces (\emph{{BERT} models}) or when they are declarations ({\em x}, {\bf x})
_FORMAT_CMDS = frozenset(
    "emph textbf textit textsf texttt textrm textsc textsl textup textmd textnormal text mbox hbox "
    "em bf it sl sc rm sf tt normalfont bfseries itshape scshape slshape upshape mdseries rmfamily "
    "sffamily ttfamily tiny scriptsize footnotesize small normalsize large Large LARGE huge Huge "
    "mathrm mathit mathbf mathsf mathtt mathbb mathcal mathfrak mathscr boldsymbol ensuremath "
    "displaystyle textstyle scriptstyle left right big Big bigg Bigg bigl bigr Bigl Bigr "
    "underline uline url path nolinkurl protect relax xspace noindent par textsuperscript "
    "textsubscript".split()
)
_MATH_RE = re.compile(r"\$\$?([^$]*)\$\$?")


def _accent(m: re.Match) -> str:
    cmd = m.group(1) or m.group(4)
    base = m.group(2) or m.group(3) or m.group(5) or m.group(6) or ""
    if base.startswith("\\"):  # an accent on \i or \j sits on the plain letter: {\'\i} -> í
        base = {"i": "i", "j": "j"}.get(base[1:]) or _LETTERS.get(base[1:], base[1:])
    return unicodedata.normalize("NFC", base + _ACCENTS[cmd])


def _command(m: re.Match) -> str:
    name = m.group(1)
    return " " if name in _FORMAT_CMDS else f" {name} "


def decode_latex(text: str) -> str:
    """Turn LaTeX markup into readable plain text (for the model only; files keep their bytes).

    ``{\\"o}`` -> ``ö``, ``\\v{C}`` -> ``Č``, ``\\&`` -> ``&``, ``\\emph{deep}`` -> ``deep``,
    ``$\\mathcal{O}(n^2)$`` -> ``O(n^2)``, ``$\\alpha$`` -> ``alpha``, ``~`` -> space.
    ``{\\em x}`` and ``\\emph{{BERT} models}`` -> ``x``, ``BERT models`` (formatting commands are
    no words); ``\\cite{key}``, ``\\ref{fig}`` and the URL of ``\\href{url}{text}`` are dropped;
    ``\\-`` (a hyphenation point) joins the word, ``\\,`` is a space.
    Unknown commands keep their name as a word; remaining grouping braces are dropped.
    """
    backslash = "\\" in text
    if not backslash and "$" not in text and "{" not in text and "~" not in text:
        return text
    if backslash:  # each step below needs a backslash, skipped when there is none
        text = _ACCENT_RE.sub(_accent, text)
        text = _LETTER_RE.sub(lambda m: _LETTERS[m.group(1)], text)
        text = text.replace("\\\\", " ")
        text = _DROP_ARG_RE.sub(" ", text)
        text = _SPACING_RE.sub(lambda m: "" if m.group(1) == "-" else " ", text)
    if "$" in text:
        text = _MATH_RE.sub(lambda m: " " + m.group(1) + " ", text)
    if backslash:
        for _ in range(3):  # nested \textbf{\emph{x}}
            new = _CMD_ARG_RE.sub(r"\1", text)
            if new == text:
                break
            text = new
        text = _ESCAPED_RE.sub(lambda m: "\x00" + m.group(1), text)  # protect \& \% ... from the steps below
        text = _CMD_RE.sub(_command, text)
    text = text.replace("{", "").replace("}", "").replace("~", " ").replace("---", "\u2014").replace("--", "\u2013")
    return text.replace("\x00", "")


# --- whitespace and Unicode ------------------------------------------------------------

_HYPHEN_BREAK_RE = re.compile(r"(\w)-[ \t]*\r?\n[ \t]*(\w)")
_WS_RE = re.compile(r"\s+")


def normalize(text: str) -> str:
    """Readable, single-line text: markup and format characters removed, LaTeX decoded,
    line breaks joined, NFKC Unicode (module docstring).

    Case and accents are kept (this is the text that explanations quote).
    """
    text = decode_latex(clean(text))
    text = _HYPHEN_BREAK_RE.sub(r"\1-\2", text)
    text = unicodedata.normalize("NFKC", text)
    return _WS_RE.sub(" ", text).strip()


def fold(text: str) -> str:
    """Lower-case and strip accents (``Schrödinger`` -> ``schrodinger``), for matching only."""
    text = text.lower()
    if text.isascii():
        return text
    text = unicodedata.normalize("NFKD", text)
    return _NON_ASCII_RE.sub(_drop_combining, text)  # the ASCII stretches in between stay as they are


_NON_ASCII_RE = re.compile(r"[^\x00-\x7f]+")


def _drop_combining(m: re.Match) -> str:
    return "".join(c for c in m.group() if not unicodedata.combining(c))


def token_text(text: str) -> str:
    """The text the tokenizer reads: ``fold(normalize(text))`` without the steps that cannot
    change a token.

    :func:`normalize` also joins hyphenated line breaks and collapses whitespace; both only
    move hyphens and whitespace, which separate tokens either way, so the tokens of
    ``token_text(t)`` and of ``fold(normalize(t))`` are the same (``tests/test_text.py``
    checks it with generated text).  Skipping those two regular-expression passes makes
    tokenising several times cheaper; explanations, which quote the text, still use
    :func:`normalize`.
    """
    if "<" in text or "&" in text:
        text = strip_markup(text)
    if not text.isascii():
        text = _FORMAT_RE.sub("", text)
    text = decode_latex(text)
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
    return fold(text)


# --- tokens and terms ------------------------------------------------------------------

# a token is a run of letters and digits that contains a letter ("3d", "gpt4", "bert");
# pure numbers, single letters and punctuation carry no label evidence here.
_TOKEN_RE = re.compile(r"[a-z0-9]*[a-z][a-z0-9]*")
#: runs of letters and digits: the tokens plus pure numbers, which :func:`is_token` rejects
#: (one fast pass, then a dictionary lookup per run, is cheaper than ``_TOKEN_RE``)
RUN_RE = re.compile(r"[a-z0-9]+")


def is_token(run: str) -> bool:
    """True when a run of ``RUN_RE`` is a token (it contains a letter)."""
    return not run.isdigit()


#: every byte that cannot be part of a run, mapped to a space (for :func:`run_bytes`)
_NOT_RUN = bytes(c if (0x30 <= c <= 0x39 or 0x61 <= c <= 0x7A) else 0x20 for c in range(256))


def run_bytes(text: str) -> list[bytes]:
    """``RUN_RE.findall(text)``, as ASCII bytes: the runs of ``[a-z0-9]`` of a
    :func:`token_text`.

    For ASCII text (98% of arXiv abstracts) it is one ``bytes.translate`` and one ``split``,
    both in C: about half the time of the regular expression.
    """
    if text.isascii():
        return text.encode("ascii").translate(_NOT_RUN).split()
    return [r.encode("ascii") for r in RUN_RE.findall(text)]
_MISSING = object()


#: 21 of the most frequent words of English arXiv abstracts (all of them stop words); their
#: share among a text's tokens tells English from other languages (``tagger.model.abstain.abstain_reason``).
#: Left out: "a", "as", "in" and "on", which are also common French, Spanish, Italian,
#: Portuguese or German words once accents are folded ("à" -> "a").
FUNCTION_WORDS = frozenset("the of and to is that for we with are this by an be from our which it can these".split())


class Analyzer:
    """Text -> list of terms: unigrams and bigrams of stemmed, stop-word-free tokens.

    Parameters
    ----------
    stem : callable ``str -> str`` or None
        The stemmer.  Training passes nltk's Snowball (English) stemmer; labelling passes
        :func:`tagger.model.stemming.label_time_stemmer`, which gives the same stems without nltk.
    stop_words : set of str
        Tokens dropped before n-grams are formed (scikit-learn's English list at training,
        stored in the model, so labelling needs no scikit-learn).
    ngram_max : int
        Longest n-gram (1 = unigrams only).  Bigrams are formed over the stop-word-free
        sequence, as scikit-learn's own word analyzer does.

    Calling the analyzer returns the terms as a list of ``str`` (with repeats: the counts are
    the term frequencies).  :meth:`tokens` returns ``(surface, stem)`` pairs for explanations.
    """

    def __init__(self, stem=None, stop_words=frozenset(), ngram_max: int = 2):
        self.stem = stem
        self.stop_words = frozenset(stop_words)
        self.ngram_max = ngram_max
        self._cache: dict[str, str] = {}

    def _stem_new(self, tok: str):
        """Stem of a token not seen before (None for stop words and one-letter tokens), cached."""
        s = None if len(tok) < 2 or tok in self.stop_words else (self.stem(tok) if self.stem else tok)
        if len(self._cache) < 500_000:
            self._cache[tok] = s
        return s

    def tokens(self, text: str) -> list[tuple[str, str]]:
        """``(token, stem)`` of each kept token of ``text``, in text order."""
        get, new = self._cache.get, self._stem_new
        out = []
        for tok in _TOKEN_RE.findall(token_text(text)):
            s = get(tok, _MISSING)
            if s is _MISSING:
                s = new(tok)
            if s is not None:
                out.append((tok, s))
        return out

    def stems(self, text: str) -> list[str]:
        """The stems of the kept tokens of ``text``, in order."""
        return [s for _, s in self.tokens(text)]

    def terms_from_stems(self, stems: list[str]) -> list[str]:
        """Unigrams then n-grams up to ``ngram_max`` of a stem sequence."""
        terms = list(stems)
        for n in range(2, self.ngram_max + 1):
            terms.extend(" ".join(stems[i:i + n]) for i in range(len(stems) - n + 1))
        return terms

    def __call__(self, text: str) -> list[str]:
        return self.terms_from_stems(self.stems(text))


def document_text(record: dict, text_field: str = "abstract", title_field: str = "title") -> str:
    """The text the model reads for one record: title (if any), then abstract."""
    title = record.get(title_field) or ""
    body = record.get(text_field) or ""
    return f"{title}. {body}" if title else body
