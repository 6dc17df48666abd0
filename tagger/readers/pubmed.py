"""PubMed XML (``<PubmedArticleSet>``, what E-utilities' efetch gives): each
``<PubmedArticle>`` (and ``<PubmedBookArticle>``) one record, read as a stream
(:mod:`tagger.readers.xmlstream`, defusedxml ``iterparse``-style), so files of any size
read in flat memory.

The record's fields: ``id`` (the ``PMID``), ``title`` (``ArticleTitle``, else a book's
``BookTitle``), ``abstract`` (the ``AbstractText`` elements; a structured abstract's sections
joined by blank lines, each led by its ``Label``: ``BACKGROUND: ...``, as PubMed shows
them and MEDLINE writes them), then ``journal``, ``year``, ``doi`` and ``authors`` when
present.  Inline markup in titles and abstracts (``<i>``, ``<sup>``) keeps its text.
"""

from __future__ import annotations

from .base import ReadOptions, Record, source_stem
from .xmlstream import iter_records, local, text_of

FORMAT = "pubmed-xml"


def _find(elem, *path):
    """The first descendant along ``path`` of local names, or None."""
    for name in path:
        if elem is None:
            return None
        elem = next((c for c in elem if local(c.tag) == name), None)
    return elem


def _descend(elem, name):
    return next((e for e in elem.iter() if local(e.tag) == name), None)


def article_fields(elem, n: int, stem: str) -> dict:
    """The fields of one ``PubmedArticle`` or ``PubmedBookArticle`` (module docstring)."""
    pmid = text_of(_descend(elem, "PMID"))
    title = text_of(_descend(elem, "ArticleTitle")) or text_of(_descend(elem, "BookTitle"))
    parts = []
    abstract = _descend(elem, "Abstract")
    for sec in (abstract if abstract is not None else []):
        if local(sec.tag) != "AbstractText":
            continue
        body = text_of(sec)
        label = sec.get("Label")
        if body:
            parts.append(f"{label}: {body}" if label else body)
    fields = {"id": pmid or f"{stem}:{n}", "title": title, "abstract": "\n\n".join(parts)}
    journal = text_of(_descend(elem, "Title"))
    if journal:
        fields["journal"] = journal
    year = text_of(_find(_descend(elem, "PubDate"), "Year")) or text_of(_find(_descend(elem, "PubDate"), "MedlineDate"))
    if year:
        fields["year"] = year
    doi = next((text_of(a) for a in elem.iter() if local(a.tag) in ("ArticleId", "ELocationID")
                and (a.get("IdType") or a.get("EIdType")) == "doi"), "")
    if doi:
        fields["doi"] = doi
    authors = []
    for a in elem.iter():
        if local(a.tag) == "Author":
            last, first = text_of(_find(a, "LastName")), text_of(_find(a, "ForeName"))
            name = ", ".join(p for p in (last, first) if p) or text_of(_find(a, "CollectiveName"))
            if name:
                authors.append(name)
    if authors:
        fields["authors"] = authors
    return fields


def reader(path: str, fmt: str = FORMAT, opts: ReadOptions = ReadOptions()):
    """The articles of a PubMed XML file as records (module docstring)."""
    stem = source_stem(path)
    names = {"PubmedArticle", "PubmedBookArticle"}
    for n, (elem, line) in enumerate(iter_records(path, opts, names, "PubMed XML"), 1):
        yield Record(article_fields(elem, n, stem), n, line, path, f"{stem}:{n}")
