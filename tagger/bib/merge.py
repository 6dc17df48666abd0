"""Merging tags into a keywords field, and the corrections of a ``tagger`` field.

Only the taxonomy's own label ids (``modality:text``, ``method:cnn``...) are the tool's
terms.  Every other term of a field is the user's and is never changed, whatever its
shape (``method:qualitative``, ``Method:CNN`` and ``status:read`` are all the user's).

Corrections: a field named ``tagger`` (name compared case-insensitively), which the tool
reads and never writes, holds ``+label`` (pin: always written) and ``-label`` (veto: never
written), separated by commas, semicolons or spaces.  In an exclusive facet a pin replaces
the predicted label.  Unknown labels, terms without a sign, a label both pinned and
vetoed, and a second pin in an exclusive facet are warnings, and those terms are ignored
(``tagger bib`` then exits 2, so that a pre-commit hook shows them).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field as dc_field

#: the name of the corrections field
CORRECTIONS_FIELD = "tagger"

_BRACE_RE = re.compile(r"[{}]")
_CORR_SPLIT_RE = re.compile(r"[\s,;]+")


class Vocabulary:
    """The taxonomy as the bib tool needs it.

    Args:
        facets: ``[(facet id, kind, [label ids])]`` in taxonomy order, as
            :attr:`tagger.model.Model.facets`; ``kind`` is ``multi`` or ``exclusive``.

    Attributes: ``order`` (label id -> position in taxonomy order), ``facet_of`` (label id
    -> facet id), ``exclusive`` (ids of the exclusive facets).
    """

    def __init__(self, facets: Iterable[tuple[str, str, Sequence[str]]]):
        self.order: dict[str, int] = {}
        self.facet_of: dict[str, str] = {}
        self.exclusive: set[str] = set()
        for facet, kind, labels in facets:
            if kind == "exclusive":
                self.exclusive.add(facet)
            for lb in labels:
                self.facet_of[lb] = facet
                self.order.setdefault(lb, len(self.order))

    def is_tool_term(self, term: str) -> bool:
        """True when ``term`` is exactly one of the taxonomy's label ids."""
        return term in self.order

    def sort(self, tags: Iterable[str]) -> list[str]:
        """Distinct label ids in taxonomy order."""
        return sorted(set(tags), key=self.order.__getitem__)

    def closest(self, term: str, n: int = 3) -> list[str]:
        """Up to ``n`` label ids closest to ``term``, best first (difflib ratio >= 0.5): of
        ``term``'s facet, compared by label, when that facet exists; else compared whole."""
        facet, sep, label = term.partition(":")
        same = [i for i in self.order if self.facet_of[i] == facet] if sep else []
        if same:
            by_label = {i.partition(":")[2]: i for i in same}
            return [by_label[x] for x in difflib.get_close_matches(label, list(by_label), n=n, cutoff=0.5)]
        return difflib.get_close_matches(term, list(self.order), n=n, cutoff=0.5)


def depth0_positions(s: str, ch: str) -> list[int]:
    """Offsets of ``ch`` in ``s`` outside braces (a brace after ``\\`` does not count)."""
    if "{" not in s and "}" not in s:
        return [m.start() for m in re.finditer(re.escape(ch), s)]
    pos, depth = [], 0
    for i, c in enumerate(s):
        if c in "{}" and i > 0 and s[i - 1] == "\\":
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth = max(0, depth - 1)
        elif c == ch and depth == 0:
            pos.append(i)
    return pos


def split_field(inner: str) -> tuple[list[str], list[tuple[int, int]], str]:
    """The terms of a field's text (between its delimiters), split at the depth-0 ``;``
    when there is one, else at ``,``: ``(terms stripped, [(start, end)] spans, sep_char)``."""
    sep_char = ";" if depth0_positions(inner, ";") else ","
    bounds = [-1, *depth0_positions(inner, sep_char), len(inner)]
    terms, spans = [], []
    for i in range(len(bounds) - 1):
        seg = inner[bounds[i] + 1 : bounds[i + 1]]
        t = seg.strip()
        a = bounds[i] + 1 + (len(seg) - len(seg.lstrip()))
        terms.append(t)
        spans.append((a, a + len(t)))
    return terms, spans, sep_char


def separator_of(inner: str) -> str | None:
    """The text between the first two terms of a field (``"; "``, ``","``...), or None."""
    terms, spans, _ = split_field(inner)
    nonempty = [i for i, t in enumerate(terms) if t]
    if len(nonempty) < 2:
        return None
    return inner[spans[nonempty[0]][1] : spans[nonempty[1]][0]]


def tool_terms(inner: str, vocab: Vocabulary) -> list[str]:
    """The tool's terms of a field's text, in field order."""
    terms, _, _ = split_field(inner)
    return [t for t in terms if vocab.is_tool_term(t)]


def merge_terms(inner: str, tags: list[str], vocab: Vocabulary, default_sep: str = ", ") -> tuple[str, bool, bool]:
    """Merge ``tags`` into the text of a keywords field.

    Returns ``(new_inner, had_tool_terms, has_user_terms)``.  User terms keep text, order and
    the separators between them; tool terms (and only they) are replaced by ``tags``, placed
    after the user's terms, joined by the field's own separator (``default_sep`` when the
    field has fewer than two terms).
    """
    terms, spans, _ = split_field(inner)
    nonempty = [i for i, t in enumerate(terms) if t]
    if not nonempty:
        lead = inner[: len(inner) - len(inner.lstrip())]
        rest = inner[len(lead) :]
        return (lead + default_sep.join(tags) + rest if tags else inner), False, False
    first, last = nonempty[0], nonempty[-1]
    lead = inner[: spans[first][0]]
    tail = inner[spans[last][1] :]
    seps = {i: inner[spans[i - 1][1] : spans[i][0]] for i in range(first + 1, last + 1)}
    join_sep = seps[first + 1] if last > first else default_sep
    kept = [i for i in range(first, last + 1) if not vocab.is_tool_term(terms[i])]
    had_tool = len(kept) < last - first + 1
    user = [i for i in kept if terms[i]]
    parts: list[str] = []
    for n_, i in enumerate(kept):
        if n_:
            # when tool terms between two kept terms were removed, keep the separator
            # that followed the earlier kept term
            parts.append(seps[kept[n_ - 1] + 1])
        parts.append(terms[i])
    body = "".join(parts)
    if tags:
        body = (body + join_sep if user else body) + join_sep.join(tags)
    return lead + body + tail, had_tool, bool(user)


@dataclass
class Corrections:
    """The corrections of one entry: ``pins`` (in field order), ``vetoes``, and the warnings
    about terms that were ignored."""

    pins: list[str] = dc_field(default_factory=list)
    vetoes: set[str] = dc_field(default_factory=set)
    warnings: list[str] = dc_field(default_factory=list)


def parse_corrections(inner: str, vocab: Vocabulary) -> Corrections:
    """Read the text of a ``tagger`` field (between its delimiters)."""
    out = Corrections()
    pins: list[str] = []
    vetoes: list[str] = []
    for term in _CORR_SPLIT_RE.split(_BRACE_RE.sub("", inner)):
        if not term:
            continue
        sign, label = term[0], term[1:]
        if sign not in "+-":
            near = [] if vocab.is_tool_term(term) else vocab.closest(term)
            hint = f"; closest label ids: {', '.join(near)}" if near else ""
            out.warnings.append(f"`{term}` in the {CORRECTIONS_FIELD} field has no sign "
                                f"(+{term} pins it, -{term} vetoes it{hint}); ignored")
            continue
        if not vocab.is_tool_term(label):
            near = vocab.closest(label)
            hint = f"closest: {', '.join(near)}" if near else "no label id is close; see `tagger taxonomy show`"
            out.warnings.append(f"unknown label `{label}` in the {CORRECTIONS_FIELD} field ({hint}); ignored")
            continue
        (pins if sign == "+" else vetoes).append(label)
    both = set(pins) & set(vetoes)
    for label in sorted(both, key=vocab.order.__getitem__):
        out.warnings.append(f"`{label}` is both pinned and vetoed in the {CORRECTIONS_FIELD} field; ignored")
    seen_facet: dict[str, str] = {}
    for label in pins:
        if label in both or label in out.pins:
            continue
        facet = vocab.facet_of[label]
        if facet in vocab.exclusive:
            if facet in seen_facet:
                out.warnings.append(f"`{label}` and `{seen_facet[facet]}` are both pinned in the exclusive "
                                    f"facet {facet}; `{seen_facet[facet]}` is used")
                continue
            seen_facet[facet] = label
        out.pins.append(label)
    out.vetoes = set(vetoes) - both
    return out


def apply_corrections(predicted: Sequence[str], corr: Corrections | None, vocab: Vocabulary) -> list[str]:
    """The tags to write: ``predicted`` without the vetoed labels, with the pinned ones (a
    pin in an exclusive facet replaces the predicted label of that facet), taxonomy order."""
    if corr is None:
        return vocab.sort(predicted)
    tags = [t for t in predicted if t not in corr.vetoes]
    for p in corr.pins:
        facet = vocab.facet_of[p]
        if facet in vocab.exclusive:
            tags = [t for t in tags if vocab.facet_of[t] != facet]
        tags.append(p)
    return vocab.sort(tags)
