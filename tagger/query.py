"""Boolean tag expressions for ``tagger filter EXPR``.

An expression selects records by their labels, e.g.
``modality:image and not (method:cnn or method:rnn)`` or ``task:* and not modality:text``.

Grammar (keywords are case-insensitive; whitespace separates words and is optional around
parentheses, so ``(modality:image)and not(method:cnn)`` parses)::

    query    := or_expr END
    or_expr  := and_expr ( "or" and_expr )*
    and_expr := unary ( "and" unary )*
    unary    := "not" unary | primary
    primary  := term | "(" or_expr ")"
    term     := NAME ":" NAME          a label id, e.g. modality:time-series
              | NAME ":" "*"           any label of the facet NAME, e.g. method:*
    NAME     := [a-z0-9]+ ( "-" [a-z0-9]+ )*

So ``not`` binds tighter than ``and``, which binds tighter than ``or``, and chains read left
to right.  ``and``/``or`` are associative, so a chain (``a or b or c``, also one written with
redundant parentheses) is kept as one n-ary node; the meaning is that of the left-associative
reading.  Every term is checked against the taxonomy when parsing, and every error is a
:class:`QueryError` whose one-line message gives the 1-based column and what was expected.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from .errors import TaggerError
from .wording import close_matches, did_you_mean

__all__ = ["QueryError", "Query", "parse", "Label", "Facet", "Not", "And", "Or"]

_TOKEN = re.compile(r"\s*(?:([()])|([^\s()]+))")
_KEYWORDS = ("and", "or", "not")
MAX_DEPTH = 100  # nesting of parentheses and 'not' (keeps every recursion far from the limit)
_OPERAND = "a label id (facet:label), facet:*, 'not' or '('"


class QueryError(TaggerError):
    """An expression that does not parse or names a label or facet the taxonomy lacks."""


# ---------------------------------------------------------------------------------- AST


@dataclass(frozen=True)
class Label:
    """A label id term: true when the record has this label."""

    id: str

    def eval(self, labels: set[str], facets: set[str]) -> bool:
        return self.id in labels

    def __str__(self) -> str:
        return self.id


@dataclass(frozen=True)
class Facet:
    """A ``facet:*`` term: true when the record has any label of this facet."""

    facet: str

    def eval(self, labels: set[str], facets: set[str]) -> bool:
        return self.facet in facets

    def __str__(self) -> str:
        return f"{self.facet}:*"


@dataclass(frozen=True)
class Not:
    """Negation of one operand."""

    operand: Node

    def eval(self, labels: set[str], facets: set[str]) -> bool:
        return not self.operand.eval(labels, facets)

    def __str__(self) -> str:
        return f"(not {self.operand})"


@dataclass(frozen=True)
class And:
    """Conjunction of two or more operands (none of them an And)."""

    operands: tuple[Node, ...]

    def eval(self, labels: set[str], facets: set[str]) -> bool:
        return all(op.eval(labels, facets) for op in self.operands)

    def __str__(self) -> str:
        return "(" + " and ".join(map(str, self.operands)) + ")"


@dataclass(frozen=True)
class Or:
    """Disjunction of two or more operands (none of them an Or)."""

    operands: tuple[Node, ...]

    def eval(self, labels: set[str], facets: set[str]) -> bool:
        return any(op.eval(labels, facets) for op in self.operands)

    def __str__(self) -> str:
        return "(" + " or ".join(map(str, self.operands)) + ")"


Node = Label | Facet | Not | And | Or


def _flat(cls: type[And] | type[Or], parts: list[Node]) -> Node:
    """``p1 OP p2 OP ...`` as one n-ary node; operands that are ``cls`` nodes are spliced in."""
    if len(parts) == 1:
        return parts[0]
    return cls(tuple(p for n in parts for p in (n.operands if isinstance(n, cls) else (n,))))


# -------------------------------------------------------------------------------- Query


@dataclass(frozen=True)
class Query:
    """A parsed expression.  Two queries are equal when their normalised trees are."""

    node: Node
    source: str = field(default="", compare=False)

    def matches(self, tags: Iterable[str], scores: dict[str, float] | None = None,
                min_score: float | None = None) -> bool:
        """Whether a record with label ids ``tags`` satisfies the expression.

        With ``min_score``, only tags whose ``scores`` entry is >= min_score count (a tag with
        no score does not), for label terms and ``facet:*`` alike.
        """
        if min_score is None:
            labels = set(tags)
        elif scores is None:
            raise ValueError("min_score needs the scores of the record")
        else:
            labels = {t for t in tags if (s := scores.get(t)) is not None and s >= min_score}
        return self.node.eval(labels, {t.partition(":")[0] for t in labels})

    def labels(self) -> set[str]:
        """The label ids the expression names (``facet:*`` terms name no label)."""
        return {n.id for n in self._terms() if isinstance(n, Label)}

    def facets(self) -> set[str]:
        """The facets of the expression's ``facet:*`` terms."""
        return {n.facet for n in self._terms() if isinstance(n, Facet)}

    def _terms(self):
        stack = [self.node]
        while stack:
            n = stack.pop()
            if isinstance(n, Not):
                stack.append(n.operand)
            elif isinstance(n, (And, Or)):
                stack.extend(n.operands)
            else:
                yield n

    def __str__(self) -> str:
        return str(self.node)


# ------------------------------------------------------------------------------- parser


@dataclass(frozen=True)
class _Tok:
    kind: str  # "(", ")", "and", "or", "not", "term", "word" (anything else), "end"
    text: str
    col: int  # 1-based


def _tokenize(expr: str) -> list[_Tok]:
    """Split at whitespace and parentheses; a word with ':' is a term, checked by the parser."""
    toks = []
    for m in _TOKEN.finditer(expr):
        if m.group(1):
            toks.append(_Tok(m.group(1), m.group(1), m.start(1) + 1))
        elif m.group(2):
            w = m.group(2)
            kind = w.lower() if w.lower() in _KEYWORDS else "term" if ":" in w else "word"
            toks.append(_Tok(kind, w, m.start(2) + 1))
    toks.append(_Tok("end", "", len(expr) + 1))
    return toks


class _Parser:
    """Recursive descent over the token list; one method per grammar rule."""

    def __init__(self, expr: str, label_ids: list[str], facets: list[str]):
        self.toks, self.i, self.depth = _tokenize(expr), 0, 0
        self.label_ids, self.facets = list(dict.fromkeys(label_ids)), list(dict.fromkeys(facets))
        self.known_labels, self.known_facets = set(self.label_ids), set(self.facets)
        self.by_name: dict[str, list[str]] = {}  # 'image' -> ['modality:image']
        for lid in self.label_ids:
            self.by_name.setdefault(lid.partition(":")[2], []).append(lid)

    @property
    def tok(self) -> _Tok:
        return self.toks[self.i]

    def fail(self, expected: str, hint: str = ""):
        """Raise the error for an unexpected token (or end), saying what was ``expected``."""
        t = self.tok
        if t.kind == "end":
            prev = self.toks[self.i - 1] if self.i else None
            what = (f"unexpected end of expression at column {t.col} "
                    f"(after '{prev.text}' at column {prev.col})") if prev else \
                "empty expression at column 1"
        else:
            what = f"unexpected '{t.text}' at column {t.col}"
        raise QueryError(f"{what}; expected {expected}{hint}")

    def query(self) -> Node:
        node = self.or_expr()
        if self.tok.kind == ")":
            raise QueryError(f"unbalanced parenthesis: ')' at column {self.tok.col} has no "
                             "matching '('; expected 'and', 'or' or end of expression")
        if self.tok.kind != "end":
            self.fail("'and', 'or' or end of expression")
        return node

    def or_expr(self) -> Node:
        parts = [self.and_expr()]
        while self.tok.kind == "or":
            self.i += 1
            parts.append(self.and_expr())
        return _flat(Or, parts)

    def and_expr(self) -> Node:
        parts = [self.unary()]
        while self.tok.kind == "and":
            self.i += 1
            parts.append(self.unary())
        return _flat(And, parts)

    def unary(self) -> Node:
        if self.tok.kind != "not":
            return self.primary()
        self.nest()
        self.i += 1
        node = Not(self.unary())
        self.depth -= 1
        return node

    def nest(self):
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise QueryError(f"expression nested too deeply at column {self.tok.col}; "
                             f"expected at most {MAX_DEPTH} levels of parentheses and 'not'")

    def primary(self) -> Node:
        t = self.tok
        if t.kind == "term":
            self.i += 1
            return self.term(t)
        if t.kind == "(":
            self.nest()
            self.i += 1
            node = self.or_expr()
            if self.tok.kind == "end":
                raise QueryError(f"unbalanced parenthesis: '(' at column {t.col} is not closed; "
                                 f"expected ')' at column {self.tok.col}")
            if self.tok.kind != ")":
                self.fail("'and', 'or' or ')'")
            self.i += 1
            self.depth -= 1
            return node
        hint = ""
        if t.kind == "word":  # a bare label name such as 'image': suggest the full ids
            ids = [i for n in close_matches(t.text, self.by_name) for i in self.by_name[n]]
            hint = did_you_mean(ids[:3])
        self.fail(_OPERAND, hint)

    def term(self, t: _Tok) -> Node:
        facet, _, name = t.text.partition(":")
        if name == "*":
            if facet in self.known_facets:
                return Facet(facet)
            rest = did_you_mean([f"{f}:*" for f in close_matches(facet, self.facets)],
                                 "; known facets: " + ", ".join(self.facets))
            raise QueryError(f"unknown facet '{facet}' in '{t.text}' at column {t.col}{rest}")
        if t.text in self.known_labels:
            return Label(t.text)
        raise QueryError(f"unknown label '{t.text}' at column {t.col}{self.suggest(t.text)}")

    def suggest(self, text: str) -> str:
        """Closest label ids to an unknown ``facet:name``, by name (those of the same or a
        similar facet first); failing that, the labels of the facet or the known facets."""
        facet, _, name = text.lower().partition(":")
        near = {facet, *close_matches(facet, self.facets)}
        ids = [i for n in close_matches(name, self.by_name) for i in self.by_name[n]]
        close = sorted(ids, key=lambda i: (i.partition(":")[0] != facet,
                                           i.partition(":")[0] not in near))[:3]
        same = [i.partition(":")[2] for i in self.label_ids if i.startswith(facet + ":")]
        return did_you_mean(close, f"; facet '{facet}' has labels " + ", ".join(same) if same
                             else "; known facets: " + ", ".join(self.facets))


def parse(expr: str, label_ids: list[str], facets: list[str]) -> Query:
    """Parse ``expr`` against the taxonomy's ``label_ids`` and ``facets``.

    Raises :class:`QueryError` for a syntax error or a term the taxonomy lacks; the message
    gives the 1-based column and what was expected or the closest known ids.
    """
    return Query(_Parser(expr, label_ids, facets).query(), expr)
