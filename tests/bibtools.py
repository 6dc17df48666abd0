"""Helpers of the tests of tagger.bib: a toy taxonomy, a fake predictor, and byte checks.

The byte checks do not trust tagger.bib: `strip_written_tags` locates the tag field of every
changed entry with bibtexparser and regular expressions only, removes what the tool wrote,
and the result must equal the input byte for byte.
"""

from __future__ import annotations

import io
import logging
import os
import re
from pathlib import Path

import bibtexparser

from tagger.bib import run, update_bib_text

TESTS = Path(__file__).resolve().parent
CASES = TESTS / "bib_cases"
CASES2 = TESTS / "bib_cases_2"
SHARED = Path(os.environ.get("TAGGER_SHARED") or TESTS.parents[1] / "shared")

#: a toy taxonomy, [(facet, kind, labels)] in taxonomy order, as Model.facets
FACETS = [
    ("modality", "multi", ["modality:text", "modality:example", "modality:language"]),
    ("task", "multi", ["task:entry", "task:rl", "task:x", "task:old", "task:b", "task:c", "task:t"]),
    ("method", "multi", ["method:abstract", "method:cnn", "method:rnn", "method:old", "method:gone", "method:a",
                         "method:b", "method:y", "method:z", "method:kept"]),
    ("venue", "exclusive", ["venue:journal", "venue:conference", "venue:workshop"]),
]
LABELS = [lb for _, _, labels in FACETS for lb in labels]
RULES = [("example", "modality:example"), ("entry", "task:entry"), ("abstract", "method:abstract")]


class FakePredictor:
    """Deterministic stand-in for the model: tags by word presence, in taxonomy order.

    Every abstract gets ``modality:text``; an abstract containing "abstain" gets None (the
    model abstains).  Records each call so tests can check batching and the model input.
    """

    def __init__(self, rules=RULES, always=("modality:text",)):
        self.rules, self.always, self.calls = rules, list(always), []

    def __call__(self, items):
        self.calls.append([dict(x) for x in items])
        out = []
        for it in items:
            a = it["abstract"].lower()
            tags = self.always + [t for w, t in self.rules if w in a]
            out.append(None if "abstain" in a else sorted(set(tags), key=LABELS.index))
        return out

    def expected(self, item):
        return self([item])[0]

    @property
    def items(self):
        return [x for call in self.calls for x in call]


def abstain(items):
    return [None for _ in items]


def nothing(items):
    return [[] for _ in items]


def read_case(name: str, folder: Path = CASES) -> str:
    return (folder / name).read_bytes().decode("utf-8")


def parse(text):
    logging.getLogger("bibtexparser").setLevel(logging.CRITICAL)
    return bibtexparser.parse_string(text, parse_stack=[])


def locate(text, lib):
    pos, res = 0, []
    for b in lib.blocks:
        i = text.find(b.raw, pos)
        assert i >= 0
        res.append((b, i, i + len(b.raw)))
        pos = i + len(b.raw)
    return res


def is_tool(term, labels=LABELS):
    return term.strip() in labels


def split_terms(value):
    """Terms of a verbatim keywords value ``{...}``/``"..."``, split at depth-0 ``;`` or ``,``."""
    inner = value[1:-1]
    depth, cuts = 0, []
    sep = ";" if re.search(r";", re.sub(r"\{[^{}]*\}", "", inner)) else ","
    for i, c in enumerate(inner):
        depth += c == "{"
        depth -= c == "}"
        if c == sep and depth == 0:
            cuts.append(i)
    b = [-1, *cuts, len(inner)]
    return [inner[b[i] + 1 : b[i + 1]].strip() for i in range(len(b) - 1)]


def entries_by_key(text):
    """``{key or #<block index>: bibtexparser entry}`` (duplicates unwrapped)."""
    out = {}
    for i, b in enumerate(parse(text).blocks):
        e = _entry(b)
        if hasattr(e, "fields"):
            out[e.key or f"#{i}"] = e
    return out


def _entry(b):
    return getattr(b, "ignore_error_block", None) or b


def strip_written_tags(out: str, inp: str, field="keywords") -> tuple[str, dict[str, list[str]]]:
    """Undo, with bibtexparser and regexes only, what the tool wrote into `out`.

    For every entry whose raw differs from the input: if the input entry had the tag field,
    put its old value back; else cut the inserted ``[ws], [ws] NAME = VALUE``.  Returns the
    reconstructed text (must equal `inp`) and, per changed entry (key, or ``#<block index>``
    for an empty key), the new field's terms.
    """
    old_l, new_l = locate(inp, parse(inp)), locate(out, parse(out))
    assert [type(b).__name__ for b, _, _ in old_l] == [type(b).__name__ for b, _, _ in new_l]
    pieces, pos, terms = [], 0, {}
    for i, ((ob, _, _), (nb, ns, ne)) in enumerate(zip(old_l, new_l)):
        if ob.raw == nb.raw:
            continue
        if type(nb).__name__ == "ParsingFailedBlock":  # e.g. case 14: no fields to compare with
            pat = r"\s*,\s*" + field + r"\s*=\s*\{([^{}]*)\}"
            ms = list(re.finditer(pat, nb.raw, re.I))
            assert len(ms) == 1 and not re.search(pat, ob.raw, re.I)
            key = re.match(r"@\w+\{([^,]+),", nb.raw).group(1)
            terms[key] = split_terms("{%s}" % ms[0].group(1))
            pieces += [out[pos:ns], nb.raw[: ms[0].start()] + nb.raw[ms[0].end() :]]
            pos = ne
            continue
        oe, ne_ = _entry(ob), _entry(nb)
        assert hasattr(ne_, "key") and ne_.key == getattr(oe, "key", None), (ob.raw, nb.raw)
        key = ne_.key or f"#{i}"  # an empty key: the block's index
        newf = [f for f in ne_.fields if f.key.lower() == field.lower()]
        oldf = [f for f in oe.fields if f.key.lower() == field.lower()]
        assert len(newf) <= 1 and len(oldf) <= 1
        raw = nb.raw
        if newf and oldf:
            assert newf[0].key == oldf[0].key
            pat = re.escape(newf[0].key) + r"\s*=\s*(" + re.escape(newf[0].value) + ")"
            ms = list(re.finditer(pat, raw))
            assert len(ms) == 1
            m = ms[0]
            restored = raw[: m.start(1)] + oldf[0].value + raw[m.end(1) :]
            terms[key] = split_terms(newf[0].value)
        elif newf:
            pat = r"\s*,\s*" + re.escape(newf[0].key) + r"\s*=\s*" + re.escape(newf[0].value)
            ms = list(re.finditer(pat, raw))
            assert len(ms) == 1, raw
            restored = raw[: ms[0].start()] + raw[ms[0].end() :]
            terms[key] = split_terms(newf[0].value)
        else:  # the field was removed
            pat = r"\s*,\s*" + re.escape(oldf[0].key) + r"\s*=\s*" + re.escape(oldf[0].value)
            ms = list(re.finditer(pat, ob.raw))
            assert len(ms) == 1
            assert ob.raw[: ms[0].start()] + ob.raw[ms[0].end() :] == raw
            restored = ob.raw
            terms[key] = []
        pieces += [out[pos:ns], restored]
        pos = ne
    pieces.append(out[pos:])
    return "".join(pieces), terms


def assert_only_tags_changed(inp: str, out: str, field="keywords"):
    restored, terms = strip_written_tags(out, inp, field)
    assert restored == inp
    ol, nl = parse(inp).blocks, parse(out).blocks  # re-parse: same fields apart from the tag field
    for ob, nb in zip(ol, nl):
        ob, nb = _entry(ob), _entry(nb)
        if hasattr(ob, "fields"):
            strip = lambda b: [(f.key, f.value) for f in b.fields if f.key.lower() != field.lower()]  # noqa: E731
            assert strip(ob) == strip(nb)
    return terms


def check_roundtrip(text, predict=None, field=None, facets=FACETS):
    """update -> only tags differ; second run no change; predicting nothing removes tool terms."""
    predict = predict or FakePredictor()
    r = update_bib_text(text, predict, facets=facets, field=field)
    assert_only_tags_changed(text, r.new_text, field or "keywords")
    r2 = update_bib_text(r.new_text, FakePredictor(predict.rules, predict.always), facets=facets, field=field)
    assert r2.new_text == r.new_text and r2.changed_keys == [] and r2.stale == []
    # predicting nothing undoes the edit, unless the input had tool terms already or a tag
    # field without user terms (such a field is removed when nothing is predicted)
    labels = [lb for _, _, ls in facets for lb in ls]
    fields = [f for e in parse(text).entries for f in e.fields if f.key.lower() == (field or "keywords")]
    if all(any(t and not is_tool(t, labels) for t in split_terms(f.value)) for f in fields) and not any(
        is_tool(t, labels) for f in fields for t in split_terms(f.value)
    ) and "tagger" not in text.lower():
        assert update_bib_text(r.new_text, nothing, facets=facets, field=field).new_text == text
    return r


def call(paths, **kw):
    """run() with captured streams: ``(rc, stdout, stderr)``."""
    out, err = io.StringIO(), io.StringIO()
    kw.setdefault("predict", FakePredictor())
    kw.setdefault("facets", FACETS)
    rc = run([str(p) for p in paths], out=out, err=err, **kw)
    return rc, out.getvalue(), err.getvalue()


def summary_of(err: str) -> str:
    """The summary line of a run over one file."""
    lines = [ln for ln in err.splitlines() if " entries: " in ln or " entry: " in ln]
    assert len(lines) == 1, err
    return lines[0].split(": ", 1)[1]


def problem_lines(err: str) -> list[str]:
    return [ln for ln in err.splitlines() if " entries: " not in ln and " entry: " not in ln]
