"""Plain text: one abstract per paragraph (``txt``), or one per line (``lines``).

``txt`` (``.txt``, or anything not otherwise recognised): paragraphs separated by blank lines
(lines of white space count as blank); records get ``id`` ``<file stem>:<n>`` and the text
field.  **Heading rule**: the file's first paragraph is a heading, not an abstract, when it
is a single line of at most 12 words that does not end in ``.``, ``!``, ``?`` or ``:`` (the
seed files start with "ICLR 2026 Papers" and "Daily Papers"); it is skipped and not counted.
A paragraph of at least 3 lines each of which holds 40 words or more and ends in ``.`` looks
like one abstract per line: the reader warns (once per file) and names ``--input-format lines``.
A paragraph longer than ``--max-record-size`` is not held in memory: it is a bad record,
named by its first line, whose message gives the same hint (a file with no blank line is one
paragraph).

``lines`` (``--input-format lines``; what ``jq -r .abstract`` writes): every line is one
record, ``id`` ``<file stem>:<line number>``; a blank line is a record without text.
"""

from __future__ import annotations

from .base import InputError, ReadOptions, Record, source_stem
from .lines import LineRecords, open_lines
from .stream import over_limit

FORMATS = ("txt", "lines")
HEADING_MAX_WORDS = 12
#: words of a line that, with 2 more such lines, makes a paragraph look like one abstract per line
LINE_ABSTRACT_WORDS = 40


def is_heading(paragraph: str) -> bool:
    """The heading rule (module docstring): one line, <= 12 words, no final . ! ? :"""
    p = paragraph.strip()
    return ("\n" not in p and 0 < len(p.split()) <= HEADING_MAX_WORDS and p[-1] not in ".!?:")


def looks_like_lines(lines: list[str]) -> bool:
    """A paragraph of at least 3 lines, each of at least 40 words and ending in ``.``."""
    return len(lines) >= 3 and all(ln.rstrip().endswith(".") and len(ln.split()) >= LINE_ABSTRACT_WORDS
                                   for ln in lines)


def read_paragraphs(path: str, opts: ReadOptions = ReadOptions(), lines=None):
    """Records from a plain-text file: one per paragraph, the heading rule applied;
    ``lines``: its :func:`~tagger.readers.stream.open_lines`, if already open.  With
    ``opts.lenient``, a paragraph with a line that is not UTF-8 is a record with ``error``
    set (else that line raises :class:`~tagger.readers.base.InputError`)."""
    stem, field = source_stem(path), opts.text_field
    lines = lines or open_lines(path, opts.encoding, opts.lenient, opts.max_record_size)
    buf, start, n, first, warned = [], 0, 0, True, False
    limit = opts.max_record_size
    size, count = 0, 0  # the paragraph's bytes (about: characters) and lines; once over the limit, buf is emptied

    def flush():
        nonlocal n, first, warned
        was_first, first = first, False
        if limit is not None and size > limit:
            n += 1
            err = (over_limit("paragraph", size, limit) + f" ({count:,} lines); if the file has one abstract per "
                   "line, read it with --input-format lines")
            if not opts.lenient:
                raise InputError(f"{path}:{start}: {err}")
            return Record({}, n, start, path, f"{stem}:{n}", err)
        para = "\n".join(buf)
        bad = next((k for k in range(start, start + count) if k in lines.bad), None) if lines.bad else None
        if bad:  # named by the line that is not text
            n += 1
            return Record({}, n, bad, path, f"{stem}:{n}", lines.bad[bad])
        if was_first and is_heading(para):
            return None
        n += 1
        if not warned and looks_like_lines(buf):
            warned = True
            opts.warn(f"{path}:{start}: this paragraph has {len(buf)} lines that each look like a whole abstract; "
                      "if the file has one abstract per line, read it with --input-format lines")
        return Record({"id": f"{stem}:{n}", field: para}, n, start, path)

    for lineno, line in lines:
        if line.strip() or lineno in lines.bad:
            if not count:
                start = lineno
            count += 1
            size += len(line) + 1
            if limit is None or size <= limit:
                buf.append(line)
            elif buf:
                buf = []  # over the limit: only counted from here on
        elif count:
            rec = flush()
            buf, size, count = [], 0, 0
            if rec:
                yield rec
    if count:
        rec = flush()
        if rec:
            yield rec


def read_lines(path: str, opts: ReadOptions = ReadOptions(), lines=None):
    """Records from a file of one abstract per line (module docstring)."""
    stem, field = source_stem(path), opts.text_field
    lines = lines or open_lines(path, opts.encoding, opts.lenient, opts.max_record_size)
    for n, line in lines:
        if n in lines.bad:
            yield Record({}, n, n, path, f"{stem}:{n}", lines.bad[n])
        else:
            yield Record({"id": f"{stem}:{n}", field: line}, n, n, path)


def reader(path: str, fmt: str = "txt", opts: ReadOptions = ReadOptions()) -> LineRecords:
    """The records of a text file as ``fmt`` (``txt`` or ``lines``), with ``would_wait``."""
    lines = open_lines(path, opts.encoding, opts.lenient, opts.max_record_size)
    read = read_lines if fmt == "lines" else read_paragraphs
    return LineRecords(lines, read(path, opts, lines))
