"""PubMed's MEDLINE text (``.nbib``, ``.medline``, or a ``.txt`` starting ``PMID- ``; PubMed's
"Save: PubMed format"): each record a run of ``TAG - value`` lines from ``PMID- `` to a blank
line, read by our own small reader (:mod:`tagger.readers.tagged`), which keeps each record's
lines so that ``tagger filter`` writes the matching records back as they were.

The record's fields: ``id`` (``PMID``), ``title`` (``TI``, else a book's ``BTI``),
``abstract`` (``AB``), then every other tag under its own name (``AU``, ``MH``, ``DP``, ...;
one that occurs more than once, and the author and MeSH tags always, a list).  A line
starting with six spaces continues the value before it (joined with a space, as
``Bio.Medline`` does).
"""

from __future__ import annotations

import re

from .base import ReadOptions
from .tagged import Syntax, read_tagged

FORMAT = "medline"
SYNTAX = Syntax("MEDLINE", re.compile(r"([A-Z0-9]{1,4}) *- ?(.*)$"), "PMID", continuation=re.compile(r" {6}"),
                multi=frozenset({"AU", "FAU", "AD", "MH", "OT", "PT", "AID", "LID", "IS", "RN", "SI", "GR"}))


def _fields(tags: dict, n: int, stem: str) -> dict:
    def text(name):
        v = tags.get(name)
        return " ".join(v) if isinstance(v, list) else (v or "")

    title_tag = "TI" if "TI" in tags else ("BTI" if "BTI" in tags else None)
    out = {"id": text("PMID") or f"{stem}:{n}", "title": text(title_tag) if title_tag else "", "abstract": text("AB")}
    out.update((k, v) for k, v in tags.items() if k not in ("PMID", title_tag, "AB"))
    return out


def reader(path: str, fmt: str = FORMAT, opts: ReadOptions = ReadOptions()):
    """The records of a MEDLINE file (module docstring), with ``would_wait``."""
    return read_tagged(path, opts, SYNTAX, _fields)
