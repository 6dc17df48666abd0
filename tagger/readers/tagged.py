"""Tagged-line record formats (RIS, MEDLINE): a record is a run of ``TAG - value`` lines,
its block of lines kept as it was so that ``tagger filter`` can write it back byte for byte.

:func:`read_tagged` is what :mod:`tagger.readers.ris` and :mod:`tagger.readers.medline`
share: lines with their line breaks (:func:`~tagger.readers.lines.open_lines` with
``ends``), a tag's continuation lines joined to its value with a space, a tag that occurs
more than once (or is one of ``multi``) a list of values.  A record's block runs from its
first line to the line before the next record's, blank lines after it included.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .base import ReadOptions, Record, source_stem
from .lines import LineRecords, open_lines


@dataclass
class Syntax:
    """One tagged-line format: ``name`` (for messages), ``tag`` (a line's tag and value;
    group 1 the tag, group 2 the value), ``start`` (the tag a record starts with), ``end``
    (the tag that ends it, or None: a blank line ends it), ``continuation`` (a line that
    continues the value before it, or None: an untagged line in a record does),
    ``multi``: tags that are always lists."""

    name: str
    tag: re.Pattern
    start: str
    end: str | None = None
    continuation: re.Pattern | None = None
    multi: frozenset = field(default_factory=frozenset)


def _finish(tags: list, syntax: Syntax) -> dict:
    """``[(tag, value)]`` -> ``{tag: value or [values]}``, in first-occurrence order."""
    out: dict = {}
    for tag, value in tags:
        if tag in out:
            if not isinstance(out[tag], list):
                out[tag] = [out[tag]]
            out[tag].append(value)
        else:
            out[tag] = [value] if tag in syntax.multi else value
    return out


def read_tagged(path: str, opts: ReadOptions, syntax: Syntax, make):
    """The records of a tagged-line file: ``make(tags, n, stem)`` gives a record's fields
    from its ``{tag: value}`` (module docstring); the :class:`Record` also has ``block``.
    With ``opts.lenient``, a record with a line that is not UTF-8 is a bad record, else
    that line raises :class:`~tagger.readers.base.InputError`.  Text outside records is
    kept in the block before it (none before the first record) and warned about once."""
    lines = open_lines(path, opts.encoding, opts.lenient, opts.max_record_size, ends=True)
    stem = source_stem(path)

    def records():
        n, start, block, tags, bad, in_record, warned = 0, 0, [], [], None, False, False

        def flush():
            if bad:
                return Record({}, n, bad, path, f"{stem}:{n}", lines.bad[bad], block="".join(block))
            return Record(make(_finish(tags, syntax), n, stem), n, start, path, f"{stem}:{n}", block="".join(block))

        for lineno, text in lines:
            body = text.rstrip("\r\n").lstrip("\r\ufeff")  # a CR of a CRLF mangled into LF CR (IEEE Xplore)
            m = syntax.tag.match(body)
            if m and m.group(1) == syntax.start and (syntax.end is not None or not in_record):
                if n:
                    yield flush()
                n, start, block, tags, bad, in_record = n + 1, lineno, [], [], None, True
            if n == 0:
                if body.strip() and not warned:
                    warned = True
                    opts.warn(f"{path}:{lineno}: text before the first {syntax.name} record "
                              f"(which starts with {syntax.start}): left out")
                continue
            block.append(text)
            if lineno in lines.bad and bad is None:
                bad = lineno
            if not body.strip():
                if syntax.end is None:
                    in_record = False
                continue
            if not in_record:
                if not warned:
                    warned = True
                    opts.warn(f"{path}:{lineno}: text between {syntax.name} records: left out")
                continue
            cont = syntax.continuation.match(body) if syntax.continuation else None
            if m and not cont:
                if m.group(1) == syntax.end:
                    in_record = False
                    continue
                tags.append((m.group(1), (m.group(2) or "").strip()))
            elif tags:
                tags[-1] = (tags[-1][0], f"{tags[-1][1]} {body.strip()}".strip())
        if n:
            yield flush()

    return LineRecords(lines, records())
