"""The text of a new field, in the entry's own layout and the file's separator style.

A field is inserted after the entry's last field, with the separator text, indent and line
ending of that field (so tabs, comma-first style, BibDesk ``}}``, one-line entries and CRLF
carry over).  Its name takes the letter case of the entry's other field names; its
delimiters are the entry's (quotes when most of its fields are quoted); its ``=`` is put in
the column where the entry's fields have theirs when they are aligned (Paperpile, JabRef,
biblatex's examples), else spaced as the last field; the tags are joined with the separator
the file's other keyword fields use (``"; "`` in a file written that way, else ``", "``).
"""

from __future__ import annotations

import re
from collections import Counter

from .locate import Entry, Field

_EQ_RE = re.compile(r"( *)=([ \t]*)")


def case_like(name: str, fields: list[Field], tie: Field | None) -> str:
    """``name`` in the letter case most of ``fields`` use (``KEYWORDS``, ``Keywords``,
    ``keywords``); on a tie, in the case of ``tie``'s name."""

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
    tie_style = style(tie.name) if tie is not None else None
    st = tie_style if len(winners) > 1 and tie_style in winners else winners[0]
    return {"upper": name.upper(), "lower": name.lower(), "title": name[:1].upper() + name[1:].lower()}[st]


def delims(ent: Entry) -> tuple[str, str]:
    """``('"', '"')`` when most of the entry's delimited fields use quotes (ties: the last
    such field), else ``("{", "}")``."""
    kinds = []
    for f in ent.fields:
        ks = {p.kind for p in f.pieces} - {"bare"}
        if len(ks) == 1:
            kinds.append(ks.pop())
    quoted, braced = kinds.count("quote"), kinds.count("brace")
    if quoted > braced or (quoted == braced and kinds and kinds[-1] == "quote"):
        return '"', '"'
    return "{", "}"


def _between(text: str, ent: Entry, name: str, indent: str, open_delim: str) -> str:
    """The text between a new field's name and its value: ``=`` aligned in the column the
    entry's fields share, if they share one, else as in the last field."""
    last = ent.fields[-1]
    fallback = text[last.name_end : last.value_start]
    if len(ent.fields) < 2 or "\t" in indent or "\n" in fallback:
        return fallback
    cols: Counter = Counter()
    rests: Counter = Counter()
    measured = []
    for f in ent.fields:
        line_start = text.rfind("\n", ent.start, f.name_start) + 1
        prefix = text[line_start : f.name_start]
        m = _EQ_RE.fullmatch(text, f.name_end, f.value_start)
        if line_start == 0 or prefix.strip() or "\t" in prefix or m is None:
            continue  # not on a line of its own, tab-indented, or `=` on another line
        col = len(prefix) + len(f.name) + len(m.group(1))
        measured.append((len(prefix) + len(f.name), col))
        cols[col] += 1
        if f.pieces and f.pieces[0].kind != "bare" and text[f.pieces[0].start] == open_delim:
            rests[m.group(2)] += 1
    if len(measured) < 2:
        return fallback
    col, _ = cols.most_common(1)[0]
    # aligned: every field has its `=` there, or a name too long to fit before it
    if not all(c == col or width + 1 > col for width, c in measured) or cols[col] < 2:
        return fallback
    rest = rests.most_common(1)[0][0] if rests else _EQ_RE.fullmatch(text, last.name_end, last.value_start).group(2)
    return " " * max(1, col - len(indent) - len(name)) + "=" + rest


def new_field(text: str, ent: Entry, name: str, tags: list[str], join_sep: str) -> tuple[int, str]:
    """Where and what to insert for a new field ``name`` holding ``tags``: ``(offset,
    text)``; the offset is the end of the entry's last field (which must exist)."""
    last = ent.fields[-1]
    prev_end = ent.fields[-2].value_end if len(ent.fields) > 1 else ent.key_end
    sep = text[prev_end : last.name_start]
    indent = sep[sep.rfind("\n") + 1 :] if "\n" in sep else ""
    o, c = delims(ent)
    between = _between(text, ent, name, indent, o)
    return last.value_end, sep + name + between + o + join_sep.join(tags) + c
