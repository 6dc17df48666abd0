"""What an input is, by its first bytes: the record formats of literature databases (Atom and
RSS feeds, PubMed XML, MEDLINE, RIS), and the formats ``tagger`` does not read (other XML,
HTML, PDF, Word, spreadsheets), which are a one-line error saying what to do instead of
paragraphs of markup read as words.

:func:`sniff_content` looks at the bytes :func:`tagger.readers.stream.peek_head` gives (gzip
already decompressed, a UTF-16/32 BOM already transcoded): ``%PDF-`` and a digit; ``PK\\x03\\x04`` (a ZIP:
``.docx``, ``.xlsx``, ``.pptx``, ``.odt``, ``.ods`` told apart by the names of its members);
OLE2's ``D0 CF 11 E0`` (``.doc``, ``.xls``); ``<?xml`` and the root element (``<feed>`` Atom,
``<rss>`` and ``<rdf:RDF>`` RSS, ``<PubmedArticleSet>`` PubMed XML, ``<html>``, anything else);
``<!doctype html`` / ``<html``; ``TY  - `` (RIS) and ``PMID- `` (MEDLINE).
"""

from __future__ import annotations

import re

from ..files.magic import is_pdf
from .base import InputError

#: first bytes of binary documents -> what they are (a PDF: :func:`tagger.files.magic.is_pdf`)
ZIP, OLE2 = b"PK\x03\x04", b"\xd0\xcf\x11\xe0"

_RIS = re.compile(rb"TY  -( |\r?\n|$)")
_MEDLINE = re.compile(rb"PMID- ")
#: the first element of an XML document, after the declaration, comments, processing
#: instructions and a DOCTYPE
_ROOT = re.compile(rb"<([A-Za-z_][\w.:-]*)")
_SKIP = re.compile(rb"\s*(?:<\?.*?\?>|<!--.*?-->|<!DOCTYPE(?:[^\[>]|\[.*?\])*>)", re.S | re.I)

#: root element (without its namespace prefix) -> input format
XML_ROOTS = {"feed": "feed", "rss": "feed", "RDF": "feed", "PubmedArticleSet": "pubmed-xml",
             "PubmedArticle": "pubmed-xml", "PubmedBookArticle": "pubmed-xml"}

_TEXT_FIRST = "extract its text first"
HTML_HINT = ("an HTML page: save its text first (e.g. with pandoc -t plain PAGE.html, or lynx -dump), "
             "or the abstracts as JSON Lines or CSV")


def _zip_kind(names) -> str:
    """What a ZIP archive is, by its member names (bytes or str)."""
    joined = b"\n".join(n if isinstance(n, bytes) else n.encode("utf-8", "replace") for n in names)
    if b"word/" in joined:
        return ("a Word document (.docx): save it as plain text (.txt) first, or extract its text "
                "(e.g. with pandoc -t plain FILE.docx)")
    if b"xl/" in joined:
        return "an Excel workbook (.xlsx): save the sheet as CSV (CSV UTF-8) first"
    if b"ppt/" in joined:
        return "a PowerPoint file (.pptx): extract its text first"
    if b"opendocument.text" in joined or b"opendocument.spreadsheet" in joined:
        if b"opendocument.spreadsheet" in joined:
            return "an OpenDocument spreadsheet (.ods): save the sheet as CSV first"
        return "an OpenDocument text (.odt): save it as plain text (.txt) first"
    return "a ZIP archive: unpack it first and name the files inside"


def zip_members(path: str, head: bytes) -> list:
    """The member names of a ZIP input: from its central directory when ``path`` is a file,
    else those of the local headers within ``head`` (standard input), and the OpenDocument
    ``mimetype`` member's text, which names the kind."""
    import zipfile

    if path != "-":
        try:
            with zipfile.ZipFile(path) as z:
                names = z.namelist()
                if "mimetype" in names:
                    names.append(z.read("mimetype").decode("ascii", "replace"))
                return names
        except (OSError, zipfile.BadZipFile, KeyError, RuntimeError):
            pass
    names, at = [], 0
    while (at := head.find(ZIP, at)) >= 0 and at + 30 <= len(head):
        size = int.from_bytes(head[at + 26:at + 28], "little")
        names.append(head[at + 30:at + 30 + size])
        if head[at + 30:at + 30 + size] == b"mimetype":  # stored, uncompressed: its text follows
            names.append(head[at + 30 + size:at + 30 + size + 60])
        at += 4
    return names


def xml_root(head: bytes) -> str | None:
    """The name of the root element of an XML text (without a namespace prefix), None if
    ``head`` does not reach it."""
    at = 0
    while m := _SKIP.match(head, at):
        if m.end() == at:
            break
        at = m.end()
    m = _ROOT.match(head, at + (len(head[at:]) - len(head[at:].lstrip())))
    return m.group(1).decode("ascii", "replace").rpartition(":")[2] if m else None


def sniff_content(head: bytes, path: str) -> str | None:
    """The input format the bytes ``head`` (the input's start, BOM and leading white space
    removed) show: ``feed``, ``pubmed-xml``, ``ris``, ``medline``, or None when they show none
    of these (JSON, BibTeX and text are told elsewhere).  Raises :class:`InputError` for a
    format ``tagger`` does not read, naming it and what to do (module docstring)."""
    name = "standard input" if path == "-" else path
    if is_pdf(head):
        raise InputError(f"{name}: a PDF: {_TEXT_FIRST}, e.g. with pdftotext FILE.pdf FILE.txt "
                         "(or give the abstracts as JSON Lines or CSV)")
    if head.startswith(ZIP):
        raise InputError(f"{name}: {_zip_kind(zip_members(path, head))}")
    if head.startswith(OLE2):
        raise InputError(f"{name}: an old Microsoft Office file (.doc or .xls): save it as plain text (.txt) "
                         "or as CSV first")
    if _RIS.match(head):
        return "ris"
    if _MEDLINE.match(head):
        return "medline"
    low = head[:64].lower()
    if low.startswith((b"<!doctype html", b"<html")):
        raise InputError(f"{name}: {HTML_HINT}")
    if head.startswith(b"<?xml") or head.startswith((b"<feed", b"<rss", b"<rdf:RDF", b"<PubmedArticle")):
        root = xml_root(head)
        if root in XML_ROOTS:
            return XML_ROOTS[root]
        if root == "html":
            raise InputError(f"{name}: {HTML_HINT}")
        what = f"XML whose root element is <{root}>" if root else "XML"
        raise InputError(f"{name}: {what}, not a format tagger reads (it reads Atom and RSS feeds and PubMed "
                         "XML); convert the records to JSON Lines or CSV first")
    return None
