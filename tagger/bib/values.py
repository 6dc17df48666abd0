"""Values for the model: ``@string`` macros and ``#`` concatenations resolved, then the
project's one text normaliser (:func:`tagger.text.normalize`: LaTeX, markup, Unicode)."""

from __future__ import annotations

from collections.abc import Iterable

from .. import text as textmod
from .locate import Piece

_MONTHS = {
    "jan": "January", "feb": "February", "mar": "March", "apr": "April", "may": "May",
    "jun": "June", "jul": "July", "aug": "August", "sep": "September", "oct": "October",
    "nov": "November", "dec": "December",
}


def resolve(text: str, pieces: Iterable[Piece], strings: dict[str, str]) -> str:
    """Concatenate the pieces of a value, without delimiters; macros (``@string`` names and
    month abbreviations) are looked up case-insensitively, unknown ones give ``""``."""
    out = []
    for p in pieces:
        raw = text[p.start : p.end]
        if p.kind == "bare":
            if raw.isdigit():
                out.append(raw)
            else:
                k = raw.casefold()
                out.append(strings.get(k, _MONTHS.get(k, "")))
        else:
            out.append(raw[1:-1])
    return "".join(out)


def model_text(value: str) -> str:
    """The text the model reads for a resolved value: :func:`tagger.text.normalize`
    (LaTeX decoded, one line, NFKC), the one normaliser of the project."""
    return textmod.normalize(value)
