"""Locating blocks and value spans: bibtexparser for the blocks, a strict scanner for fields.

bibtexparser 2.x (``parse_string(text, parse_stack=[])``, values verbatim) finds the blocks:
every block's ``raw`` is an exact substring of the text, found in order.  Its splitter starts
a block at ``@word{``/``@word(`` and, inside an unfinished block, gives up at the next line
that starts with one (a ``ParsingFailedBlock``), so one broken entry never hides the rest.

The strict scanner of this module reads one entry again with BibTeX's grammar
(``@type{key, name = value # value, ...}``) and returns the offsets of its key, field names
and values in the original text; the edits are spliced there.  It raises :class:`ScanError`
(a position and a reason) on what it cannot read.  Every scan is bounded by the text it is
given: a failed block is scanned within its own ``raw``, so a value whose brace is never
closed costs the length of that block, not of the rest of the file.
"""

from __future__ import annotations

import bisect
import contextlib
import logging
import re
from dataclasses import dataclass

# Escape rules for braces/quotes inside values:
#   "lookbehind": a delimiter directly preceded by "\" is literal (bibtexparser 2.1.0)
#   "parity":     "\" escapes the next character, so "\\" is an escaped backslash
#   "none":       no escapes at all (BibTeX itself)
MODES = ("lookbehind", "parity", "none")

OPEN_RE = re.compile(r"@(\w*)[ \t]*([{(])")  # same block start as bibtexparser's splitter
NAME_RE = re.compile(r"[^\s\"#%'(),={}]+")
_BARE_RE = NAME_RE
# a key may hold spaces ("Di Rocco2025", as Scopus writes them): the entry is still readable
_KEY_BRACE_RE = re.compile(r"[^\s,{}\"=#%]+(?:[ \t]+[^\s,{}\"=#%]+)*")
_KEY_PAREN_RE = re.compile(r"[^\s,{}\"=#%()]+(?:[ \t]+[^\s,{}\"=#%()]+)*")
_WS_RE = re.compile(r"\s*")
_BRACE_RE = re.compile(r"[{}]")
_BRACE_BS_RE = re.compile(r"[{}\\]")
_QUOTE_RE = re.compile(r"[{}\"]")
_QUOTE_BS_RE = re.compile(r"[{}\"\\]")
_LINE_END_RE = re.compile(r"[^\n]*")
_NEXT_BLOCK_RE = re.compile(r"\n[ \t]*@")

#: where the "lookbehind" and "parity" readings of backslashes can differ
BACKSLASH_DELIMITER = re.compile(r'\\[{}"]')

#: the reason of a `%` line inside an entry (a warning, not a reading failure)
PERCENT_REASON = "`%` line inside the entry (BibTeX has no comments there)"
#: the reason when an entry runs to the end of the text it was scanned in
UNTERMINATED = "unterminated entry"


class ScanError(Exception):
    """The strict scanner cannot read an entry: ``pos`` (offset in the scanned text),
    ``reason`` (one line), ``field`` (the field being read or last read, or None) and
    ``field_pos`` (the offset of that field's name, -1 without one)."""

    def __init__(self, pos: int, reason: str, field: str | None = None, field_pos: int = -1):
        super().__init__(reason)
        self.pos = pos
        self.reason = reason
        self.field = field
        self.field_pos = field_pos


@dataclass
class Piece:
    """One piece of a value: ``kind`` is ``brace``, ``quote`` or ``bare``; offsets
    ``[start, end)`` include the delimiters."""

    kind: str
    start: int
    end: int


@dataclass
class Field:
    """One field: its name as spelled, offsets of name and value, and the value's pieces."""

    name: str
    name_start: int
    name_end: int
    value_start: int
    value_end: int
    pieces: list[Piece]


@dataclass
class Entry:
    """An entry read by :func:`scan_entry`; offsets into the scanned text."""

    start: int  # index of "@"
    end: int  # index after the closing delimiter
    type: str  # as spelled
    key: str  # "" for an empty key
    key_end: int  # index after the key
    close: str  # "}" or ")"
    fields: list[Field]
    mode: str  # escape rule under which it was read

    def spans(self):
        """``[(name, name_start, name_end, value_start, value_end)]``, for comparing readings."""
        return [(f.name, f.name_start, f.name_end, f.value_start, f.value_end) for f in self.fields]


def skip_ws(text: str, i: int) -> int:
    """Index of the first non-whitespace character at or after ``i``."""
    return _WS_RE.match(text, i).end()


def _scan_braced(text: str, pos: int, mode: str, limit: int) -> int:
    """Index after the ``}`` closing the ``{`` at ``pos``."""
    depth = 0
    i = pos
    pat = _BRACE_BS_RE if mode == "parity" else _BRACE_RE
    while True:
        m = pat.search(text, i, limit)
        if m is None:
            raise ScanError(pos, "unbalanced braces: a `{` of the value is never closed")
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


def _scan_quoted(text: str, pos: int, mode: str, limit: int) -> int:
    """Index after the ``"`` closing the quoted value opened at ``pos``."""
    depth = 0
    i = pos + 1
    pat = _QUOTE_BS_RE if mode == "parity" else _QUOTE_RE
    bs_quote = 'backslash-escaped `"` in a quoted value (BibTeX ends the value there; write {"})'
    while True:
        m = pat.search(text, i, limit)
        if m is None:
            raise ScanError(pos, "unterminated quoted value")
        j = m.start()
        c = text[j]
        if c == "\\":
            if depth == 0 and text.startswith('"', j + 1):
                raise ScanError(j, bs_quote)
            i = j + 2
            continue
        escaped = mode == "lookbehind" and text[j - 1] == "\\"
        if c == '"':
            if depth == 0:
                if escaped:
                    raise ScanError(j, bs_quote)
                return j + 1
        elif not escaped:
            if c == "{":
                depth += 1
            elif depth == 0:
                raise ScanError(j, "unbalanced braces: `}` without `{` inside a quoted value")
            else:
                depth -= 1
        i = j + 1


def scan_value(text: str, pos: int, mode: str, close: str | None, limit: int | None = None) -> tuple[list[Piece], int]:
    """Read a value expression ``piece (# piece)*`` starting at ``pos`` (no leading space),
    looking no further than ``limit`` (default: the end of the text).

    Returns ``(pieces, end)``.  Raises :class:`ScanError`.
    """
    pieces: list[Piece] = []
    k = pos
    n = len(text) if limit is None else limit
    while True:
        if k >= n:
            raise ScanError(k, UNTERMINATED)
        c = text[k]
        if c == "{":
            e = _scan_braced(text, k, mode, n)
            pieces.append(Piece("brace", k, e))
        elif c == '"':
            e = _scan_quoted(text, k, mode, n)
            pieces.append(Piece("quote", k, e))
        else:
            m = _BARE_RE.match(text, k, n)
            if m is None or (close == ")" and ")" in m.group()):
                raise ScanError(k, "missing or malformed field value")
            e = m.end()
            pieces.append(Piece("bare", k, e))
        t = skip_ws(text, e)
        if t < n and text[t] == "#":
            k = skip_ws(text, t + 1)
            continue
        return pieces, e


def _after_value_error(text: str, j: int, last: Piece, name: str, n: int) -> ScanError:
    m = NAME_RE.match(text, j, n)
    if m is not None:
        t = skip_ws(text, m.end())
        if t < n and text[t] == "=":
            return ScanError(j, "missing comma between fields", name)
    if last.kind == "quote":
        return ScanError(j, 'unescaped `"` inside a quoted value', name)
    if last.kind == "brace":
        return ScanError(j, "unbalanced braces: text after the closing `}` of a value (stray `}`?)", name)
    return ScanError(j, "unexpected text after a field value", name)


def scan_entry(text: str, pos: int, mode: str, percent_lines: bool = False, limit: int | None = None) -> Entry:
    """Read the entry whose ``@`` is at ``pos`` under escape rule ``mode``, looking no
    further than ``limit`` (default: the end of the text); offsets are into ``text``.

    ``percent_lines``: skip ``%`` comments between fields (a line of its own, or the rest
    of a line after a value) instead of failing on them (to find out whether such an entry
    has other faults, and to read it for ``tagger label``).

    Raises:
        ScanError: with a position and a one-line reason.
    """
    n = len(text) if limit is None else limit
    m = OPEN_RE.match(text, pos, n)
    if m is None:
        raise ScanError(pos, "not an entry")
    close = "}" if m.group(2) == "{" else ")"
    i = skip_ws(text, m.end())
    km = (_KEY_BRACE_RE if close == "}" else _KEY_PAREN_RE).match(text, i, n)
    key, key_end = (km.group(), km.end()) if km else ("", i)
    j = skip_ws(text, key_end)
    if j >= n:
        raise ScanError(j, UNTERMINATED)
    fields: list[Field] = []
    if text[j] == close:
        return Entry(pos, j + 1, m.group(1), key, key_end, close, fields, mode)
    if text[j] != ",":
        raise ScanError(j, "malformed entry key (expected `,` after the key)")
    j += 1
    name, name_pos = None, -1
    while True:
        j = skip_ws(text, j)
        if j >= n:
            raise ScanError(j, UNTERMINATED, name, name_pos)
        c = text[j]
        if c == close:
            return Entry(pos, j + 1, m.group(1), key, key_end, close, fields, mode)
        if c == "%":
            if not percent_lines:
                raise ScanError(j, PERCENT_REASON)
            j = _LINE_END_RE.match(text, j, n).end()
            continue
        nm = NAME_RE.match(text, j, n)
        if nm is None:
            raise ScanError(j, f"expected a field name, found `{c}`", name)
        name, name_pos = nm.group(), j
        k = skip_ws(text, nm.end())
        if k >= n or text[k] != "=":
            raise ScanError(j, f"malformed field name or missing `=` after `{name}`", name, j)
        vs = skip_ws(text, k + 1)
        try:
            pieces, ve = scan_value(text, vs, mode, close, n)
        except ScanError as err:
            raise ScanError(err.pos, err.reason, name, name_pos) from None
        fields.append(Field(name, j, nm.end(), vs, ve, pieces))
        j = skip_ws(text, ve)
        # a comment after the last value, on its line (``NAME = {x}   % note``, biber's files)
        while j < n and text[j] == "%" and "\n" not in text[ve:j]:
            if not percent_lines:
                raise ScanError(j, PERCENT_REASON)
            ve = _LINE_END_RE.match(text, j, n).end()
            j = skip_ws(text, ve)
        if j >= n:
            raise ScanError(j, UNTERMINATED, name, name_pos)
        if text[j] == ",":
            j += 1
            continue
        if text[j] == close:
            return Entry(pos, j + 1, m.group(1), key, key_end, close, fields, mode)
        err = _after_value_error(text, j, pieces[-1], name, n)
        err.field_pos = name_pos
        raise err


def _continues_as_fields(seg: str) -> bool:
    """True when ``seg`` (the text after an entry's end, up to the next block) reads as more
    fields and a closing delimiter (``, name = value, ... }``): a stray brace closed it early."""
    n = len(seg)
    j = skip_ws(seg, 0)
    if j < n and seg[j] == ",":
        j = skip_ws(seg, j + 1)
    seen = 0
    try:
        while j < n:
            if seg[j] in "})":
                return seen > 0
            nm = NAME_RE.match(seg, j)
            if nm is None:
                return False
            k = skip_ws(seg, nm.end())
            if k >= n or seg[k] != "=":
                return False
            _, ve = scan_value(seg, skip_ws(seg, k + 1), "lookbehind", None)
            seen += 1
            j = skip_ws(seg, ve)
            if j < n and seg[j] == ",":
                j = skip_ws(seg, j + 1)
            elif j < n and seg[j] not in "})":
                return False
    except ScanError:
        return False
    return False


def next_block_start(text: str, pos: int) -> int:
    """Offset of the next ``@`` that starts a line (after optional blanks) at or after
    ``pos``, or ``len(text)``."""
    m = _NEXT_BLOCK_RE.search(text, pos)
    return m.end() - 1 if m else len(text)


def brace_balance(text: str, start: int, end: int) -> tuple[int, int]:
    """``(net, lowest)`` of the braces of ``text[start:end]`` (a brace after ``\\`` does not
    count): ``net`` opened minus closed, ``lowest`` the lowest running count (<= 0)."""
    depth = lowest = 0
    for m in _BRACE_RE.finditer(text, start, end):
        i = m.start()
        if i > 0 and text[i - 1] == "\\":
            continue
        if text[i] == "{":
            depth += 1
        else:
            depth -= 1
            lowest = min(lowest, depth)
    return depth, lowest


def unmatched_close(text: str, start: int, end: int) -> bool:
    """True when ``text[start:end]`` holds a ``}`` that closes a brace opened before ``start``."""
    return brace_balance(text, start, end)[1] < 0


def ends_early(text: str, end: int) -> bool:
    """Signs that a stray ``}`` closed the entry ending at ``end`` too early: the next
    non-blank character is ``,``/``}``/``)``; or text follows on the same line and the
    text up to the next line-start ``@`` holds an unmatched ``}``; or that text reads as
    further fields and a closing delimiter.  Looks no further than the next block."""
    j = skip_ws(text, end)
    if j < len(text) and text[j] in ",})":
        return True
    limit = next_block_start(text, end)
    line_end = text.find("\n", end, limit)
    same_line = text[end : line_end if line_end >= 0 else limit]
    if same_line.strip() and unmatched_close(text, end, limit):
        return True
    return _continues_as_fields(text[end:limit])


@contextlib.contextmanager
def quiet_bibtexparser_logs():
    """Keep bibtexparser's parse warnings off stderr (the tool reports them itself)."""
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


def parse_blocks(text: str):
    """Parse with bibtexparser (empty stack) and locate every block.

    Returns ``[(block, start, end)]`` in file order, ``text[start:end] == block.raw``.
    Raises ValueError when a block's raw is not found in order (never seen).
    """
    import bibtexparser

    with quiet_bibtexparser_logs():
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


class Lines:
    """1-based line numbers of offsets into a text (one bisect per lookup)."""

    def __init__(self, text: str):
        self._nl = [m.start() for m in re.finditer("\n", text)]

    def __call__(self, pos: int) -> int:
        return bisect.bisect_left(self._nl, pos) + 1
