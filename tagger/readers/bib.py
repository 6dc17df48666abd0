"""BibTeX: each entry of a ``.bib`` file one record, read by the bib package's reader.

The record's fields: ``id`` (the entry's key), then the entry's fields as they resolve
(``@string`` macros expanded, LaTeX kept), except ``title`` and ``abstract``, which are the
text the model reads (LaTeX decoded: :func:`tagger.bib.values.model_text`).  Each record
also keeps the entry's own text (:attr:`~tagger.readers.base.Record.entry`), so that
``tagger filter`` can write the matching entries back as they were; :func:`prelude` gives
the file's ``@string`` and ``@preamble`` blocks that must come with them.  The citation key
is the ``id`` even when the entry has a field named ``id`` (kept as ``id_field``); of a
duplicate field the first counts, as in BibTeX.  An entry that cannot be read safely is a
warning, not a record, and every readable entry is read: the command exits 2 at the end
(0 with ``--on-error skip``); the bib reader's warnings go to ``opts.warn``.  The whole file is read at once (``.bib`` files are
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


#: path -> the number of entries of that .bib input that could not be read (each warned about)
UNREADABLE_ENTRIES: dict[str, int] = {}


def _in_label_words(reason: str) -> str:
    """A bib reader's reason as ``tagger label`` says it: without ``tagger bib``'s "left untouched"."""
    return reason.removesuffix("; left untouched")


def reader(path: str, fmt: str = FORMAT, opts: ReadOptions = ReadOptions()):
    """The records of a ``.bib`` file (module docstring), in file order.  An entry that cannot
    be read is a warning (``opts.warn``: its line, key and why, "not read") and no record, so
    that every readable entry is written; :data:`UNREADABLE_ENTRIES` counts them, for the
    command's exit status (:func:`unreadable_entries`)."""
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
    bad = 0
    for p in problems:
        if p.kind == UNREADABLE:
            bad += 1
            opts.warn(f"{path}:{p.line}: entry {p.key} cannot be read, not tagged: {p.reason}")
        else:
            opts.warn(f"{path}:{p.line}: {p.key}: {_in_label_words(p.reason)}")
    UNREADABLE_ENTRIES[path] = bad
    for n, item in enumerate(entries, 1):
        fields = {"id": item["key"]}  # the citation key, even when the entry has a field named id
        for name, value in item["fields"].items():
            low = name.lower()
            if low == "id":
                low = "id_field"
            if low not in fields:
                fields[low] = item[low] if low in ("title", "abstract") else value
        yield Record(fields, n, item["line"], path, f"{stem}:{n}", entry=text[item["start"]:item["end"]])


def unreadable_entries(paths) -> int:
    """How many entries of the ``.bib`` inputs ``paths`` read so far could not be read."""
    return sum(UNREADABLE_ENTRIES.get(p, 0) for p in paths)


def prelude(path: str) -> str:
    """The ``@string`` and ``@preamble`` blocks of a ``.bib`` input read before, in file
    order, each followed by a blank line ("" when it has none)."""
    from bibtexparser.model import Preamble, String

    from ..bib.locate import parse_blocks

    text = _TEXTS.get(path, "")
    blocks = [text[s:e] for b, s, e in parse_blocks(text) if isinstance(b, (String, Preamble))] if text else []
    return "".join(b.strip() + "\n\n" for b in blocks)
