"""Entries over ``--max-record-size`` in a ``.bib`` text: masked before parsing, so that
neither the parser nor the model ever holds them, and put back byte for byte after."""

from __future__ import annotations

import re

from ..files.limits import over_limit
from .read import UNREADABLE, Problem


#: where a BibTeX block may start: an ``@`` first on its line
_BLOCK_START_RE = re.compile(r"(?m)^[ \t]*@")
_KEY_RE = re.compile(r"@\s*[A-Za-z]+\s*[{(]\s*([^,\s{}()]*)")


def mask_oversized(text: str, limit: int | None) -> tuple[str, list[tuple[str, str]], list[Problem]]:
    """``text`` with each block (from an ``@`` that starts a line to the next) longer than
    ``limit`` characters (``--max-record-size``) replaced by a placeholder of as many lines,
    so that the parser and the model never see it; returns ``(masked, [(placeholder,
    original)], problems)``, a problem (:data:`UNREADABLE`, ``value of N MB over the
    limit``) per block.  :func:`unmask` puts the originals back, byte for byte."""
    import secrets

    if limit is None or len(text) <= limit:
        return text, [], []
    starts = [m.start() for m in _BLOCK_START_RE.finditer(text)]
    if not starts or starts[0] != 0:
        starts.insert(0, 0)
    starts.append(len(text))
    pieces, originals, problems, line, tag = [], [], [], 1, secrets.token_hex(6)
    for s, e in zip(starts, starts[1:]):
        seg = text[s:e]
        lines = seg.count("\n")
        if e - s > limit:
            m = _KEY_RE.match(seg.lstrip())
            key = (m.group(1) if m else "") or f"@{line}"
            ph = f"tagger-oversized-{tag}-{len(originals)}" + "\n" * lines
            originals.append((ph, seg))
            problems.append(Problem(line, key, UNREADABLE, over_limit("value", e - s, limit)))
            pieces.append(ph)
        else:
            pieces.append(seg)
        line += lines
    return "".join(pieces), originals, problems


def unmask(text: str, originals: list[tuple[str, str]]) -> str:
    """``text`` with the placeholders of :func:`mask_oversized` replaced by their originals."""
    for ph, seg in originals:
        text = text.replace(ph, seg, 1)
    return text
