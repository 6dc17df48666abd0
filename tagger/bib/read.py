"""Reading a .bib text: which entries can be read safely, what is wrong with the others,
and the text of an entry for the model.

Every problem is one of two kinds:

* ``unreadable``: the entry's extent or fields cannot be determined safely (unbalanced or
  unclosed braces, a phantom entry, text bibtexparser cannot parse, a missing comma
  between fields, an unescaped quote, a stray closing brace, an ambiguous backslash before a
  delimiter).  The entry is left untouched.
* ``warning``: the entry is readable but odd.  Duplicate keys, duplicate fields and ``%``
  lines inside an entry leave it untouched; an empty key or a key with spaces does not.

Recovery: bibtexparser gives up on a broken block at the next line that starts with
``@word{``/``@word(``; reading resumes there, so every later entry is read as usual.  The
block at which reading resumed is a *phantom* (an ``@`` line inside a value of the broken
entry) when the text after it, up to the next block, closes a brace it did not open.  Each
check looks at one block and its gap, so the cost is linear in the size of the file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field as dc_field
from typing import NamedTuple

from .locate import (
    BACKSLASH_DELIMITER,
    OPEN_RE,
    PERCENT_REASON,
    UNTERMINATED,
    Entry,
    Lines,
    ScanError,
    ends_early,
    next_block_start,
    parse_blocks,
    scan_entry,
    scan_value,
    skip_ws,
)
from .values import model_text, resolve

UNREADABLE = "unreadable"
WARNING = "warning"

_FAILED_KEY_RE = re.compile(r"@(\w*)[ \t]*[{(]\s*([^\s,{}()\"=#%]*)")
_LOOKS_LIKE_BLOCK_RE = re.compile(r"(?:^|(?<=\s))@[ \t]*([A-Za-z][\w-]*)\s*[{(]\s*([^\s,{}()\"=#%]*)", re.M)
_SPECIAL = ("comment", "string", "preamble")


class Problem(NamedTuple):
    """One reported problem: 1-based ``line`` of the block's ``@``, the entry ``key``
    (``-`` for an empty key, ``@type`` for blocks without one), ``kind`` (``unreadable`` or
    ``warning``) and a one-line ``reason``."""

    line: int
    key: str
    kind: str
    reason: str


@dataclass
class Cand:
    """An entry block: index in the located list, key, offsets, the scanned entry (None when
    unreadable), its problems ``[(kind, reason)]`` and whether it may be edited."""

    index: int
    key: str
    start: int
    end: int
    entry: Entry | None = None
    problems: list[tuple[str, str]] = dc_field(default_factory=list)
    recovered: bool = False
    editable: bool = True
    #: an entry read but never edited (a duplicate field, ``%`` comments), for label/filter
    read_only: Entry | None = None

    def fail(self, reason: str) -> None:
        """Record an unreadable reason; the entry is left untouched."""
        self.problems.append((UNREADABLE, reason))
        self.editable = False

    def warn(self, reason: str, untouched: bool = False) -> None:
        """Record a warning; ``untouched``: the entry is left as it is."""
        self.problems.append((WARNING, reason))
        if untouched:
            self.editable = False

    @property
    def shown_key(self) -> str:
        """The key as reports show it (``-`` when empty)."""
        return self.key or "-"


class Analysis:
    """A .bib text read once: located blocks, entry candidates, block problems, macros.

    Attributes: ``text``; ``line`` (offset -> 1-based line); ``located`` (see
    :func:`parse_blocks`); ``cands`` (entries in file order); ``block_problems``
    (:class:`Problem` of blocks that are no entries); ``strings`` (macro -> resolved text).

    Raises:
        ValueError, or whatever bibtexparser raises on text it cannot split (never seen).
    """

    def __init__(self, text: str):
        self.text = text
        self.line = Lines(text)
        self.located = parse_blocks(text)
        self.cands: list[Cand] = []
        self.block_problems: list[Problem] = []
        self.strings: dict[str, str] = {}
        self._analyse()

    def _analyse(self) -> None:
        from bibtexparser.model import (
            DuplicateBlockKeyBlock,
            DuplicateFieldKeyBlock,
            Entry as BEntry,
            ExplicitComment,
            ImplicitComment,
            ParsingFailedBlock,
            Preamble,
            String,
        )

        by_index: dict[int, Cand] = {}
        failed: list[tuple[int, int, str]] = []  # (index, start, word)
        for idx, (b, s, e) in enumerate(self.located):
            if isinstance(b, String):
                self._add_string(b)
            elif isinstance(b, ImplicitComment):
                for m in _LOOKS_LIKE_BLOCK_RE.finditer(b.raw):
                    if m.group(1).lower() != "comment":
                        self.block_problems.append(Problem(
                            self.line(s + m.start()), m.group(2) or "@" + m.group(1), UNREADABLE,
                            "text that BibTeX reads as a block was not recognised by the parser"))
            elif isinstance(b, (ExplicitComment, Preamble)):
                pass
            elif isinstance(b, DuplicateBlockKeyBlock) and isinstance(b.ignore_error_block, String):
                self._add_string(b.ignore_error_block)
            elif isinstance(b, DuplicateBlockKeyBlock) and isinstance(b.ignore_error_block, BEntry):
                by_index[idx] = self._checked(idx, b.ignore_error_block, s, e)
            elif isinstance(b, DuplicateFieldKeyBlock):
                c = self._checked(idx, b.ignore_error_block, s, e)
                if c.entry is not None or not c.problems:
                    c.warn("duplicate field " + ", ".join(f"`{k}`" for k in sorted(b.duplicate_keys))
                           + "; left untouched", untouched=True)
                by_index[idx] = c
            elif isinstance(b, BEntry):
                by_index[idx] = self._checked(idx, b, s, e)
            elif isinstance(b, ParsingFailedBlock):
                m = _FAILED_KEY_RE.match(b.raw)
                word = m.group(1).lower() if m else ""
                key = m.group(2) if m and m.group(2) and word not in _SPECIAL else "@" + (m.group(1) if m else "")
                failed.append((idx, s, word))
                cand = self._recover(idx, s, e, key) if word not in _SPECIAL else None
                if cand is None and word not in _SPECIAL:
                    # a comma in a ``%`` comment ends bibtexparser's block early, the rest of the
                    # entry read as a comment: look as far as the next block that is not one
                    far = next((ls for lb, ls, _ in self.located[idx + 1:] if not isinstance(lb, ImplicitComment)),
                               len(self.text))
                    for limit in (e, far):
                        if self._percent_only(s, limit):
                            cand = Cand(idx, key, s, e)
                            cand.warn(PERCENT_REASON + "; left untouched", untouched=True)
                            cand.read_only = self._percent_entry(s, limit)
                            if cand.read_only is not None:
                                cand.end = cand.read_only.end
                            break
                if cand is None:
                    reason = self._failure_reason(b, s, e)
                    if word in _SPECIAL:
                        self.block_problems.append(Problem(self.line(s), key, UNREADABLE, reason))
                        continue
                    cand = Cand(idx, key, s, e)
                    cand.fail(reason)
                by_index[idx] = cand
            else:
                self.block_problems.append(Problem(self.line(s), "-", UNREADABLE,
                                                   f"unexpected block {type(b).__name__}"))
        self._phantoms(failed, by_index, (ImplicitComment,))
        self.cands = [by_index[i] for i in sorted(by_index)]
        self._duplicates()

    # -- the checks ---------------------------------------------------------------------

    def _percent_entry(self, s: int, e: int) -> Entry | None:
        """The entry at ``[s, e)`` read with its ``%`` comments skipped, if that reads it whole."""
        try:
            ent = scan_entry(self.text, s, "lookbehind", percent_lines=True, limit=e)
        except ScanError:
            return None
        return ent if ent.end == e or not self.text[ent.end:e].strip() else None

    def _percent_only(self, s: int, e: int) -> bool:
        """True when the only fault of the block at ``[s, e)`` is ``%`` lines between fields."""
        try:
            scan_entry(self.text, s, "lookbehind", limit=e)
            return False
        except ScanError as err:
            if err.reason != PERCENT_REASON:
                return False
        try:
            ent = scan_entry(self.text, s, "lookbehind", percent_lines=True, limit=e)
        except ScanError:
            return False
        return ent.end == e or not self.text[ent.end:e].strip()

    def _failure_reason(self, b, s: int, e: int) -> str:
        """Why a block bibtexparser gave up on cannot be read: the strict scanner's reason
        within the block's own text (bounded), else bibtexparser's."""
        text = self.text
        word = OPEN_RE.match(text, s)
        if word and word.group(1).lower() in _SPECIAL:
            nxt = f"line {self.line(next_block_start(text, e))}" if e < len(text) else "the end of the file"
            return f"@{word.group(1)}{{...}} not closed before {nxt}"
        try:
            scan_entry(text, s, "lookbehind", percent_lines=True, limit=e)
        except ScanError as err:
            if err.reason != UNTERMINATED:
                return err.reason + (f" (in `{err.field}`, line {self.line(err.field_pos)})" if err.field else "")
            nxt = f"line {self.line(next_block_start(text, e))}" if e < len(text) else "the end of the file"
            if err.field and text[s:e].rstrip()[-1:] in ("}", ")"):  # a value took the entry's closing brace
                return (f"unbalanced braces: a `{{` in `{err.field}` (line {self.line(err.field_pos)}) is never "
                        f"closed; reading resumes at {nxt}")
            return f"the entry is never closed (no `}}` before {nxt})"
        why = " ".join(str(getattr(b.error, "abort_reason", b.error)).split())
        return f"cannot be parsed ({why})"

    def _phantoms(self, failed, by_index: dict[int, Cand], skip: tuple) -> None:
        """Blocks inside the brace extent of a failed block: phantoms (an ``@`` line inside a
        value) or blocks inside a broken ``@comment{...}``.

        A failed block that leaves braces open is followed block by block (a parsed block is
        balanced; the gaps between blocks are counted) until the count returns to zero: the
        blocks passed are inside it.  When the count never returns to zero before the next
        failed block or the end of the file (an unclosed brace), reading simply resumes and
        nothing is inside.  Each block is walked by at most one failed block: linear cost.
        """
        from .locate import brace_balance

        located, text = self.located, self.text
        failed_at = {f[0] for f in failed}
        n = len(located)
        for fidx, fs, word in failed:
            depth, _ = brace_balance(text, fs, located[fidx][2])
            if depth <= 0:
                continue
            inside: list[int] = []
            j = fidx + 1
            while j < n and isinstance(located[j][0], skip):
                j += 1
            while j < n and j not in failed_at:
                inside.append(j)
                k = j + 1
                while k < n and isinstance(located[k][0], skip):
                    k += 1
                net, lowest = brace_balance(text, located[j][2], located[k][1] if k < n else len(text))
                if depth + lowest <= 0:
                    break
                depth += net
                j = k
            else:
                continue  # the braces never close: nothing is inside
            if word == "comment":
                why = f"inside the broken @comment{{...}} at line {self.line(fs)} (its `}}` follows); left untouched"
            else:
                why = (f"phantom entry: this `@` line is inside a value of the broken entry at line "
                       f"{self.line(fs)} (the value's `}}` follows it)")
            for j in inside:
                b, s, _ = located[j]
                if j in by_index:
                    by_index[j].problems.insert(0, (UNREADABLE, why))
                    by_index[j].editable = False
                else:
                    self.block_problems.append(Problem(self.line(s), "@" + type(b).__name__.lower(), UNREADABLE, why))

    def _duplicates(self) -> None:
        """Duplicate keys, compared case-insensitively as BibTeX does: all left untouched."""
        by_key: dict[str, list[Cand]] = {}
        for c in self.cands:
            if c.key and not c.key.startswith("@"):
                by_key.setdefault(c.key.casefold(), []).append(c)
        for group in by_key.values():
            if len(group) < 2:
                continue
            lines = [self.line(c.start) for c in group]
            for c in group:
                others = [str(x) for x in lines if x != self.line(c.start)]
                shown = ", ".join(others[:3]) + (f" and {len(others) - 3} more" if len(others) > 3 else "")
                c.warn(f"duplicate key (also at line {shown}); left untouched", untouched=True)

    def _add_string(self, b) -> None:
        try:
            pieces, end = scan_value(b.value, 0, "lookbehind", None)
        except (ScanError, IndexError):
            return
        if skip_ws(b.value, end) != len(b.value):
            return
        self.strings[b.key.casefold()] = resolve(b.value, pieces, self.strings)

    def _checked(self, idx: int, b, s: int, e: int) -> Cand:
        """Cross-check a bibtexparser entry with the strict scanner."""
        text = self.text
        cand = Cand(idx, b.key, s, e)
        try:
            ent = scan_entry(text, s, "lookbehind", limit=e)
        except ScanError as err:
            if err.reason != PERCENT_REASON:
                cand.fail(self._scan_reason(err))
                return cand
            try:
                ent = scan_entry(text, s, "lookbehind", percent_lines=True, limit=e)
            except ScanError as err2:
                cand.fail(self._scan_reason(err2))
                return cand
            cand.warn(PERCENT_REASON + "; left untouched", untouched=True)
            cand.read_only = ent
            return cand
        if ent.end != e or ent.key != b.key or [(f.name, text[f.value_start : f.value_end]) for f in ent.fields] != [
            (f.key, f.value) for f in b.fields
        ]:
            cand.fail("bibtexparser and the strict reader disagree on this entry")
            return cand
        if BACKSLASH_DELIMITER.search(text, s, e) is None:
            par = ent  # the two readings differ only at a backslash before a delimiter
        else:
            try:
                par = scan_entry(text, s, "parity", limit=e)
            except ScanError:
                par = None
        if par is None or par.spans() != ent.spans() or par.end != ent.end:
            cand.fail("ambiguous backslash before a delimiter (e.g. `\\\\}`)")
            return cand
        self._common_checks(cand, ent)
        return cand

    def _recover(self, idx: int, s: int, e: int, key: str) -> Cand | None:
        """Read a block bibtexparser failed on, if parity-aware escapes and plain BibTeX
        agree on it within the block (bibtexparser's `\\\\}` bug)."""
        text = self.text
        if not OPEN_RE.match(text, s):
            return None
        try:
            par = scan_entry(text, s, "parity", limit=e)
            plain = scan_entry(text, s, "none", limit=e)
        except ScanError:
            return None
        if par.spans() != plain.spans() or par.end != plain.end or "@" in text[par.end : e]:
            return None
        cand = Cand(idx, par.key, s, e, recovered=True)
        self._common_checks(cand, par)
        return cand

    def _scan_reason(self, err: ScanError) -> str:
        if err.reason == UNTERMINATED:  # the scan is bounded by bibtexparser's end of the block
            return "bibtexparser and the strict reader disagree on where this entry ends"
        return err.reason + (f" (in `{err.field}`, line {self.line(err.pos)})" if err.field else "")

    def _common_checks(self, cand: Cand, ent: Entry) -> None:
        names: dict[str, str] = {}
        for f in ent.fields:
            k = f.name.casefold()
            if k in names:
                cand.warn(f"duplicate field `{names[k]}`/`{f.name}`; left untouched", untouched=True)
                if not ends_early(self.text, ent.end):
                    cand.read_only = ent  # read (the first of the two, as BibTeX does), never edited
                return
            names[k] = f.name
        if ends_early(self.text, ent.end):
            cand.fail("stray closing brace: the entry ends early, its last fields follow it")
            return
        if not ent.key:
            cand.warn("empty key (the entry cannot be cited)")
        elif " " in ent.key or "\t" in ent.key:
            cand.warn("key contains spaces (BibTeX reads only its first word)")
        cand.entry = ent

    # -- for the model ------------------------------------------------------------------

    def value(self, cand: Cand, name: str) -> str | None:
        """The model text (:func:`model_text`) of field ``name`` (case-insensitive) of a
        readable entry, or None when the entry has no such field."""
        for f in (cand.entry or cand.read_only).fields:
            if f.name.casefold() == name:
                return model_text(resolve(self.text, f.pieces, self.strings))
        return None


def read_records(text: str) -> tuple[list[dict], list[Problem]]:
    """The entries of a .bib text as records, for reading .bib files as input.

    Returns ``(records, problems)``: one dict per entry that can be read safely (warnings
    included), file order, with ``key``, ``title`` and ``abstract`` (model text, ``""`` when
    absent), ``line`` (1-based line of its ``@``), ``start``/``end`` (offsets of its text in
    ``text``) and ``fields`` (``{name as spelled: resolved value}``, verbatim LaTeX); and the
    :class:`Problem` of every block, by line.

    Raises:
        ValueError: bibtexparser could not split the text (never seen).
    """
    an = Analysis(text)
    records, problems = [], list(an.block_problems)
    for c in an.cands:
        problems.extend(Problem(an.line(c.start), c.shown_key, k, r) for k, r in c.problems)
        ent = c.entry or c.read_only
        if ent is None or (c.problems and any(k == UNREADABLE for k, _ in c.problems)):
            continue
        fields: dict = {}
        for f in ent.fields:  # of a duplicate field, the first (as BibTeX reads it)
            if not any(k.casefold() == f.name.casefold() for k in fields):
                fields[f.name] = resolve(text, f.pieces, an.strings)
        records.append({
            "key": ent.key, "title": an.value(c, "title") or "", "abstract": an.value(c, "abstract") or "",
            "line": an.line(c.start), "start": c.start, "end": c.end, "fields": fields,
        })
    problems.sort(key=lambda p: p.line)
    return records, problems

