"""Tests of tagger.query: the boolean tag-expression language of ``tagger filter``.

The property tests do not trust the parser: they build random expression trees as plain
tuples, render them to text (random spacing, keyword case and redundant parentheses), and
compare ``Query.matches`` with a direct evaluation of the tuple tree.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

try:
    import tagger  # noqa: F401
except ImportError:  # not installed and run as plain `pytest`: use the checkout
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tagger.errors import TaggerError
from tagger.query import MAX_DEPTH, And, Facet, Label, Not, Or, Query, QueryError, parse

LABELS = [
    "modality:image", "modality:text", "modality:time-series", "modality:3d",
    "method:cnn", "method:fine-tuning", "method:transformer",
    "task:classification", "task:segmentation",
]
FACETS = ["modality", "method", "task", "evaluation"]  # 'evaluation' has no labels here


def q(expr: str) -> Query:
    return parse(expr, LABELS, FACETS)


def error(expr: str) -> str:
    with pytest.raises(QueryError) as info:
        q(expr)
    msg = str(info.value)
    assert "\n" not in msg
    return msg


# ------------------------------------------------------------------------ parse and eval

IMG, TXT, CNN, FT = "modality:image", "modality:text", "method:cnn", "method:fine-tuning"

EVAL_CASES = [
    # single terms
    ("modality:image", [IMG], True),
    ("modality:image", [TXT], False),
    ("modality:image", [], False),
    ("modality:time-series", ["modality:time-series"], True),
    ("modality:3d", ["modality:3d", CNN], True),
    ("method:fine-tuning", [FT], True),
    # and / or / not
    ("modality:image and method:cnn", [IMG, CNN], True),
    ("modality:image and method:cnn", [IMG], False),
    ("modality:image or method:cnn", [CNN], True),
    ("modality:image or method:cnn", [TXT], False),
    ("not modality:image", [], True),
    ("not modality:image", [IMG], False),
    ("not not modality:image", [IMG], True),
    ("not not not modality:image", [IMG], False),
    ("modality:image and not method:cnn", [IMG], True),
    ("modality:image and not method:cnn", [IMG, CNN], False),
    # precedence: not > and > or
    ("modality:image or modality:text and method:cnn", [IMG], True),     # a or (b and c)
    ("modality:image or modality:text and method:cnn", [TXT], False),
    ("(modality:image or modality:text) and method:cnn", [IMG], False),  # (a or b) and c
    ("modality:text and method:cnn or modality:image", [IMG], True),
    ("not modality:image and method:cnn", [CNN], True),                  # (not a) and b
    ("not modality:image and method:cnn", [IMG, CNN], False),
    ("not (modality:image and method:cnn)", [IMG], True),
    ("not modality:image or method:cnn", [IMG, CNN], True),              # (not a) or b
    ("not (modality:image or method:cnn)", [CNN], False),
    # parentheses, spacing and keyword case
    ("(modality:image)and not(method:cnn)", [IMG], True),
    ("(modality:image)and not(method:cnn)", [IMG, CNN], False),
    ("((modality:image))", [IMG], True),
    ("  modality:image\tAND\nNot   method:cnn ", [IMG], True),
    ("modality:image Or method:cnn", [CNN], True),
    ("NOT(modality:image)OR(method:cnn)", [], True),
    # facet wildcards
    ("method:*", [CNN], True),
    ("method:*", [IMG, TXT], False),
    ("modality:* and not method:*", [TXT], True),
    ("modality:* and not method:*", [TXT, FT], False),
    ("evaluation:*", [IMG, CNN, "task:classification"], False),
    ("not evaluation:*", [], True),
    ("task:* or modality:3d", ["task:segmentation"], True),
    # tags outside the taxonomy are allowed in records and simply never match
    ("not modality:*", ["other:thing"], True),
]


@pytest.mark.parametrize("expr,tags,expected", EVAL_CASES)
def test_eval_table(expr, tags, expected):
    assert q(expr).matches(tags) is expected


@pytest.mark.parametrize("expr,expected", [
    ("modality:image", "modality:image"),
    ("method:*", "method:*"),
    ("not modality:image", "(not modality:image)"),
    ("modality:image or modality:text and method:cnn",
     "(modality:image or (modality:text and method:cnn))"),
    ("(modality:image or modality:text) and method:cnn",
     "((modality:image or modality:text) and method:cnn)"),
    ("not modality:image and method:cnn", "((not modality:image) and method:cnn)"),
    ("not not modality:image", "(not (not modality:image))"),
    ("modality:image and modality:text and method:cnn",
     "(modality:image and modality:text and method:cnn)"),
    ("modality:image or (modality:text or method:cnn)",
     "(modality:image or modality:text or method:cnn)"),
    ("(modality:image)AND NOT(method:*)", "(modality:image and (not method:*))"),
])
def test_str_is_normalised_and_fully_parenthesised(expr, expected):
    query = q(expr)
    assert str(query) == expected
    assert q(str(query)) == query


def test_ast_shape():
    assert q("modality:image or modality:text and not method:*").node == Or((
        Label(IMG), And((Label(TXT), Not(Facet("method"))))))
    assert q("modality:image or modality:text or method:cnn").node == Or(
        (Label(IMG), Label(TXT), Label(CNN)))


def test_labels_and_facets():
    query = q("modality:image and (not method:cnn or task:* or modality:image) and not method:*")
    assert query.labels() == {IMG, CNN}
    assert query.facets() == {"task", "method"}
    assert q("evaluation:*").labels() == set()


def test_equality_ignores_source_text():
    assert q("modality:image AND method:cnn") == q("(modality:image)and(method:cnn)")
    assert q("modality:image and method:cnn") != q("method:cnn and modality:image")  # order kept
    assert q("modality:image").source == "modality:image"


def test_matches_accepts_any_iterable():
    query = q("modality:image and method:cnn")
    assert query.matches((IMG, CNN)) and query.matches(iter([CNN, IMG])) and query.matches({IMG, CNN})


# ------------------------------------------------------------------------------ min_score

SCORES = {IMG: 0.9, TXT: 0.4, CNN: 0.55, FT: 0.2}


@pytest.mark.parametrize("expr,min_score,expected", [
    ("modality:image", None, True),
    ("modality:image", 0.9, True),       # >= is inclusive
    ("modality:image", 0.91, False),
    ("modality:text", 0.5, False),
    ("modality:text", 0.4, True),
    ("not modality:text", 0.5, True),
    ("modality:image and method:cnn", 0.5, True),
    ("modality:image and method:cnn", 0.6, False),
    ("method:*", 0.5, True),             # via method:cnn (0.55)
    ("method:*", 0.6, False),            # neither method tag reaches 0.6
    ("modality:* and not method:*", 0.6, True),
    ("modality:3d", 0.0, False),         # not a tag of the record, whatever its score
])
def test_min_score(expr, min_score, expected):
    tags = [IMG, TXT, CNN, FT]
    scores = dict(SCORES, **{"modality:3d": 0.99})
    assert q(expr).matches(tags, scores=scores, min_score=min_score) is expected


def test_min_score_tag_without_score_does_not_count():
    assert not q("method:transformer").matches(["method:transformer"], scores={}, min_score=0.0)
    assert q("method:transformer").matches(["method:transformer"], scores={})  # no min_score


def test_min_score_needs_scores():
    with pytest.raises(ValueError):
        q("modality:image").matches([IMG], min_score=0.5)


# --------------------------------------------------------------------------------- errors


def test_query_error_is_a_tagger_error():
    assert issubclass(QueryError, TaggerError)


def test_unknown_label_message():
    assert error("modality:imag") == \
        "unknown label 'modality:imag' at column 1; did you mean modality:image?"


@pytest.mark.parametrize("expr,parts", [
    # unknown labels: term, column, closest ids
    ("method:cnn and modality:imag", ["unknown label 'modality:imag'", "column 16",
                                      "did you mean modality:image?"]),
    ("modality:timeseries", ["'modality:timeseries'", "column 1",
                             "did you mean modality:time-series?"]),
    ("method:finetuning", ["did you mean method:fine-tuning?"]),
    ("Modality:Image", ["unknown label 'Modality:Image'", "did you mean modality:image?"]),
    ("method:image", ["unknown label 'method:image'", "did you mean modality:image?"]),
    ("modalty:text", ["unknown label 'modalty:text'", "did you mean modality:text?"]),
    ("task:classify", ["did you mean task:classification?"]),
    ("modality:zzz", ["unknown label 'modality:zzz' at column 1",
                      "facet 'modality' has labels image, text, time-series, 3d"]),
    ("modality:", ["unknown label 'modality:'", "facet 'modality' has labels"]),
    ("xyz:abc", ["unknown label 'xyz:abc' at column 1",
                 "known facets: modality, method, task, evaluation"]),
    # unknown facets of wildcards
    ("modalty:*", ["unknown facet 'modalty' in 'modalty:*' at column 1",
                   "did you mean modality:*?"]),
    ("not (Method:*)", ["unknown facet 'Method'", "column 6", "did you mean method:*?"]),
    ("zz:*", ["unknown facet 'zz'", "known facets: modality, method, task, evaluation"]),
    # empty expression
    ("", ["empty expression at column 1", "expected a label id"]),
    ("  \t ", ["empty expression at column 1", "expected a label id"]),
    # dangling operators
    ("modality:image and", ["unexpected end of expression at column 19",
                            "after 'and' at column 16", "expected a label id"]),
    ("modality:image or not", ["end of expression at column 22", "after 'not' at column 19"]),
    ("and modality:image", ["unexpected 'and' at column 1", "expected a label id"]),
    ("modality:image or or method:cnn", ["unexpected 'or' at column 19", "expected a label id"]),
    ("not", ["end of expression at column 4", "after 'not' at column 1"]),
    # unbalanced parentheses
    ("(modality:image", ["unbalanced parenthesis", "'(' at column 1 is not closed",
                         "expected ')' at column 16"]),
    ("((modality:image) and method:cnn", ["'(' at column 1 is not closed"]),
    ("modality:image)", ["unbalanced parenthesis", "')' at column 15 has no matching '('",
                         "expected 'and', 'or' or end of expression"]),
    ("(modality:image))", ["')' at column 17 has no matching '('"]),
    ("()", ["unexpected ')' at column 2", "expected a label id"]),
    # unexpected tokens
    ("modality:image method:cnn", ["unexpected 'method:cnn' at column 16",
                                   "expected 'and', 'or' or end of expression"]),
    ("(modality:image method:cnn)", ["unexpected 'method:cnn' at column 17",
                                     "expected 'and', 'or' or ')'"]),
    ("modality:image && method:cnn", ["unexpected '&&' at column 16"]),
    ("image", ["unexpected 'image' at column 1", "expected a label id",
               "did you mean modality:image?"]),
    ("modality:image and (cnn)", ["unexpected 'cnn' at column 21",
                                  "did you mean method:cnn?"]),
    ("modality:image (method:cnn)", ["unexpected '(' at column 16"]),
])
def test_error_messages(expr, parts):
    msg = error(expr)
    for part in parts:
        assert part in msg, (part, msg)


def test_nesting_limit():
    ok = "(" * MAX_DEPTH + "modality:image" + ")" * MAX_DEPTH
    assert q(ok).matches([IMG])
    assert q("not " * MAX_DEPTH + "modality:image").matches([IMG])  # MAX_DEPTH is even
    msg = error("(" * (MAX_DEPTH + 1) + "modality:image" + ")" * (MAX_DEPTH + 1))
    assert f"nested too deeply at column {MAX_DEPTH + 1}" in msg
    assert "nested too deeply" in error("not " * (MAX_DEPTH + 1) + "modality:image")


def test_long_chains_do_not_recurse():
    labels = [f"facet:l{i}" for i in range(5000)]
    expr = " or ".join(labels)
    query = parse(expr, labels, ["facet"])
    assert query.matches(["facet:l4999"]) and not query.matches(["facet:x"])
    assert len(query.node.operands) == 5000
    assert parse(" and ".join(labels), labels, ["facet"]).matches(labels)


def test_real_taxonomy_ids():
    from tagger.taxonomy import load_taxonomy

    tax = load_taxonomy(Path(__file__).resolve().parents[1] / "taxonomy.yaml")
    ids, facets = tax.label_ids, [f.id for f in tax.facets]
    query = parse("(modality:image or modality:3d)and not(method:fine-tuning) or "
                  "modality:time-series and method:*", ids, facets)
    assert query.labels() == {"modality:image", "modality:3d", "method:fine-tuning",
                              "modality:time-series"}
    assert query.matches(["modality:3d"]) and not query.matches(["modality:3d", "method:fine-tuning"])
    assert "did you mean modality:image?" in str(pytest.raises(
        QueryError, parse, "modality:imag", ids, facets).value)


def test_import_is_cheap():
    code = ("import sys, tagger.query; heavy = {'numpy', 'yaml', 'click', 'sklearn', 'lightgbm', "
            "'nltk', 'joblib'} & set(sys.modules); assert not heavy, heavy")
    root = str(Path(__file__).resolve().parents[1])
    subprocess.run([sys.executable, "-c", code], check=True, cwd=root)


# ---------------------------------------------------------------------- property tests

# A reference tree is a tuple: ("label", id) | ("facet", f) | ("not", t) | (op, t, t).
leaves = st.sampled_from(LABELS).map(lambda x: ("label", x)) | \
    st.sampled_from(FACETS).map(lambda f: ("facet", f))
trees = st.recursive(
    leaves,
    lambda kids: kids.map(lambda k: ("not", k)) | st.tuples(st.sampled_from(["and", "or"]), kids, kids),
    max_leaves=12,
)
tag_sets = st.sets(st.sampled_from(LABELS + ["other:thing"]), max_size=6)
PREC = {"or": 1, "and": 2, "not": 3, "label": 4, "facet": 4}


def evaluate(tree, tags) -> bool:
    kind = tree[0]
    if kind == "label":
        return tree[1] in tags
    if kind == "facet":
        return any(t.split(":")[0] == tree[1] for t in tags)
    if kind == "not":
        return not evaluate(tree[1], tags)
    a, b = evaluate(tree[1], tags), evaluate(tree[2], tags)
    return (a and b) if kind == "and" else (a or b)


def tree_labels(tree) -> set[str]:
    if tree[0] == "label":
        return {tree[1]}
    return set().union(*(tree_labels(t) for t in tree[1:] if isinstance(t, tuple)))


def render(tree, draw) -> str:
    """Text of ``tree`` with the parentheses precedence needs, plus random redundant ones,
    random keyword case and random whitespace (none at all next to a parenthesis)."""

    def keyword(k):
        return draw(st.sampled_from([k, k.upper(), k.capitalize(), k[:-1] + k[-1].upper()]))

    def toks(t):
        kind = t[0]
        if kind == "label":
            return [t[1]]
        if kind == "facet":
            return [t[1] + ":*"]
        if kind == "not":
            return [keyword("not")] + sub(t[1], PREC["not"])
        # left-associative: a right operand of the same precedence needs parentheses
        return sub(t[1], PREC[kind]) + [keyword(kind)] + sub(t[2], PREC[kind] + 1)

    def sub(t, min_prec):
        inner = toks(t)
        if PREC[t[0]] < min_prec or draw(st.integers(0, 4)) == 0:
            return ["("] + inner + [")"]
        return inner

    words = toks(tree)
    out = [draw(st.sampled_from(["", " ", "\t"]))]
    for a, b in zip(words, words[1:]):
        out += [a, draw(st.sampled_from(["", " ", "  ", "\n"] if "(" in (a, b) or ")" in (a, b)
                                        else [" ", "  ", "\t", " \n "]))]
    return "".join(out + [words[-1], draw(st.sampled_from(["", " ", "\n"]))])


@settings(max_examples=400, deadline=None)
@given(tree=trees, data=st.data())
def test_matches_equals_direct_evaluation(tree, data):
    text = render(tree, data.draw)
    query = q(text)
    assert query.labels() == tree_labels(tree)
    for _ in range(8):
        tags = data.draw(tag_sets)
        assert query.matches(sorted(tags)) is evaluate(tree, tags), (text, str(query), tags)


@settings(max_examples=200, deadline=None)
@given(tree=trees, data=st.data())
def test_min_score_equals_evaluation_on_kept_tags(tree, data):
    query = q(render(tree, data.draw))
    tags = sorted(data.draw(tag_sets))
    scores = {t: data.draw(st.floats(0, 1)) for t in tags}
    min_score = data.draw(st.floats(0, 1) | st.sampled_from(sorted(scores.values()) or [0.5]))
    kept = {t for t in tags if scores[t] >= min_score}
    assert query.matches(tags, scores=scores, min_score=min_score) is evaluate(tree, kept)


@settings(max_examples=300, deadline=None)
@given(tree=trees, data=st.data())
def test_str_round_trip(tree, data):
    query = q(render(tree, data.draw))
    again = q(str(query))
    assert again == query
    assert str(again) == str(query)
    for _ in range(5):
        tags = data.draw(tag_sets)
        assert again.matches(tags) is query.matches(tags)


FUZZ_WORDS = ["(", ")", "and", "OR", "Not", "modality:image", "method:*", "task:*",
              "modality:imag", "bogus:*", "image", "&&", ":", "*"]


@settings(max_examples=500, deadline=None)
@given(words=st.lists(st.sampled_from(FUZZ_WORDS), max_size=10),
       seps=st.lists(st.sampled_from(["", " ", "\t"]), min_size=11, max_size=11))
def test_any_token_soup_parses_or_raises_query_error_at_a_real_column(words, seps):
    expr = "".join(s + w for s, w in zip(seps, words))
    try:
        query = q(expr)
    except QueryError as e:
        msg = str(e)
        assert "\n" not in msg
        col = int(re.search(r"at column (\d+)", msg).group(1))
        assert 1 <= col <= len(expr) + 1
        quoted = re.match(r"(?:unexpected|unknown label|unknown facet \S+ in) '([^']*)' at column",
                          msg)
        if quoted:  # the column points at the quoted token
            assert expr[col - 1:].startswith(quoted.group(1)), (expr, msg)
    else:
        assert q(str(query)) == query


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=40))
def test_arbitrary_text_raises_only_query_error(expr):
    try:
        q(expr)
    except QueryError as e:
        assert "\n" not in str(e)
