"""BibTeX: each entry of a ``.bib`` file one record, read by the bib package's reader.

The record's fields: ``id`` (the entry's key), then the entry's fields as they resolve
(``@string`` macros expanded, LaTeX kept), except ``title`` and ``abstract``, which are the
text the model reads (LaTeX decoded: :func:`tagger.bib.values.model_text`).  Each record
also keeps the entry's own text (:attr:`~tagger.readers.base.Record.entry`), so that
``tagger filter`` can write the matching entries back as they were; :func:`prelude` gives
the file's ``@string`` and ``@preamble`` blocks that must come with them.  An entry that
cannot be read safely is a record with ``error`` set (``--on-error`` decides); the bib
reader's warnings go to ``opts.warn``.  The whole file is read at once (``.bib`` files are
small), through :class:`~tagger.readers.stream.ByteSource` (gzip, BOM, ``--encoding``).
"""

from __future__ import annotations

from .base import InputError, ReadOptions, Record, source_stem
from .stream import _READ_ERRORS, not_text, open_source

FORMAT = "bib"

#: path -> the text of each .bib input read in this process, for :func:`prelude`
_TEXTS: dict[str, str] = {}


def _read_text(path: str, opts: ReadOptions) -> str:
    """The file's text, decoded (the whole file: ``.bib`` files are small; a value over
    ``--max-record-size`` is masked before parsing, :func:`tagger.bib.read.mask_oversized`)."""
    src = open_source(path, opts.encoding)
    try:
        data = b"".join(block for block, _ in src.blocks(limit=None))
    except _READ_ERRORS as e:
        raise InputError(f"{path}: cannot read: {e}") from None
    finally:
        src.close()
    data = data.removeprefix(b"\xef\xbb\xbf")
    nul = data.find(b"\x00")
    if nul >= 0:
        raise InputError(not_text(path, data.count(b"\n", 0, nul) + 1, data, nul, True))
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(not_text(path, data.count(b"\n", 0, e.start) + 1, data, e.start, False)) from None


def reader(path: str, fmt: str = FORMAT, opts: ReadOptions = ReadOptions()):
    """The records of a ``.bib`` file (module docstring), in file order."""
    from ..bib import read_records
    from ..bib.oversized import mask_oversized
    from ..bib.read import UNREADABLE

    text, _, oversized = mask_oversized(_read_text(path, opts), opts.max_record_size)
    _TEXTS[path] = text
    try:
        entries, problems = read_records(text)
        problems = problems + oversized
    except ValueError as e:
        raise InputError(f"{path}: cannot read as BibTeX: {e}") from None
    stem = source_stem(path)
    items = [(e["line"], 0, e) for e in entries]
    for p in problems:
        if p.kind == UNREADABLE:
            items.append((p.line, 1, p))
        else:
            opts.warn(f"{path}:{p.line}: {p.key}: {p.reason}")
    items.sort(key=lambda x: (x[0], x[1]))
    for n, (line, bad, item) in enumerate(items, 1):
        if bad:
            yield Record({}, n, line, path, f"{stem}:{n}", f"entry {item.key}: {item.reason}")
            continue
        fields = {"id": item["key"]}
        for name, value in item["fields"].items():
            low = name.lower()
            fields[low] = item[low] if low in ("title", "abstract") else value
        yield Record(fields, n, line, path, f"{stem}:{n}", entry=text[item["start"]:item["end"]])


def prelude(path: str) -> str:
    """The ``@string`` and ``@preamble`` blocks of a ``.bib`` input read before, in file
    order, each followed by a blank line ("" when it has none)."""
    from bibtexparser.model import Preamble, String

    from ..bib.locate import parse_blocks

    text = _TEXTS.get(path, "")
    blocks = [text[s:e] for b, s, e in parse_blocks(text) if isinstance(b, (String, Preamble))] if text else []
    return "".join(b.strip() + "\n\n" for b in blocks)
