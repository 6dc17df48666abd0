"""BibTeX output (``tagger filter`` of ``.bib`` input): each record's entry as it was in its
file, byte for byte, after that file's ``@string`` and ``@preamble`` blocks (written once,
before its first entry), so that the result is a valid ``.bib``.  Only for records read from
``.bib`` files."""

from __future__ import annotations

FORMATS = ("bib",)


def render(rec, pred, renderer) -> str:
    """The entry's own text and a blank line; raises ValueError for a record not read from BibTeX."""
    if rec.entry is None:
        raise ValueError(f"{rec.source}:{rec.line}: -f bib writes BibTeX entries, and this record is none")
    return rec.entry.rstrip() + "\n\n"


def prelude(source: str) -> str:
    """What comes before a file's first entry: its ``@string`` and ``@preamble`` blocks."""
    from ..readers.bib import prelude as blocks

    return blocks(source)
