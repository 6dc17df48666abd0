"""Atom and RSS feeds (arXiv's API and its daily RSS, journal tables of contents): each entry
(Atom ``<entry>``, RSS ``<item>``, RSS 1.0 / RDF ``<item>``) one record, read as a stream
(:mod:`tagger.readers.xmlstream`, defusedxml).

The record's fields: ``id``, ``title``, ``abstract`` (Atom ``summary``, else ``content``; RSS
``description``, else ``content:encoded``; markup escaped inside it is removed by the text
normaliser, as for every input), ``link``, ``published`` (or ``updated``, ``pubDate``,
``dc:date``) when there is one, and ``authors`` (a list) when there are any.  The id is the
arXiv id (``2401.01234v2``, ``hep-th/9901001v1``) when the entry's ``<id>`` (RSS ``guid``,
``rdf:about``) or its link is an arXiv URL or an ``oai:arXiv.org:`` identifier; else the
``<id>`` (``guid``), else the link, else ``<file stem>:<n>``.  arXiv RSS descriptions start
with ``arXiv:ID Announce Type: new Abstract:``: that prefix is not the abstract.
"""

from __future__ import annotations

import re

from .base import ReadOptions, Record, source_stem
from .xmlstream import iter_records, local, text_of

FORMAT = "feed"
_ARXIV = re.compile(r"(?:arxiv\.org/(?:abs|pdf)/|oai:arXiv\.org:|^arXiv:)([a-z-]+(?:\.[A-Z]{2})?/\d{7}|\d{4}\.\d{4,5})(v\d+)?",
                    re.I)
_ANNOUNCE = re.compile(r"^\s*arXiv:\S+\s+Announce Type:\s*\S+\s*(?:Abstract:\s*)?", re.I)


def arxiv_id(*values) -> str | None:
    """The arXiv id (with its version, if given) in the first of ``values`` that names one."""
    for v in values:
        m = _ARXIV.search(v or "")
        if m:
            return m.group(1) + (m.group(2) or "")
    return None


def _children(elem) -> dict:
    """Local name -> the first child of that name."""
    out = {}
    for c in elem:
        out.setdefault(local(c.tag), c)
    return out


def entry_fields(elem, n: int, stem: str) -> dict:
    """The fields of one Atom entry or RSS item (module docstring)."""
    kids = _children(elem)
    link = ""
    for c in elem:
        if local(c.tag) == "link":
            href = c.get("href") or (c.text or "").strip()
            if href and (not link or c.get("rel", "alternate") == "alternate"):
                link = href
                if c.get("rel", "alternate") == "alternate":
                    break
    own = text_of(kids.get("id")) or text_of(kids.get("guid")) or elem.get(
        "{http://www.w3.org/1999/02/22-rdf-syntax-ns#}about", "")
    text = ""
    for name in ("summary", "description", "content", "encoded", "abstract"):
        if name in kids:
            text = "".join(kids[name].itertext()).strip()
            if text:
                break
    text = _ANNOUNCE.sub("", text)
    fields = {"id": arxiv_id(own, link) or own or link or f"{stem}:{n}", "title": text_of(kids.get("title")),
              "abstract": text, "link": link}
    for name in ("published", "updated", "pubDate", "date"):
        if name in kids and text_of(kids[name]):
            fields["published"] = text_of(kids[name])
            break
    authors = [text_of(_children(c).get("name")) or text_of(c) for c in elem if local(c.tag) in ("author", "creator")]
    if any(authors):
        fields["authors"] = [a for a in authors if a]
    return fields


def reader(path: str, fmt: str = FORMAT, opts: ReadOptions = ReadOptions()):
    """The entries of an Atom or RSS feed as records (module docstring)."""
    stem = source_stem(path)
    for n, (elem, line) in enumerate(iter_records(path, opts, {"entry", "item"}, "XML (a feed)"), 1):
        yield Record(entry_fields(elem, n, stem), n, line, path, f"{stem}:{n}")
