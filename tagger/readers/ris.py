"""RIS (``.ris``; Zotero, EndNote, Mendeley, IEEE Xplore, Scopus, Web of Science exports):
each ``TY  - `` ... ``ER  - `` block one record, read by our own small reader
(:mod:`tagger.readers.tagged`), which keeps each block's bytes (rispy gives none) so that
``tagger filter`` writes the matching records back as they were, CRLF included.

The record's fields: ``id`` (the ``ID`` tag, else ``DO``, the DOI, else ``<file stem>:<n>``,
n counting records), ``title`` (``TI``, else ``T1``), ``abstract`` (``AB``, else ``N2``), then
every other tag under its own name (``TY``, ``AU``, ``KW``, ...), a tag that occurs more than
once, and the author and keyword tags always, as a list.  A line without a tag continues the
value before it (joined with a space).
"""

from __future__ import annotations

import re

from .base import ReadOptions
from .tagged import Syntax, read_tagged

FORMAT = "ris"
SYNTAX = Syntax("RIS", re.compile(r"([A-Z][A-Z0-9])  -(?: (.*)|\s*)$"), "TY", end="ER",
                multi=frozenset({"AU", "A1", "A2", "A3", "A4", "KW", "UR", "L1", "L2", "L3", "L4", "N1"}))


def _first(tags: dict, *names):
    for name in names:
        v = tags.get(name)
        if v not in (None, "", []):
            return name, (" ".join(v) if isinstance(v, list) else v)
    return None, None


def _fields(tags: dict, n: int, stem: str) -> dict:
    tags = {k: ("" if v is None else v) if not isinstance(v, list) else [x or "" for x in v] for k, v in tags.items()}
    id_tag, rid = _first(tags, "ID", "DO")
    title_tag, title = _first(tags, "TI", "T1")
    text_tag, text = _first(tags, "AB", "N2")
    out = {"id": rid or f"{stem}:{n}", "title": title or "", "abstract": text or ""}
    out.update((k, v) for k, v in tags.items() if k not in (id_tag if id_tag == "ID" else None, title_tag, text_tag))
    return out


def reader(path: str, fmt: str = FORMAT, opts: ReadOptions = ReadOptions()):
    """The records of a RIS file (module docstring), with ``would_wait``."""
    return read_tagged(path, opts, SYNTAX, _fields)
