"""Counts in messages: ``"1 label"``, ``"3 labels"``, ``"1 entry"``, ``"2 entries"``."""

from __future__ import annotations


def plural(n: int, one: str, many: str | None = None) -> str:
    """``n`` and the noun in the number it takes: ``plural(1, "label") == "1 label"``,
    ``plural(2, "entry", "entries") == "2 entries"``; ``many`` defaults to ``one + "s"``."""
    return f"{n} {one if n == 1 else (many or one + 's')}"
