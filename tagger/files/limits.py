"""The limits of what is read: ``--max-record-size`` and its messages.

In :mod:`tagger.files` because both :mod:`tagger.readers` (every reader) and
:mod:`tagger.bib` (``tagger bib``, which the bib reader uses) apply them, and the bib
package sits below the readers.
"""

from __future__ import annotations

#: the default ``--max-record-size``: bytes of one record (a line, a paragraph, a JSON value,
#: a CSV cell, a ``.bib`` value) that reading keeps in memory; abstracts are kilobytes, and
#: a record of more than 1 MB is no abstract
MAX_RECORD_SIZE = 4 << 20


class Oversized(bytes):
    """What :meth:`ByteSource.blocks` gives in place of a line longer than its limit: one
    line break (so that line numbers stay right, and a reader that does not look for it
    sees a blank line), ``size`` the length of the line that was skipped, in bytes."""

    size: int = 0

    def __new__(cls, size: int):
        obj = super().__new__(cls, b"\n")
        obj.size = size
        return obj


def size_text(n: int) -> str:
    """A size in bytes for a message: ``150 MB``, ``4.5 MB``, ``300 KB``, ``12 bytes``."""
    if n >= 10 << 20:
        return f"{n / (1 << 20):,.0f} MB"
    if n >= 1 << 20:
        return f"{n / (1 << 20):.1f} MB".replace(".0 MB", " MB")
    if n >= 1 << 10:
        return f"{n / (1 << 10):.0f} KB"
    return f"{n} bytes"


def parse_size(text: str) -> int:
    """Bytes of a size written ``4194304``, ``4M``, ``500K``, ``1G`` or ``1.5MB`` (1024-based);
    raises ValueError for anything else, or a size under 1 KB."""
    import re

    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmg]?)i?b?\s*", str(text), re.I)
    if not m:
        raise ValueError(f"{text!r} is not a size (bytes, or a number with K, M or G: 4M)")
    n = int(float(m.group(1)) * {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}[m.group(2).lower()])
    if n < 1024:
        raise ValueError(f"{text!r}: a record size limit under 1 KB would refuse real abstracts")
    return n


def over_limit(what: str, size: int, limit: int, at_least: bool = False) -> str:
    """The message for a record over ``--max-record-size``: ``line of 150 MB over the
    record size limit of 4 MB (--max-record-size)``."""
    return (f"{what} of {'more than ' if at_least else ''}{size_text(size)} over the record size limit of "
            f"{size_text(limit)} (--max-record-size)")


