"""The wording of messages: counts that take their number, and "did you mean" suggestions."""

from __future__ import annotations

import difflib


def plural(n: int, one: str, many: str | None = None) -> str:
    """``n`` and the noun in the number it takes: ``plural(1, "label") == "1 label"``,
    ``plural(2, "entry", "entries") == "2 entries"``; ``many`` defaults to ``one + "s"``."""
    return f"{n} {one if n == 1 else (many or one + 's')}"


def close_matches(word: str, candidates) -> list[str]:
    """Up to three of ``candidates`` closest to ``word`` (compared in lower case; difflib's
    ratio, cutoff 0.6), best first."""
    return difflib.get_close_matches(word.lower(), list(candidates), n=3)


def did_you_mean(close: list[str], fallback: str = "") -> str:
    """``"; did you mean a, b or c?"`` for up to three suggestions, else ``fallback``."""
    if not close:
        return fallback
    return "; did you mean " + (close[0] if len(close) == 1
                                else ", ".join(close[:-1]) + " or " + close[-1]) + "?"


def one_line(text: str) -> str:
    """``text`` with its unprintable characters (line breaks, carriage returns, escapes)
    written as Python escapes, ``\\r``, ``\\x1b``: what a file said, kept to one line."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
