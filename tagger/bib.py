"""Write predicted tags into BibTeX files without changing any other byte.

This module is the library behind ``tagger bib FILE...`` and the pre-commit hook.

How a file is edited
--------------------
The file is never re-serialised.  bibtexparser 2.x (``parse_string(text, parse_stack=[])``,
values verbatim) is used only to *locate* blocks: every block's ``raw`` is an exact substring
of the text.  Each entry is then read a second time by the strict scanner of this module
(BibTeX grammar: ``@type{key, name = value # value, ...}``), and the two readings must agree.
The new or updated tag field is spliced into the original text; everything outside it is
copied byte for byte (BOM, CRLF, tabs, ``=`` alignment, comments, missing final newline...).
The edited text is parsed again and compared block by block with the original; an entry
whose edit cannot be verified is left untouched and reported.

Entries that cannot be read safely are left untouched and reported as problems
``(line, key, reason)``:

* blocks bibtexparser could not parse (``ParsingFailedBlock``), unless the strict scanner
  can read the entry identically with parity-aware backslash escapes *and* with plain
  BibTeX rules (e.g. ``note = {C:\\\\}``, which bibtexparser 2.1.0 mis-reads);
* values that are not BibTeX value expressions: a missing comma between fields, text after a
  closing brace (a stray ``}``), an unescaped ``"`` inside a quoted value, ``%`` comment
  lines inside an entry, malformed field names or keys;
* an entry that ends early because of a stray ``}`` (the text after it continues with
  ``, name = value ... }``);
* blocks located inside the brace-balanced extent of a failed block, i.e. phantom entries
  made from ``@word{``/``@word (`` at a line start inside a value, and entries inside a
  broken ``@comment{...}``;
* duplicate entry keys (compared case-insensitively; every entry with the key is left
  untouched) and duplicate fields (field names compared case-insensitively);
* a backslash before a delimiter whose meaning depends on the escape rule (``\\\\}``);
* a ``keywords`` field that is a macro or a ``#`` concatenation (merge mode only).

Tag semantics
-------------
A term of the tag field is the tool's iff it has the form ``facet:label`` with ``facet`` in
the given ``facets``.  In the default mode (``field=None``) tags are merged into the entry's
``keywords`` field (name matched case-insensitively): the user's terms keep their text, order
and separators; the tool's terms are replaced by the predicted ones, placed after the user's
terms, joined with the field's own separator (``;`` when the field separates by ``;``, else
``,``; the spacing is copied from the field's first separator; ``, `` when it has none).
A missing field is inserted after the last field, named ``keywords`` in the letter case of
the entry's other field names, in the entry's own layout (indent, line ending, trailing
comma, comma-first, ``=`` alignment, BibDesk ``}}``, ``(...)`` entries, one-line entries).
With ``field=NAME`` the tool owns that field and replaces its value wholesale.  When no tag is
predicted, the tool's terms are removed; a field left with no user term is removed again,
so that predicting nothing restores the original bytes.

Entries without an abstract (or with a blank one) are never touched.

Public API: :class:`BibReport`, :func:`update_bib_text`, :func:`run`, :func:`latex_to_text`.
Only the standard library and bibtexparser are used (bibtexparser is imported lazily).
"""

from __future__ import annotations

import bisect
import codecs
import contextlib
import difflib
import logging
import os
import re
import stat
import sys
import tempfile
import unicodedata
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field as dc_field
from typing import TextIO

__all__ = ["BibReport", "update_bib_text", "run", "latex_to_text"]

Predict = Callable[[list[dict]], Sequence[Sequence[str]]]


# --------------------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------------------


@dataclass
class BibReport:
    """Result of :func:`update_bib_text` for one file.

    Attributes:
        new_text: the edited text (equal to the input when nothing changes).
        changed_keys: keys of the entries whose text differs in ``new_text``, file order.
        stale_keys: keys of the entries whose tags are missing or stale in the *input*
            (for ``--check``); with this module's semantics, the same entries as
            ``changed_keys``.
        problems: ``(line, key, reason)`` for every block that was left untouched because it
            cannot be read or edited safely; ``line`` is 1-based, ``key`` is the entry key
            (``-`` or ``@type`` when there is none); sorted by line.
        stale_entries: ``(line, key, "tags missing" | "tags out of date")`` for each stale
            entry, for listing them.
    """

    new_text: str
    changed_keys: list[str] = dc_field(default_factory=list)
    stale_keys: list[str] = dc_field(default_factory=list)
    problems: list[tuple[int, str, str]] = dc_field(default_factory=list)
    stale_entries: list[tuple[int, str, str]] = dc_field(default_factory=list)


# --------------------------------------------------------------------------------------
# Strict scanner (BibTeX grammar, offsets into the original text)
# --------------------------------------------------------------------------------------

# Escape rules for braces/quotes inside values:
#   "lookbehind": a delimiter directly preceded by "\" is literal (bibtexparser 2.1.0)
#   "parity":     "\" escapes the next character, so "\\" is an escaped backslash
#   "none":       no escapes at all (BibTeX itself)
_MODES = ("lookbehind", "parity", "none")

_OPEN_RE = re.compile(r"@(\w*)[ \t]*([{(])")  # same block start as bibtexparser's splitter
_NAME_RE = re.compile(r"[^\s\"#%'(),={}]+")
_BARE_RE = re.compile(r"[^\s\"#%'(),={}]+")
_KEY_BRACE_RE = re.compile(r"[^\s,{}\"=#%]+")
_KEY_PAREN_RE = re.compile(r"[^\s,{}\"=#%()]+")
_WS_RE = re.compile(r"\s*")
_BRACE_RE = re.compile(r"[{}]")
_BRACE_BS_RE = re.compile(r"[{}\\]")
_QUOTE_RE = re.compile(r"[{}\"]")
_QUOTE_BS_RE = re.compile(r"[{}\"\\]")


class _ScanError(Exception):
    def __init__(self, pos: int, reason: str):
        super().__init__(reason)
        self.pos = pos
        self.reason = reason


@dataclass
class _Piece:
    kind: str  # "brace" | "quote" | "bare"
    start: int
    end: int


@dataclass
class _Field:
    name: str
    name_start: int
    name_end: int
    value_start: int
    value_end: int
    pieces: list[_Piece]


@dataclass
class _Entry:
    start: int  # index of "@"
    end: int  # index after the closing delimiter
    type: str  # as spelled
    key: str
    key_end: int  # index after the key
    close: str  # "}" or ")"
    fields: list[_Field]
    mode: str  # escape rule under which it was read

    def spans(self):
        return [(f.name, f.name_start, f.name_end, f.value_start, f.value_end) for f in self.fields]


def _skip_ws(text: str, i: int) -> int:
    return _WS_RE.match(text, i).end()


def _scan_braced(text: str, pos: int, mode: str) -> int:
    """Index after the ``}`` closing the ``{`` at ``pos``."""
    depth = 0
    i = pos
    pat = _BRACE_BS_RE if mode == "parity" else _BRACE_RE
    while True:
        m = pat.search(text, i)
        if m is None:
            raise _ScanError(pos, "unbalanced braces: a value is never closed")
        j = m.start()
        c = text[j]
        if c == "\\":
            i = j + 2
            continue
        if mode == "lookbehind" and j > 0 and text[j - 1] == "\\":
            i = j + 1
            continue
        if c == "{":
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                return j + 1
        i = j + 1


def _scan_quoted(text: str, pos: int, mode: str) -> int:
    """Index after the ``"`` closing the quoted value opened at ``pos``."""
    depth = 0
    i = pos + 1
    pat = _QUOTE_BS_RE if mode == "parity" else _QUOTE_RE
    bs_quote = 'backslash-escaped `"` in a quoted value (BibTeX ends the value there; write {"})'
    while True:
        m = pat.search(text, i)
        if m is None:
            raise _ScanError(pos, "unterminated quoted value")
        j = m.start()
        c = text[j]
        if c == "\\":
            if depth == 0 and text.startswith('"', j + 1):
                raise _ScanError(j, bs_quote)
            i = j + 2
            continue
        escaped = mode == "lookbehind" and text[j - 1] == "\\"
        if c == '"':
            if depth == 0:
                if escaped:
                    raise _ScanError(j, bs_quote)
                return j + 1
        elif not escaped:
            if c == "{":
                depth += 1
            elif depth == 0:
                raise _ScanError(j, "unbalanced braces: `}` without `{` inside a quoted value")
            else:
                depth -= 1
        i = j + 1


def _scan_value(text: str, pos: int, mode: str, close: str | None) -> tuple[list[_Piece], int]:
    """Read a value expression ``piece (# piece)*`` starting at ``pos`` (no leading space)."""
    pieces: list[_Piece] = []
    k = pos
    n = len(text)
    while True:
        if k >= n:
            raise _ScanError(k, "unterminated entry")
        c = text[k]
        if c == "{":
            e = _scan_braced(text, k, mode)
            pieces.append(_Piece("brace", k, e))
        elif c == '"':
            e = _scan_quoted(text, k, mode)
            pieces.append(_Piece("quote", k, e))
        else:
            m = _BARE_RE.match(text, k)
            if m is None or (close == ")" and ")" in m.group()):
                raise _ScanError(k, "missing or malformed field value")
            e = m.end()
            pieces.append(_Piece("bare", k, e))
        t = _skip_ws(text, e)
        if t < n and text[t] == "#":
            k = _skip_ws(text, t + 1)
            continue
        return pieces, e


def _after_value_error(text: str, j: int, last: _Piece) -> _ScanError:
    m = _NAME_RE.match(text, j)
    if m is not None:
        t = _skip_ws(text, m.end())
        if t < len(text) and text[t] == "=":
            return _ScanError(j, "missing comma between fields")
    if last.kind == "quote":
        return _ScanError(j, 'unescaped `"` inside a quoted value')
    if last.kind == "brace":
        return _ScanError(j, "unbalanced braces: text after the closing `}` of a value (stray `}`?)")
    return _ScanError(j, "unexpected text after a field value")


def _scan_entry(text: str, pos: int, mode: str) -> _Entry:
    """Read the entry whose ``@`` is at ``pos`` under escape rule ``mode``.

    Raises:
        _ScanError: with a position and a human-readable reason.
    """
    m = _OPEN_RE.match(text, pos)
    if m is None:
        raise _ScanError(pos, "not an entry")
    close = "}" if m.group(2) == "{" else ")"
    n = len(text)
    i = _skip_ws(text, m.end())
    km = (_KEY_BRACE_RE if close == "}" else _KEY_PAREN_RE).match(text, i)
    if km is None:
        raise _ScanError(i, "missing entry key")
    key, key_end = km.group(), km.end()
    j = _skip_ws(text, key_end)
    if j >= n:
        raise _ScanError(j, "unterminated entry")
    fields: list[_Field] = []
    if text[j] == close:
        return _Entry(pos, j + 1, m.group(1), key, key_end, close, fields, mode)
    if text[j] != ",":
        raise _ScanError(j, "malformed entry key (expected `,` after the key)")
    j += 1
    while True:
        j = _skip_ws(text, j)
        if j >= n:
            raise _ScanError(j, "unterminated entry")
        c = text[j]
        if c == close:
            return _Entry(pos, j + 1, m.group(1), key, key_end, close, fields, mode)
        if c == "%":
            raise _ScanError(j, "`%` comment inside an entry (BibTeX has no comments there)")
        nm = _NAME_RE.match(text, j)
        if nm is None:
            raise _ScanError(j, f"expected a field name, found `{c}`")
        k = _skip_ws(text, nm.end())
        if k >= n or text[k] != "=":
            raise _ScanError(j, f"malformed field name or missing `=` after `{nm.group()}`")
        vs = _skip_ws(text, k + 1)
        pieces, ve = _scan_value(text, vs, mode, close)
        fields.append(_Field(nm.group(), j, nm.end(), vs, ve, pieces))
        j = _skip_ws(text, ve)
        if j >= n:
            raise _ScanError(j, "unterminated entry")
        if text[j] == ",":
            j += 1
            continue
        if text[j] == close:
            return _Entry(pos, j + 1, m.group(1), key, key_end, close, fields, mode)
        raise _after_value_error(text, j, pieces[-1])


def _continues_as_fields(text: str, pos: int) -> bool:
    """True when the text after an entry's end reads as more fields and a closing
    delimiter (``, name = value, ... }``): the entry was closed early by a stray brace."""
    n = len(text)
    j = _skip_ws(text, pos)
    if j < n and text[j] == ",":
        j = _skip_ws(text, j + 1)
    seen = 0
    try:
        while j < n:
            if text[j] in "})":
                return seen > 0
            nm = _NAME_RE.match(text, j)
            if nm is None:
                return False
            k = _skip_ws(text, nm.end())
            if k >= n or text[k] != "=":
                return False
            _, ve = _scan_value(text, _skip_ws(text, k + 1), "lookbehind", None)
            seen += 1
            j = _skip_ws(text, ve)
            if j < n and text[j] == ",":
                j = _skip_ws(text, j + 1)
            elif j < n and text[j] not in "})":
                return False
    except _ScanError:
        return False
    return False


_NEXT_BLOCK_RE = re.compile(r"\n[ \t]*@")


def _ends_early(text: str, end: int) -> bool:
    """Signs that a stray ``}`` closed the entry ending at ``end`` too early: the next
    non-blank character is ``,``/``}``/``)``; or text follows on the same line and the
    text up to the next line-start ``@`` holds an unmatched ``}``; or that text reads as
    further fields and a closing delimiter."""
    j = _skip_ws(text, end)
    if j < len(text) and text[j] in ",})":
        return True
    line_end = text.find("\n", end)
    same_line = text[end : line_end if line_end >= 0 else len(text)]
    if same_line.strip():
        m = _NEXT_BLOCK_RE.search(text, end)
        depth = 0
        for i in range(end, m.start() if m else len(text)):
            c = text[i]
            if c in "{}" and text[i - 1] == "\\":
                continue
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
                if depth < 0:
                    return True
    return _continues_as_fields(text, end)


def _extent_end(text: str, pos: int) -> int:
    """End of the brace-balanced block starting with ``@word{``/``@word(`` at ``pos``, as the
    largest end found under the escape rules; ``len(text)`` if it never closes."""
    m = _OPEN_RE.match(text, pos)
    if m is None:
        return pos
    ends = []
    for mode in _MODES:
        depth, in_quote, i = 1, False, m.end()
        paren = m.group(2) == "("
        found = None
        while i < len(text):
            c = text[i]
            if c == "\\" and mode != "none":
                if mode == "parity":
                    i += 2
                    continue
                i += 1
                if i < len(text) and text[i] in '{}"':
                    i += 1
                continue
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
                if depth == 0 and not paren:
                    found = i + 1
                    break
                if depth < 1 and paren:
                    depth = 1
            elif paren and depth == 1 and c == '"':
                in_quote = not in_quote
            elif paren and depth == 1 and c == ")" and not in_quote:
                found = i + 1
                break
            i += 1
        if found is not None:
            ends.append(found)
    return max(ends) if ends else len(text)


# --------------------------------------------------------------------------------------
# Values for the model: macros, concatenation, LaTeX
# --------------------------------------------------------------------------------------

_MONTHS = {
    "jan": "January", "feb": "February", "mar": "March", "apr": "April", "may": "May",
    "jun": "June", "jul": "July", "aug": "August", "sep": "September", "oct": "October",
    "nov": "November", "dec": "December",
}


def _resolve(text: str, pieces: Iterable[_Piece], strings: dict[str, str]) -> str:
    """Concatenate the pieces of a value; macros are looked up case-insensitively."""
    out = []
    for p in pieces:
        raw = text[p.start : p.end]
        if p.kind == "bare":
            if raw.isdigit():
                out.append(raw)
            else:
                k = raw.casefold()
                out.append(strings.get(k, _MONTHS.get(k, "")))
        else:
            out.append(raw[1:-1])
    return "".join(out)


_ACCENTS = {
    "'": "\u0301", "`": "\u0300", "^": "\u0302", '"': "\u0308", "~": "\u0303", "=": "\u0304",
    ".": "\u0307", "u": "\u0306", "v": "\u030c", "H": "\u030b", "c": "\u0327", "k": "\u0328",
    "r": "\u030a", "d": "\u0323", "b": "\u0331", "t": "\u0361",
}
_LETTERS = {
    "i": "ı", "j": "ȷ", "o": "ø", "O": "Ø", "ae": "æ", "AE": "Æ", "oe": "œ", "OE": "Œ",
    "aa": "å", "AA": "Å", "ss": "ß", "l": "ł", "L": "Ł", "dh": "ð", "DH": "Ð", "th": "þ",
    "TH": "Þ", "ng": "ŋ", "NG": "Ŋ",
}
_GREEK = (
    "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi pi rho sigma "
    "tau upsilon phi chi psi omega"
).split()
_SYMBOLS = dict(zip(_GREEK, "αβγδεζηθικλμνξπρστυφχψω"))
_SYMBOLS.update({
    "Gamma": "Γ", "Delta": "Δ", "Theta": "Θ", "Lambda": "Λ", "Xi": "Ξ", "Pi": "Π",
    "Sigma": "Σ", "Upsilon": "Υ", "Phi": "Φ", "Psi": "Ψ", "Omega": "Ω",
    "varepsilon": "ε", "vartheta": "ϑ", "varphi": "φ", "varrho": "ϱ", "varsigma": "ς",
    "varpi": "ϖ", "ell": "ℓ",
    "le": "≤", "leq": "≤", "ge": "≥", "geq": "≥", "ne": "≠", "neq": "≠", "approx": "≈",
    "sim": "∼", "simeq": "≃", "equiv": "≡", "times": "×", "cdot": "·", "pm": "±", "mp": "∓",
    "infty": "∞", "to": "→", "rightarrow": "→", "leftarrow": "←", "Rightarrow": "⇒",
    "leftrightarrow": "↔", "mapsto": "↦", "in": "∈", "notin": "∉", "subset": "⊂",
    "subseteq": "⊆", "cup": "∪", "cap": "∩", "forall": "∀", "exists": "∃", "partial": "∂",
    "nabla": "∇", "sum": "∑", "prod": "∏", "int": "∫", "sqrt": "√", "ll": "≪", "gg": "≫",
    "ldots": "…", "dots": "…", "cdots": "⋯", "textendash": "–", "textemdash": "—",
    "textquoteleft": "‘", "textquoteright": "’", "textquotedblleft": "“",
    "textquotedblright": "”", "textasciitilde": "~", "textbackslash": "\\",
    "textunderscore": "_", "textbar": "|", "textless": "<", "textgreater": ">",
    "copyright": "©", "textregistered": "®", "texttrademark": "™", "textdegree": "°",
    "degree": "°", "S": "§", "P": "¶", "dag": "†", "ddag": "‡", "euro": "€", "pounds": "£",
    "quad": " ", "qquad": " ", "enspace": " ", "thinspace": " ", "hfill": " ", "newline": " ",
    "LaTeX": "LaTeX", "TeX": "TeX", "BibTeX": "BibTeX",
})
_DROP_WITH_ARG = {
    "cite", "citep", "citet", "citealp", "citealt", "citeauthor", "citeyear", "parencite",
    "textcite", "autocite", "nocite", "ref", "eqref", "autoref", "cref", "Cref", "pageref",
    "label", "noopsort", "hspace", "vspace", "footnotemark", "index",
}
_DECLARATIONS = {
    "em", "bf", "it", "sl", "sc", "rm", "sf", "tt", "normalfont", "bfseries", "itshape",
    "scshape", "slshape", "upshape", "mdseries", "rmfamily", "sffamily", "ttfamily", "tiny",
    "scriptsize", "footnotesize", "small", "normalsize", "large", "Large", "LARGE", "huge",
    "Huge", "displaystyle", "textstyle", "scriptstyle", "left", "right", "big", "Big", "bigg",
    "Bigg", "bigl", "bigr", "Bigl", "Bigr", "protect", "relax", "xspace", "nobreak",
    "noindent", "par", "mathrm", "mathit", "mathbf", "mathsf", "mathtt", "mathbb", "mathcal",
    "mathfrak", "mathscr", "boldsymbol", "operatorname", "emph", "textbf", "textit", "textsf",
    "texttt", "textrm", "textsc", "textsl", "textup", "textmd", "textnormal", "text", "mbox",
    "hbox", "makebox", "underline", "uline", "ensuremath", "url", "href", "path", "nolinkurl",
}
_SPACE_SYMBOLS = {",": " ", ";": " ", ":": " ", "!": "", " ": " ", "\n": " ", "\t": " ",
                  "\r": " ", "-": "", "/": "", "@": "", "\\": " "}


def _group(s: str, i: int) -> tuple[str, int]:
    """Content of the ``{...}`` group at ``s[i]`` (braces balanced, ``\\`` escapes)."""
    depth, j = 0, i
    while j < len(s):
        c = s[j]
        if c == "\\":
            j += 2
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return s[i + 1 : j], j + 1
        j += 1
    return s[i + 1 :], len(s)


def _accent(arg: str, mark: str) -> str:
    if not arg:
        return ""
    base = {"ı": "i", "ȷ": "j"}.get(arg[0], arg[0])
    return unicodedata.normalize("NFC", base + mark) + arg[1:]


#: where the "lookbehind" and "parity" readings of backslashes (see :func:`_scan_entry`) can differ
_BACKSLASH_DELIMITER = re.compile(r'\\[{}"]')

#: a stretch of characters that :func:`_decode` copies as they are
_PLAIN_RUN = re.compile(r"[^\\{}$~\-`']+")


def _decode(s: str) -> str:
    out: list[str] = []
    i, n = 0, len(s)
    plain = _PLAIN_RUN.match
    while i < n:
        m = plain(s, i)
        if m:  # ordinary characters, copied in one step
            out.append(m.group())
            i = m.end()
            continue
        c = s[i]
        if c == "\\":
            if i + 1 >= n:
                i += 1
                continue
            d = s[i + 1]
            if d.isalpha() and d.isascii():
                j = i + 1
                while j < n and s[j].isalpha() and s[j].isascii():
                    j += 1
                name = s[i + 1 : j]
                had_space = j < n and s[j].isspace()
                k = _skip_ws(s, j)
                if name in _ACCENTS:
                    arg, k = _accent_arg(s, k)
                    out.append(_accent(arg, _ACCENTS[name]))
                    i = k
                    continue
                if name in _LETTERS or name in _SYMBOLS:
                    out.append(_LETTERS.get(name) or _SYMBOLS[name])
                    if had_space:
                        out.append(" ")
                    i = k
                    continue
                if name in ("url", "path", "nolinkurl") and k < n and s[k] == "{":
                    arg, i = _group(s, k)
                    out.append(arg)
                    continue
                if name == "href" and k < n and s[k] == "{":
                    _, i = _group(s, k)  # the link target; the text follows as a group
                    continue
                if name in _DROP_WITH_ARG:
                    if k < n and s[k] == "[":
                        close = s.find("]", k)
                        k = _skip_ws(s, close + 1) if close >= 0 else k
                    if k < n and s[k] == "{":
                        _, k = _group(s, k)
                    i = k
                    continue
                if name in _DECLARATIONS or (k < n and s[k] == "{"):
                    i = k if name in _DECLARATIONS else j
                    continue
                out.append(name)
                if had_space:
                    out.append(" ")
                i = k
                continue
            if d in _ACCENTS:
                arg, k = _accent_arg(s, i + 2)
                out.append(_accent(arg, _ACCENTS[d]))
                i = k
                continue
            out.append(_SPACE_SYMBOLS.get(d, d))
            i += 2
            continue
        if c in "{}$":
            i += 1
            continue
        if c == "~":
            out.append(" ")
        elif c == "-" and s.startswith("---", i):
            out.append("—")
            i += 3
            continue
        elif c == "-" and s.startswith("--", i):
            out.append("–")
            i += 2
            continue
        elif (c == "`" and s.startswith("``", i)) or (c == "'" and s.startswith("''", i)):
            out.append('"')
            i += 2
            continue
        else:
            out.append(c)
        i += 1
    return "".join(out)


def _accent_arg(s: str, k: int) -> tuple[str, int]:
    """Argument of an accent command at ``s[k]``: a group, a command (``\\i``) or one char."""
    if k >= len(s):
        return "", k
    if s[k] == "{":
        arg, k = _group(s, k)
        return _decode(arg), k
    if s[k] == "\\":
        j = k + 1
        while j < len(s) and s[j].isalpha() and s[j].isascii():
            j += 1
        if j == k + 1:
            j = min(k + 2, len(s))
        return _decode(s[k:j]), j
    return s[k], k + 1


def latex_to_text(s: str) -> str:
    """Plain, whitespace-collapsed text of a BibTeX value's LaTeX (for the model only).

    Accents (``{\\"o}``, ``\\'e``, ``\\v{C}``, ``{\\'\\i}``) become Unicode (NFC), special
    letters (``\\ss``, ``\\o``) and escapes (``\\&``, ``\\%``, ``\\$``, ``\\_``) their
    characters; commands with an argument keep the argument (``\\emph{x}`` -> ``x``),
    citations and labels are dropped, ``\\url{...}`` is kept verbatim, math keeps its content
    (``$\\alpha \\le \\beta$`` -> ``α ≤ β``), remaining braces and ``$`` are removed,
    ``~`` is a space and whitespace (CR/LF, tabs) collapses to single spaces.  Never raises.
    """
    return " ".join(_decode(s).split())


# --------------------------------------------------------------------------------------
# Tag-field merging
# --------------------------------------------------------------------------------------

_TAG_FORBIDDEN = re.compile(r"[\s{}\"\\,;#%@]")


def _is_tool_term(term: str, facets: frozenset[str]) -> bool:
    facet, sep, label = term.partition(":")
    return bool(sep) and facet in facets and bool(label) and not _TAG_FORBIDDEN.search(term)


def _depth0_positions(s: str, ch: str) -> list[int]:
    pos, depth = [], 0
    for i, c in enumerate(s):
        if c in "{}" and i > 0 and s[i - 1] == "\\":
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth = max(0, depth - 1)
        elif c == ch and depth == 0:
            pos.append(i)
    return pos


def _merge_terms(inner: str, tags: list[str], facets: frozenset[str]) -> tuple[str, bool, bool]:
    """Merge ``tags`` into the text of a keywords field.

    Returns ``(new_inner, had_tool_terms, has_user_terms)``.  User terms keep text, order and
    the separators between them; tool terms go after them, joined by the field's separator.
    """
    sep_char = ";" if _depth0_positions(inner, ";") else ","
    cuts = _depth0_positions(inner, sep_char)
    bounds = [-1, *cuts, len(inner)]
    segs = [inner[bounds[i] + 1 : bounds[i + 1]] for i in range(len(bounds) - 1)]
    terms = [s.strip() for s in segs]
    nonempty = [i for i, t in enumerate(terms) if t]
    if not nonempty:
        lead = inner[: len(inner) - len(inner.lstrip())]
        rest = inner[len(lead) :]
        joined = ", ".join(tags)
        return (lead + joined + rest if tags else inner), False, False
    first, last = nonempty[0], nonempty[-1]
    # absolute spans of the terms, and the separator texts between consecutive terms
    spans = []
    for i, seg in enumerate(segs):
        a = bounds[i] + 1 + (len(seg) - len(seg.lstrip()))
        spans.append((a, a + len(terms[i])))
    lead = inner[: spans[first][0]]
    tail = inner[spans[last][1] :]
    seps = {i: inner[spans[i - 1][1] : spans[i][0]] for i in range(first + 1, last + 1)}
    join_sep = seps[first + 1] if last > first else sep_char + " "
    kept = [i for i in range(first, last + 1) if not _is_tool_term(terms[i], facets)]
    had_tool = any(_is_tool_term(terms[i], facets) for i in range(first, last + 1))
    user = [i for i in kept if terms[i]]
    parts: list[str] = []
    for n_, i in enumerate(kept):
        if n_:
            # when tool terms between two kept terms were removed, keep the separator
            # that followed the earlier kept term
            parts.append(seps[kept[n_ - 1] + 1])
        parts.append(terms[i])
    body = "".join(parts)
    if tags:
        body = (body + join_sep if user else body) + join_sep.join(tags)
    return lead + body + tail, had_tool, bool(user)


def _case_like(name: str, fields: list[_Field], abstract: _Field) -> str:
    def style(s: str) -> str | None:
        letters = [c for c in s if c.isalpha()]
        if not letters:
            return None
        if all(c.isupper() for c in letters):
            return "upper"
        if all(c.islower() for c in letters):
            return "lower"
        if letters[0].isupper():
            return "title"
        return "lower" if s[0].islower() else None

    votes: dict[str, int] = {}
    for f in fields:
        st = style(f.name)
        if st:
            votes[st] = votes.get(st, 0) + 1
    if not votes:
        return name
    best = max(votes.values())
    winners = [s for s, v in votes.items() if v == best]
    st = style(abstract.name) if len(winners) > 1 and style(abstract.name) in winners else winners[0]
    return {"upper": name.upper(), "lower": name.lower(), "title": name[:1].upper() + name[1:].lower()}[st]


# --------------------------------------------------------------------------------------
# Analysis of a file
# --------------------------------------------------------------------------------------


@contextlib.contextmanager
def _quiet_bibtexparser_logs():
    """Keep bibtexparser's parse warnings off stderr (they are reported as problems)."""
    logger = logging.getLogger("bibtexparser")
    handler = logging.NullHandler()
    old = logger.propagate
    logger.addHandler(handler)
    logger.propagate = False
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.propagate = old


def _parse_blocks(text: str):
    """Parse with bibtexparser (empty stack) and locate every block: [(block, start, end)]."""
    import bibtexparser

    with _quiet_bibtexparser_logs():
        lib = bibtexparser.parse_string(text, parse_stack=[])
    located = []
    pos = 0
    for b in lib.blocks:
        raw = b.raw or ""
        i = text.find(raw, pos)
        if i < 0:
            raise ValueError("bibtexparser returned a block that is not in the text")
        located.append((b, i, i + len(raw)))
        pos = i + len(raw)
    return located


_FAILED_KEY_RE = re.compile(r"@(\w*)[ \t]*[{(]\s*([^\s,{}()\"=#%]*)")
_LOOKS_LIKE_BLOCK_RE = re.compile(r"(?:^|(?<=\s))@[ \t]*([A-Za-z][\w-]*)\s*[{(]\s*([^\s,{}()\"=#%]*)", re.M)


@dataclass
class _Cand:
    """An entry-like block: index in the located list, key, offsets, scanned entry."""

    index: int
    key: str
    start: int
    end: int
    entry: _Entry | None = None
    reasons: list[str] = dc_field(default_factory=list)
    recovered: bool = False


class _Analysis:
    def __init__(self, text: str):
        self.text = text
        self.nl = [m.start() for m in re.finditer("\n", text)]
        self.located = _parse_blocks(text)
        self.cands: list[_Cand] = []
        self.block_problems: list[tuple[int, str, str]] = []
        self.strings: dict[str, str] = {}
        self._analyse()

    def line(self, pos: int) -> int:
        return bisect.bisect_left(self.nl, pos) + 1

    def _analyse(self) -> None:
        from bibtexparser.model import (
            DuplicateBlockKeyBlock,
            DuplicateFieldKeyBlock,
            Entry,
            ExplicitComment,
            ImplicitComment,
            ParsingFailedBlock,
            Preamble,
            String,
        )

        text = self.text
        located = self.located
        # 1) entry-like blocks
        failed: list[tuple[int, int, int, str]] = []  # (index, start, extent_end, word)
        for idx, (b, s, e) in enumerate(located):
            if isinstance(b, String):
                self._add_string(b)
                continue
            if isinstance(b, (ImplicitComment, ExplicitComment, Preamble)):
                if isinstance(b, ImplicitComment):
                    for m in _LOOKS_LIKE_BLOCK_RE.finditer(b.raw):
                        if m.group(1).lower() != "comment":
                            self.block_problems.append(
                                (self.line(s + m.start()), m.group(2) or "@" + m.group(1),
                                 "text that BibTeX reads as a block was not recognised by the parser")
                            )
                continue
            if isinstance(b, DuplicateBlockKeyBlock):
                inner = b.ignore_error_block
                if isinstance(inner, String):
                    self._add_string(inner)
                    continue
                if isinstance(inner, Entry):
                    self.cands.append(self._checked(idx, inner, s, e))
                    continue
            if isinstance(b, DuplicateFieldKeyBlock):
                c = self._checked(idx, b.ignore_error_block, s, e)
                c.reasons.insert(0, "duplicate field " + ", ".join(f"`{k}`" for k in sorted(b.duplicate_keys)))
                self.cands.append(c)
                continue
            if isinstance(b, Entry):
                self.cands.append(self._checked(idx, b, s, e))
                continue
            if isinstance(b, ParsingFailedBlock):
                m = _FAILED_KEY_RE.match(b.raw)
                word = ("@" + m.group(1)) if m else "@"
                key = m.group(2) if m and m.group(2) else word
                if word.lower() in ("@comment", "@string", "@preamble"):
                    key = word
                cand = self._recover(idx, s, e, key)
                if cand is not None:
                    self.cands.append(cand)
                    continue
                reason = " ".join(str(getattr(b.error, "abort_reason", b.error)).split())
                self.cands.append(_Cand(idx, key, s, e, None, [f"cannot be parsed ({reason})"]))
                failed.append((idx, s, _extent_end(text, s), word.lower()))
                continue
            self.block_problems.append((self.line(s), "-", f"unexpected block {type(b).__name__}"))
        # 2) blocks inside the extent of a failed block: phantoms / inside @comment{...}
        for fidx, fs, fend, word in failed:
            for c in self.cands:
                if c.index != fidx and fs < c.start < fend:
                    if word == "@comment":
                        why = f"inside the @comment{{...}} starting at line {self.line(fs)}"
                    else:
                        why = (f"phantom entry: `@...` at a line start inside the block starting at "
                               f"line {self.line(fs)}")
                    c.reasons.insert(0, why)
            for idx, (b, s, e) in enumerate(located):
                if idx != fidx and fs < s < fend and isinstance(b, (String, Preamble, ExplicitComment)):
                    self.block_problems.append(
                        (self.line(s), "@" + type(b).__name__.lower(),
                         f"inside the unparsable block starting at line {self.line(fs)}"))
        # 3) duplicate keys (case-insensitive, like BibTeX)
        by_key: dict[str, list[_Cand]] = {}
        for c in self.cands:
            if not c.key.startswith("@") and c.key != "-":
                by_key.setdefault(c.key.casefold(), []).append(c)
        for group in by_key.values():
            if len(group) > 1:
                lines = [self.line(c.start) for c in group]
                for c in group:
                    others = ", ".join(str(x) for x in lines if x != self.line(c.start))
                    c.reasons.append(f"duplicate key (also at line {others})")

    def _add_string(self, b) -> None:
        try:
            pieces, end = _scan_value(b.value, 0, "lookbehind", None)
        except (_ScanError, IndexError):
            return
        if _skip_ws(b.value, end) != len(b.value):
            return
        self.strings[b.key.casefold()] = _resolve(b.value, pieces, self.strings)

    def _checked(self, idx: int, b, s: int, e: int) -> _Cand:
        """Cross-check a bibtexparser entry with the strict scanner."""
        text = self.text
        cand = _Cand(idx, b.key, s, e)
        if not b.key:
            cand.key = "-"
        try:
            ent = _scan_entry(text, s, "lookbehind")
        except _ScanError as err:
            cand.reasons.append(err.reason)
            return cand
        if ent.end != e or ent.key != b.key or [(f.name, text[f.value_start : f.value_end]) for f in ent.fields] != [
            (f.key, f.value) for f in b.fields
        ]:
            cand.reasons.append("bibtexparser and the strict reader disagree on this entry")
            return cand
        if _BACKSLASH_DELIMITER.search(text, s, e) is None:
            par = ent  # the two readings differ only at a backslash before a delimiter
        else:
            try:
                par = _scan_entry(text, s, "parity")
            except _ScanError:
                par = None
        if par is None or par.spans() != ent.spans() or par.end != ent.end:
            cand.reasons.append("ambiguous backslash before a delimiter (e.g. `\\\\}`)")
            return cand
        self._common_checks(cand, ent)
        return cand

    def _recover(self, idx: int, s: int, e: int, key: str) -> _Cand | None:
        """Read a block bibtexparser failed on, if parity-aware escapes and plain BibTeX
        agree on it and no other block starts inside it (bibtexparser's `\\\\}` bug)."""
        text = self.text
        if not _OPEN_RE.match(text, s) or _FAILED_KEY_RE.match(text, s).group(1).lower() in (
            "comment", "string", "preamble",
        ):
            return None
        try:
            par = _scan_entry(text, s, "parity")
            plain = _scan_entry(text, s, "none")
        except _ScanError:
            return None
        if par.spans() != plain.spans() or par.end != plain.end or par.end > e:
            return None
        if "@" in text[par.end : e]:
            return None
        for j, (_, bs, _) in enumerate(self.located):
            if j != idx and s < bs < par.end:
                return None
        cand = _Cand(idx, par.key, s, e, None, [], recovered=True)
        self._common_checks(cand, par)
        return cand

    def _common_checks(self, cand: _Cand, ent: _Entry) -> None:
        names: dict[str, str] = {}
        for f in ent.fields:
            k = f.name.casefold()
            if k in names:
                cand.reasons.append(f"duplicate field `{names[k]}`/`{f.name}`")
                return
            names[k] = f.name
        if _ends_early(self.text, ent.end):
            cand.reasons.append("stray closing brace: the entry ends early, its last fields follow it")
            return
        cand.entry = ent


# --------------------------------------------------------------------------------------
# Planning edits
# --------------------------------------------------------------------------------------


def _new_field_between(ent: _Entry, text: str, name: str) -> str:
    """The text between a new field's name and its value, in the entry's style."""
    last = ent.fields[-1]
    between = text[last.name_end : last.value_start]
    if len(ent.fields) < 2:
        return between
    prefixes, cols, rests = set(), set(), set()
    for f in ent.fields:
        line_start = text.rfind("\n", ent.start, f.name_start) + 1
        if line_start == 0:
            return between
        prefixes.add(text[line_start : f.name_start])
        m = re.fullmatch(r"( +)=(.*)", text[f.name_end : f.value_start], re.S)
        if m is None:
            return between
        cols.add(len(f.name) + len(m.group(1)))
        rests.add(m.group(2))
    if len(prefixes) != 1 or len(cols) != 1 or len(rests) != 1:
        return between
    pad = max(1, cols.pop() - len(name))
    return " " * pad + "=" + rests.pop()


def _delims(ent: _Entry) -> tuple[str, str]:
    """``""`` when most of the entry's delimited fields use quotes (ties: the last such field)."""
    kinds = []
    for f in ent.fields:
        ks = {p.kind for p in f.pieces} - {"bare"}
        if len(ks) == 1:
            kinds.append(ks.pop())
    quoted, braced = kinds.count("quote"), kinds.count("brace")
    if quoted > braced or (quoted == braced and kinds and kinds[-1] == "quote"):
        return '"', '"'
    return "{", "}"


def _remove_span(ent: _Entry, i: int) -> tuple[int, int]:
    if i > 0:
        return ent.fields[i - 1].value_end, ent.fields[i].value_end
    return ent.fields[0].name_start, ent.fields[1].name_start


def _plan(text: str, ent: _Entry, tags: list[str], facets: frozenset[str], field: str | None,
          abstract: _Field) -> tuple[tuple[int, int, str] | None, str | None, bool]:
    """Edit for one entry: ``((start, end, replacement) | None, problem | None, had_tool)``."""
    target = (field or "keywords").casefold()
    idx = [i for i, f in enumerate(ent.fields) if f.name.casefold() == target]
    if not idx:
        if not tags:
            return None, None, False
        last = ent.fields[-1]
        prev_end = ent.fields[-2].value_end if len(ent.fields) > 1 else ent.key_end
        sep = text[prev_end : last.name_start]
        name = field if field else _case_like("keywords", ent.fields, abstract)
        o, c = _delims(ent)
        ins = sep + name + _new_field_between(ent, text, name) + o + ", ".join(tags) + c
        return (last.value_end, last.value_end, ins), None, False
    i = idx[0]
    f = ent.fields[i]
    single = len(f.pieces) == 1 and f.pieces[0].kind != "bare"
    if field is None:
        if not single:
            return None, "the keywords field is a macro or a `#` concatenation; not merged", False
        p = f.pieces[0]
        inner = text[p.start + 1 : p.end - 1]
        new_inner, had_tool, has_user = _merge_terms(inner, tags, facets)
        if new_inner == inner:
            return None, None, had_tool
        if not tags and had_tool and not has_user and len(ent.fields) > 1:
            a, b = _remove_span(ent, i)
            return (a, b, ""), None, had_tool
        return (p.start + 1, p.end - 1, new_inner), None, had_tool
    # tool-owned field: replaced wholesale -- but only if it holds nothing but tool terms, so
    # that --field author (or a user's keywords) can never be overwritten
    cur = text[f.value_start : f.value_end]
    if not single:
        return None, f"--field {field}: the field is a macro or a `#` concatenation; not replaced", False
    inner = text[f.pieces[0].start + 1 : f.pieces[0].end - 1]
    _, _, has_user = _merge_terms(inner, [], facets)
    if has_user:
        return None, f"--field {field}: the field holds content that is not the tool's tags; not replaced", False
    had_tool = bool(cur.strip("{}\" \t\r\n"))
    if not tags:
        if len(ent.fields) > 1:
            a, b = _remove_span(ent, i)
            return (a, b, ""), None, had_tool
        return None, None, had_tool
    joined = ", ".join(tags)
    if single:
        p = f.pieces[0]
        if text[p.start + 1 : p.end - 1] == joined:
            return None, None, had_tool
        return (p.start + 1, p.end - 1, joined), None, had_tool
    return (f.value_start, f.value_end, "{" + joined + "}"), None, had_tool


def _apply(text: str, edits: list[tuple[int, int, str]]) -> str:
    out, pos = [], 0
    for a, b, r in sorted(edits):
        out.append(text[pos:a])
        out.append(r)
        pos = b
    out.append(text[pos:])
    return "".join(out)


def _check_tags(tags: Sequence[str], facets: frozenset[str], key: str) -> list[str]:
    if isinstance(tags, str):
        raise ValueError(f"predict returned a string, not a list of tags, for {key!r}")
    seen: list[str] = []
    for t in tags:
        if not isinstance(t, str) or not _is_tool_term(t, facets):
            raise ValueError(
                f"predict returned tag {t!r} for {key!r}: tags must look like 'facet:label' with "
                f"a facet in {sorted(facets)} and no spaces, braces, quotes, `,` or `;`"
            )
        if t not in seen:
            seen.append(t)
    return seen


# --------------------------------------------------------------------------------------
# Public: update_bib_text
# --------------------------------------------------------------------------------------


def update_bib_text(text: str, predict: Predict, *, facets: Collection[str],
                    field: str | None = None, verify: bool = True) -> BibReport:
    """Bring the tags of every entry with an abstract up to date, in memory.

    Args:
        text: the whole file, decoded (a BOM stays as ``"\\ufeff"``; CRLF is kept).
        predict: called at most once, with a list of ``{"key", "title", "abstract"}`` dicts
            (title/abstract resolved and cleaned, see :func:`latex_to_text`), one per entry
            that has a non-blank abstract and can be edited safely, in file order; it must
            return a sequence of the same length whose items are lists of tags
            (``"facet:label"`` strings, taxonomy order; empty = abstain).
        facets: the taxonomy's facet names; a term ``facet:label`` with one of them is the
            tool's, every other term is the user's.
        field: ``None`` to merge into ``keywords``; a field name to own that field instead
            (its value replaced wholesale).  Must not be ``abstract`` or ``title``.
        verify: re-parse the edited text and drop the edits that do not come out as planned
            (what is written is always verified; ``--check``, which writes nothing, skips it:
            it is half the cost of a check).

    Returns:
        A :class:`BibReport`.  ``new_text`` differs from ``text`` only inside tag fields.

    Raises:
        ValueError: ``predict`` returned a different number of results, or a tag that is not
            ``facet:label`` with a known facet (or contains spaces, braces, quotes, ``,``,
            ``;``), or ``field`` is ``abstract``/``title``.
    """
    facets = frozenset(facets)
    if field is not None and field.casefold() in ("abstract", "title"):
        raise ValueError(f"the tag field must not be {field!r}")
    if field is not None and not _NAME_RE.fullmatch(field):
        raise ValueError(f"invalid field name {field!r}")
    try:
        an = _Analysis(text)
    except Exception as exc:  # bibtexparser crashed or mis-located: touch nothing
        return BibReport(text, problems=[(1, "-", f"file cannot be parsed safely ({exc}); left untouched")])

    problems: dict[tuple[int, str], list[str]] = {}

    def problem(line: int, key: str, reason: str) -> None:
        lst = problems.setdefault((line, key), [])
        if reason not in lst:
            lst.append(reason)

    for line, key, reason in an.block_problems:
        problem(line, key, reason)

    work = []  # (cand, abstract field, model input)
    for c in an.cands:
        if c.reasons or c.entry is None:
            for r in c.reasons:
                problem(an.line(c.start), c.key, r)
            continue
        ent = c.entry
        abstracts = [f for f in ent.fields if f.name.casefold() == "abstract"]
        if not abstracts:
            continue
        abstract = latex_to_text(_resolve(text, abstracts[0].pieces, an.strings))
        if not abstract:
            continue
        titles = [f for f in ent.fields if f.name.casefold() == "title"]
        title = latex_to_text(_resolve(text, titles[0].pieces, an.strings)) if titles else ""
        work.append((c, abstracts[0], {"key": ent.key, "title": title, "abstract": abstract}))

    results: Sequence[Sequence[str]] = []
    if work:
        results = predict([w[2] for w in work])
        if results is None or len(results) != len(work):
            raise ValueError(
                f"predict returned {0 if results is None else len(results)} results for {len(work)} entries"
            )

    edits: dict[int, tuple[_Cand, tuple[int, int, str], bool]] = {}
    for (c, abstract, _), tags in zip(work, results):
        tags = _check_tags(tags, facets, c.key)
        try:
            edit, why, had_tool = _plan(text, c.entry, tags, facets, field, abstract)
        except Exception as exc:  # a bug here must not damage the file: skip the entry
            edit, why, had_tool = None, f"internal error while planning the edit ({exc!r}); left untouched", False
        if why:
            problem(an.line(c.start), c.key, why)
        elif edit is not None:
            edits[c.index] = (c, edit, had_tool)

    # apply, verify, and drop unverifiable edits until the result is verified
    while True:
        new_text = _apply(text, [e for _, e, _ in edits.values()])
        if not edits or not verify:
            break
        bad = _verify(an, new_text, edits, field)
        if not bad:
            break
        for idx in bad:
            c = edits.pop(idx)[0]
            problem(an.line(c.start), c.key, "the edit could not be verified by re-parsing; left untouched")

    changed = sorted(edits.values(), key=lambda v: v[0].start)
    report = BibReport(new_text)
    report.changed_keys = [c.key for c, _, _ in changed]
    report.stale_keys = list(report.changed_keys)
    report.stale_entries = [
        (an.line(c.start), c.key, "tags out of date" if had_tool else "tags missing") for c, _, had_tool in changed
    ]
    report.problems = sorted(((ln, k, "; ".join(rs)) for (ln, k), rs in problems.items()), key=lambda p: p[0])
    return report


def _verify(an: _Analysis, new_text: str, edits: dict, field: str | None) -> list[int]:
    """Indices of edited blocks whose edit is not confirmed by re-parsing ``new_text``."""
    old = an.located
    all_idx = sorted(edits)
    try:
        new = _parse_blocks(new_text)
    except Exception:
        return all_idx
    if len(new) != len(old):
        return _first_culprits(old, new, all_idx)
    text = an.text
    bad: list[int] = []
    target = (field or "keywords").casefold()
    for i, ((ob, os_, oe), (nb, _, _)) in enumerate(zip(old, new)):
        if type(ob) is not type(nb):
            return _first_culprits(old, new, all_idx, upto=i)
        if i not in edits:
            if ob.raw != nb.raw:
                return _first_culprits(old, new, all_idx, upto=i)
            continue
        c, (a, b, r), _ = edits[i]
        expected_raw = text[os_:a] + r + text[b:oe]
        if nb.raw != expected_raw:
            bad.append(i)
            continue
        # the fields must be the old ones, with only the tag field changed
        new_start = new[i][1]
        try:
            ne = _scan_entry(new_text, new_start, c.entry.mode)
            if c.recovered:
                alt = _scan_entry(new_text, new_start, "none")
                if alt.spans() != ne.spans():
                    raise _ScanError(0, "modes disagree")
        except _ScanError:
            bad.append(i)
            continue
        if not c.recovered:
            bp = [(f.key, f.value) for f in getattr(nb, "fields", [])]
            if bp != [(f.name, new_text[f.value_start : f.value_end]) for f in ne.fields]:
                bad.append(i)
                continue
        oldf = [(f.name, text[f.value_start : f.value_end]) for f in c.entry.fields]
        newf = [(f.name, new_text[f.value_start : f.value_end]) for f in ne.fields]
        if [x for x in oldf if x[0].casefold() != target] != [x for x in newf if x[0].casefold() != target]:
            bad.append(i)
            continue
        if ne.type != c.entry.type or ne.key != c.entry.key:
            bad.append(i)
    return bad


def _first_culprits(old, new, edited: list[int], upto: int | None = None) -> list[int]:
    """When the block structure differs, blame the last edit at or before the divergence."""
    if upto is None:
        upto = next((i for i, (o, n) in enumerate(zip(old, new)) if o[0].raw != n[0].raw), len(old) - 1)
    before = [i for i in edited if i <= upto]
    return [before[-1]] if before else edited[:1]


# --------------------------------------------------------------------------------------
# Public: run
# --------------------------------------------------------------------------------------


def _diff(old: str, new: str, path: str) -> str:
    def lines(s: str) -> list[str]:
        parts = s.split("\n")
        res = [p + "\n" for p in parts[:-1]]
        if parts[-1]:
            res.append(parts[-1] + "\n\\ No newline at end of file\n")
        return res

    return "".join(difflib.unified_diff(lines(old), lines(new), fromfile=f"a/{path}", tofile=f"b/{path}"))


def _write_atomic(path: str, data: bytes) -> None:
    """Write via a temporary file in the same directory and ``os.replace``; keeps the mode."""
    real = os.path.realpath(path)
    directory = os.path.dirname(real) or "."
    mode = stat.S_IMODE(os.stat(real).st_mode)
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(real) + ".", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, real)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def run(paths: Iterable[str | os.PathLike], *, predict: Predict, facets: Collection[str],
        check: bool = False, strict: bool = False, diff: bool = False, field: str | None = None,
        encoding: str | None = None, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Contract of ``tagger bib FILE...`` and of the pre-commit hook.

    For each file: read bytes, decode strictly (UTF-8, or ``encoding``), run
    :func:`update_bib_text` (``predict`` called once per file), print problems to ``err`` as
    ``FILE:LINE: KEY: reason``.  Without ``check``: a changed file is written back atomically
    in its encoding (temporary file + ``os.replace``, file mode kept) and ``Fixing FILE`` is
    printed to ``out``.  With ``check``: nothing is written; stale entries are listed on
    ``out`` as ``FILE:LINE: KEY: tags missing|tags out of date``.  ``diff`` prints the
    unified diff of what is (or would be) written to ``out``.  ``out``/``err`` default to
    ``sys.stdout``/``sys.stderr`` as they are at call time (so click's CliRunner captures them).

    Returns:
        2 if a file could not be read, decoded (non-UTF-8 without ``encoding``) or written
        (one ``tagger: error: FILE: ...`` line on ``err``, the file untouched); else 1 if a file was
        changed, or with ``check`` if any entry's tags are missing/stale, or with ``strict``
        if any problem was reported; else 0.

    Raises:
        ValueError: from ``predict``'s results (see :func:`update_bib_text`).
    """
    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err
    rc = 0
    enc = encoding or "utf-8"
    try:
        if codecs.lookup(enc).name == "utf-8-sig":
            enc = "utf-8"  # the BOM stays in the text as U+FEFF and is written back as is
    except LookupError:
        print(f"tagger: error: unknown encoding {enc!r}", file=err)
        return 2
    for p in paths:
        path = os.fspath(p)
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError as exc:
            print(f"tagger: error: {path}: cannot read file: {exc.strerror or exc}", file=err)
            rc = 2
            continue
        try:
            text = data.decode(enc)
        except UnicodeDecodeError as exc:
            if encoding is None:
                print(f"tagger: error: {path}: not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start}); "
                      f"pass --encoding with the file's encoding (e.g. --encoding latin-1)", file=err)
            else:
                print(f"tagger: error: {path}: cannot decode as {encoding} (byte 0x{data[exc.start]:02x} at offset "
                      f"{exc.start})", file=err)
            rc = 2
            continue
        try:
            same = text.encode(enc) == data
        except UnicodeEncodeError:
            same = False
        if not same:  # e.g. utf-16 written back with another byte order: refuse
            print(f"tagger: error: {path}: decoding as {enc} and encoding back does not reproduce the file's "
                  f"bytes; file left untouched", file=err)
            rc = 2
            continue
        report = update_bib_text(text, predict, facets=facets, field=field, verify=not check)
        for line, key, reason in report.problems:
            print(f"{path}:{line}: {key}: {reason}", file=err)
        if strict and report.problems:
            rc = max(rc, 1)
        changed = report.new_text != text
        if check:
            for line, key, why in report.stale_entries:
                print(f"{path}:{line}: {key}: {why}", file=out)
            if changed:
                rc = max(rc, 1)
                if diff:
                    out.write(_diff(text, report.new_text, path))
            continue
        if not changed:
            continue
        try:
            new_bytes = report.new_text.encode(enc)
        except UnicodeEncodeError as exc:
            print(f"tagger: error: {path}: the new tags cannot be encoded as {enc} ({exc.reason}); file left untouched",
                  file=err)
            rc = 2
            continue
        try:
            _write_atomic(path, new_bytes)
        except OSError as exc:
            print(f"tagger: error: {path}: cannot write file: {exc.strerror or exc}", file=err)
            rc = 2
            continue
        print(f"Fixing {path}", file=out)
        if diff:
            out.write(_diff(text, report.new_text, path))
        rc = max(rc, 1)
    return rc
