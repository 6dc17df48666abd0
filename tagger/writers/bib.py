"""BibTeX output (``tagger filter`` of ``.bib`` input): each record's entry as it was in its
file, byte for byte, after that file's ``@string`` and ``@preamble`` blocks (written once,
before its first entry), so that the result is a valid ``.bib``.  Only for records read from
``.bib`` files, and, the same way, from RIS and MEDLINE files (each record's lines as they
were, nothing before them)."""

from __future__ import annotations

FORMATS = ("bib",)


def render(rec, pred, renderer) -> str:
    """The entry's own text and a blank line (a RIS or MEDLINE record: its lines as they were);
    raises ValueError for a record not read from BibTeX, RIS or MEDLINE."""
    if getattr(rec, "block", None) is not None:
        return rec.block
    if rec.entry is None:
        raise ValueError(f"{rec.source}:{rec.line}: -f bib writes BibTeX entries, and this record is none")
    return rec.entry.rstrip() + "\n\n"


def prelude(source: str) -> str:
    """What comes before a file's first entry: its ``@string`` and ``@preamble`` blocks."""
    from ..readers.bib import prelude as blocks

    return blocks(source)
