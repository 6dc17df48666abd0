"""Reading records, one module per input format, streamed.

========  =====================================  ==========================================
format    module                                 what
========  =====================================  ==========================================
jsonl     :mod:`tagger.readers.jsonl`            one JSON object per line (the fast path)
json      :mod:`tagger.readers.json`             an array of records, or objects one after
                                                 another (pretty-printed, ``jq .``)
csv, tsv  :mod:`tagger.readers.table`            a header row, then a record per row
txt       :mod:`tagger.readers.text`             one abstract per paragraph
lines     :mod:`tagger.readers.text`             one abstract per line
bib       :mod:`tagger.readers.bib`              BibTeX entries
feed      :mod:`tagger.readers.feed`             Atom and RSS entries (arXiv's API and feeds)
pubmed-   :mod:`tagger.readers.pubmed`           PubMed XML (efetch), an article at a time
xml
medline   :mod:`tagger.readers.medline`          PubMed's MEDLINE text (``PMID- ``)
ris       :mod:`tagger.readers.ris`              RIS (``TY  - `` ... ``ER  - ``)
parquet   :mod:`tagger.readers.parquet`          Parquet rows, a batch at a time (pyarrow)
========  =====================================  ==========================================

Every reader is a generator of :class:`Record` (a field dict, its 1-based number and the
line it starts on), so memory stays flat however long the input.  Under them,
:mod:`tagger.readers.stream` reads files and standard input, gzip data (by its magic
number) and encodings other than UTF-8.  Errors are :class:`InputError` with one line
``FILE:LINE: what is wrong``.  :mod:`tagger.readers.fields` finds a record's title and
abstract.  A new format is one new module here with a ``reader(path, fmt, opts)``, named in
:data:`READERS`.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

from .base import EXTENSIONS, FileError, InputError, ReadOptions, Record, source_stem

__all__ = ["EXTENSIONS", "FORMATS", "READERS", "FileError", "InputError", "ReadOptions", "Record", "detect_format",
           "format_by_name", "open_reader", "read_records", "record_text_error", "sniff_format", "source_stem"]

#: format -> the module (in this package) whose ``reader(path, fmt, opts)`` reads it
READERS = {"jsonl": "jsonl", "json": "json", "csv": "table", "tsv": "table", "txt": "text", "lines": "text",
           "bib": "bib", "parquet": "parquet", "feed": "feed", "pubmed-xml": "pubmed", "medline": "medline",
           "ris": "ris"}
FORMATS = tuple(READERS)


def format_by_name(path: str) -> str | None:
    """The input format the name of ``path`` tells (its extension, ``.gz`` stripped first;
    ``xml`` for ``.xml``), None for standard input and unknown extensions."""
    if path == "-":
        return None
    suffixes = [s.lower() for s in Path(path).suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes = suffixes[:-1]
    return EXTENSIONS.get(suffixes[-1] if suffixes else "")


def detect_format(path: str, override: str | None = None, sniff: bool = False, encoding: str | None = None,
                  delimiter: str | None = None) -> str:
    """The input format of ``path``: ``override`` if given, else by extension (``.gz``
    stripped first: ``.txt``, ``.jsonl``, ``.json``, ``.csv``, ``.tsv``, ``.bib``, ``.ris``,
    ``.nbib``, ...); ``-`` and unknown extensions read as plain text.  With ``sniff``, the
    input is looked at as well (:func:`sniff_format`): ``-``, ``.txt``, ``.xml`` and unknown
    extensions by their first bytes (content wins over such generic names: a feed, PubMed
    XML, RIS, MEDLINE; a PDF, Word or other document tagger does not read is an
    :class:`InputError` saying what to do; ``-`` and unknown extensions also JSON, BibTeX
    and a CSV or TSV header row), and ``.json``/``.jsonl`` to tell JSON Lines
    from an array or pretty-printed objects (a ``.json`` file of one object per line is
    JSON Lines).  A ``delimiter`` (``--delimiter``) makes ``-`` and unknown extensions
    ``csv`` (a PDF or another document still an :class:`InputError`): it names a table's."""
    if override:
        return override
    if delimiter and format_by_name(path) is None:
        if sniff:
            _refuse_documents(path, encoding)
        return "csv"
    if path == "-":
        return sniff_format(path, None, encoding) if sniff else "txt"
    fmt = format_by_name(path)
    if sniff and fmt in (None, "json", "jsonl", "txt", "xml"):
        return sniff_format(path, fmt, encoding)
    if sniff and fmt not in ("parquet",):
        _refuse_documents(path, encoding)
    return {"xml": "txt"}.get(fmt, fmt) or "txt"


def _refuse_documents(path: str, encoding: str | None) -> None:
    """Raise :class:`InputError` when ``path``, named as a format tagger reads (``.csv``,
    ``.bib``), is a PDF, an Office document or a ZIP archive."""
    from ..files.magic import is_pdf
    from .sniff import OLE2, ZIP, sniff_content
    from .stream import peek_head

    try:
        head = peek_head(path, encoding, size=4096)
    except (OSError, EOFError, InputError, ValueError):
        return
    if is_pdf(head) or head.startswith((ZIP, OLE2)):
        sniff_content(head, path)


_BIB_START = re.compile(rb"@[A-Za-z]+\s*[{(]")
#: the first line of an entry as reference managers write it: ``@article{Key2019,``
_ENTRY_LINE = re.compile(rb"@[A-Za-z]+\s*[{(]\s*[^\s,{}()]+\s*,")
#: lines looked at for a BibTeX file's first ``@type{`` after a reference manager's header
BIB_HEADER_LINES = 20
#: bytes of ``%`` comment and blank lines looked through for the first entry at most
BIB_HEADER_MAX = 1 << 22
#: lines of text (other than ``%`` comments and blank lines) such a header may have
BIB_HEADER_TEXT = 3


def sniff_format(path: str, default: str | None = None, encoding: str | None = None) -> str:
    """The format of ``path`` (``-`` = stdin) by its first bytes: a feed, PubMed XML, RIS
    or MEDLINE, or an :class:`InputError` for a document tagger does not read
    (:func:`tagger.readers.sniff.sniff_content`); ``json`` when it starts with ``[``, or
    with ``{`` and the first line is not a whole JSON object; ``jsonl`` when it starts with
    ``{`` otherwise; ``bib`` for ``@type{``, also after a reference manager's header
    (:func:`_bib_after_header`); when the name tells nothing (``default`` None: standard
    input, an unknown extension), ``csv`` or ``tsv`` for a first line that is a table's header
    row with a title or abstract column (:func:`tagger.readers.table.header_format`); else
    ``default`` or ``txt``.  ``default`` is the format
    the extension names: ``txt`` and ``xml`` stay themselves only when the content shows
    none of the formats above.

    Reads from standard input and pipes only what the reader then reads again
    (:func:`~tagger.readers.stream.peek_head`); an unreadable file gives ``default`` or
    ``txt``, left for the reader to report."""
    import json

    from .stream import peek_head

    try:
        head = peek_head(path, encoding)
    except (OSError, EOFError, InputError, ValueError):
        return default or "txt"
    from ..files.magic import is_pdf
    from .sniff import ZIP, sniff_content

    start = head.removeprefix(b"\xef\xbb\xbf").lstrip()
    if start[:1] == b"<" or start.startswith(ZIP):  # the root element may be lines on; a ZIP's member names
        try:
            head = peek_head(path, encoding, size=1 << 16, lines=64 if start[:1] == b"<" else 1 << 20)
        except (OSError, EOFError, InputError, ValueError):
            pass
        start = head.removeprefix(b"\xef\xbb\xbf").lstrip()
    if default in (None, "txt", "xml") or is_pdf(start):
        found = sniff_content(start, path)
        if found:
            return found
    if default in ("txt", "xml"):
        return "txt"
    if start[:1] == b"[":
        return "json"
    if start[:1] == b"{":
        first = start.split(b"\n", 1)[0]
        try:
            json.loads(first)
            return "jsonl"
        except RecursionError:  # a whole line nested too deep: the reader says so
            return "jsonl"
        except ValueError:
            pass
        try:  # an object over several lines (pretty-printed)
            json.JSONDecoder().raw_decode(start.decode("utf-8", "replace"))
            return "json"
        except RecursionError:
            return "json"
        except ValueError:  # not JSON (the reader will say where), or more than was read
            return "json" if first.strip() == b"{" else (default or "jsonl")
    if default is None and _BIB_START.match(start):
        return "bib"
    if default is None and _bib_after_header(path, encoding):
        return "bib"
    if default is None:  # a table's header row (`cat export.csv | tagger label`)
        found = _table_format(path, encoding, head)
        if found:
            return found
    return default or "txt"


def _table_format(path: str, encoding: str | None, head: bytes) -> str | None:
    """``csv`` or ``tsv`` when the input's first line (``head``: its first bytes) is a
    table's header row and the row after it, as far as the first bytes hold it, has as many
    cells (:func:`tagger.readers.table.header_format`): the table the reader then reads.  A
    terminal is not waited on for a second line."""
    import sys

    from .stream import peek_head
    from .table import header_format

    if not header_format(head.split(b"\n", 1)[0]):
        return None
    size, lines = 1 << 16, 2
    if not (path == "-" and sys.stdin is not None and sys.stdin.isatty()):
        try:
            head = peek_head(path, encoding, size=size, lines=lines)
        except (OSError, EOFError, InputError, ValueError):
            pass
    whole = head.count(b"\n") < lines and len(head) < size
    return header_format(head, whole)


def _bib_after_header(path: str, encoding: str | None) -> bool:
    """Whether a BibTeX entry starts after a header of any number of ``%`` comment and blank
    lines, with at most :data:`BIB_HEADER_TEXT` lines of other text among them and then a
    blank or ``%`` line, its first line an entry's ``@type{key,`` when text came before: the
    header a reference manager writes ("Automatically generated by Mendeley Desktop",
    ``% Encoding: UTF-8``) or a long ``%`` preamble (Beebe's ``tugboat.bib``), which BibTeX
    reads as a comment.  Looks at :data:`BIB_HEADER_LINES` lines first and further only
    while the header goes on (up to :data:`BIB_HEADER_MAX` bytes).  Not asked of a terminal
    (it would wait for 20 typed lines)."""
    import sys

    if path == "-" and sys.stdin is not None and sys.stdin.isatty():
        return False
    from .stream import peek_head

    lines, size = BIB_HEADER_LINES, 4096
    while True:
        try:
            head = peek_head(path, encoding, size=size, lines=lines)
        except (OSError, EOFError, InputError, ValueError):
            return False
        whole = head.count(b"\n") < lines and len(head) < size  # the whole input is in head
        rows = head.removeprefix(b"\xef\xbb\xbf").split(b"\n")
        if not whole:
            rows = rows[:-1]  # a line cut short is looked at with the next, longer head
        text, blank_before = 0, True
        for ln in rows:
            stripped = ln.strip()
            if _BIB_START.match(stripped):
                # an entry's first line (``@type{key,``, or a block) after a blank line or a comment:
                # not an ``@name{`` inside a paragraph of prose
                return blank_before and (_ENTRY_LINE.match(stripped) is not None or text == 0)
            if stripped and not stripped.startswith(b"%"):
                text += 1
                if text > BIB_HEADER_TEXT:
                    return False
            blank_before = not stripped or stripped.startswith(b"%")
        if whole or size >= BIB_HEADER_MAX:
            return False
        lines, size = lines * 4, size * 4


def open_reader(path: str, fmt: str | None = None, opts: ReadOptions | None = None):
    """The records of ``path`` (``-`` = stdin) in format ``fmt`` (when None:
    :func:`detect_format` with ``sniff``), as an iterable; it has ``would_wait()`` when the format can tell that the next
    record is still to come through a pipe that has gone silent (else that is never)."""
    if fmt is None:
        fmt = detect_format(path, sniff=True, encoding=(opts or ReadOptions()).encoding)
    if fmt not in READERS:
        raise InputError(f"{path}: unknown input format {fmt!r} (known: {', '.join(FORMATS)})")
    module = importlib.import_module(f".{READERS[fmt]}", __name__)
    return module.reader(path, fmt, opts or ReadOptions())


def read_records(path: str, fmt: str | None = None, text_field: str = "abstract", id_field: str = "id",
                 lines=None, opts: ReadOptions | None = None):
    """Stream :class:`Record` s from ``path`` in format ``fmt`` (detected when None), bad
    records as records with ``error`` set (``opts.lenient``); ``opts`` defaults to
    ``ReadOptions(text_field=..., id_field=...)``.  ``lines`` is ignored (kept for callers
    of the old ``tagger.corpus.read_records``)."""
    return iter(open_reader(path, fmt, opts or ReadOptions(text_field=text_field, id_field=id_field)))


def record_text_error(rec: Record, text_field: str = "abstract", title_field: str = "title") -> str | None:
    """Why ``rec`` cannot be tagged (not a record, or a text field that holds something
    other than text), or None (also for a record without text, which is written untagged).
    Parses a lazily read JSON Lines record first."""
    from .fields import document
    from .jsonl import parse_json_record

    if rec.fields is None:
        parse_json_record(rec)
    if rec.error:
        return rec.error
    err = document(rec.fields, text_field, title_field).error
    return f"record {rec.n}: {err}" if err else None
