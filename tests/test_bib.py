"""Tests of tagger.bib: byte-preserving tag writing into .bib files.

The byte checks here do not trust tagger.bib: `strip_written_tags` locates the tag field of
every changed entry with bibtexparser and regular expressions only, removes what the tool
wrote, and the result must equal the input byte for byte.
"""

from __future__ import annotations

import io
import logging
import os
import re
import stat
import sys
from pathlib import Path

import bibtexparser
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

try:
    import tagger  # noqa: F401
except ImportError:  # not installed and run as plain `pytest`: use the checkout
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tagger import bib
from tagger.bib import BibReport, latex_to_text, run, update_bib_text

CASES = Path(__file__).resolve().parent / "bib_cases"
SHARED = Path(os.environ.get("TAGGER_SHARED") or Path(__file__).resolve().parents[2] / "shared")
REAL = SHARED / "bib" / "real"

FACETS = frozenset({"method", "task", "modality"})
RULES = [("example", "modality:example"), ("entry", "task:entry"), ("abstract", "method:abstract")]


class FakePredictor:
    """Deterministic stand-in for the model: tags by word presence, in 'taxonomy order'.

    Every abstract gets ``modality:text``; an abstract containing "abstain" gets nothing.
    Records each call so tests can check batching and the cleaned model input.
    """

    def __init__(self, rules=RULES, always=("modality:text",)):
        self.rules, self.always, self.calls = rules, list(always), []

    def __call__(self, items):
        self.calls.append([dict(x) for x in items])
        out = []
        for it in items:
            a = it["abstract"].lower()
            out.append([] if "abstain" in a else self.always + [t for w, t in self.rules if w in a])
        return out

    @property
    def items(self):
        return [x for call in self.calls for x in call]


def abstain(items):
    return [[] for _ in items]


def read_case(name: str) -> str:
    return (CASES / name).read_bytes().decode("utf-8")


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


def is_tool(term):
    f, sep, lab = term.strip().partition(":")
    return bool(sep) and f in FACETS and bool(lab) and " " not in term.strip()


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


def strip_written_tags(out: str, inp: str, field="keywords") -> tuple[str, dict[str, list[str]]]:
    """Undo, with bibtexparser and regexes only, what the tool wrote into `out`.

    For every entry whose raw differs from the input: if the input entry had the tag field,
    put its old value back; else cut the inserted ``[ws], [ws] NAME = VALUE``.  Returns the
    reconstructed text (must equal `inp`) and, per changed key, the new field's terms.
    """
    old_l, new_l = locate(inp, parse(inp)), locate(out, parse(out))
    assert [type(b).__name__ for b, _, _ in old_l] == [type(b).__name__ for b, _, _ in new_l]
    pieces, pos, terms = [], 0, {}
    for (ob, _, _), (nb, ns, ne) in zip(old_l, new_l):
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
        assert hasattr(nb, "key") and nb.key == getattr(ob, "key", None), (ob.raw, nb.raw)
        newf = [f for f in nb.fields if f.key.lower() == field.lower()]
        oldf = [f for f in ob.fields if f.key.lower() == field.lower()]
        assert len(newf) <= 1 and len(oldf) <= 1
        raw = nb.raw
        if newf and oldf:
            assert newf[0].key == oldf[0].key
            pat = re.escape(newf[0].key) + r"\s*=\s*(" + re.escape(newf[0].value) + ")"
            ms = list(re.finditer(pat, raw))
            assert len(ms) == 1
            m = ms[0]
            restored = raw[: m.start(1)] + oldf[0].value + raw[m.end(1) :]
            terms[nb.key] = split_terms(newf[0].value)
        elif newf:
            pat = r"\s*,\s*" + re.escape(newf[0].key) + r"\s*=\s*" + re.escape(newf[0].value)
            ms = list(re.finditer(pat, raw))
            assert len(ms) == 1, raw
            restored = raw[: ms[0].start()] + raw[ms[0].end() :]
            terms[nb.key] = split_terms(newf[0].value)
        else:  # the field was removed: re-insert is not needed by these tests
            pat = r"\s*,\s*" + re.escape(oldf[0].key) + r"\s*=\s*" + re.escape(oldf[0].value)
            ms = list(re.finditer(pat, ob.raw))
            assert len(ms) == 1
            assert ob.raw[: ms[0].start()] + ob.raw[ms[0].end() :] == raw
            restored = ob.raw
            terms[nb.key] = []
        pieces += [out[pos:ns], restored]
        pos = ne
    pieces.append(out[pos:])
    return "".join(pieces), terms


def assert_only_tags_changed(inp: str, out: str, field="keywords"):
    restored, terms = strip_written_tags(out, inp, field)
    assert restored == inp
    # re-parse: same blocks and fields, apart from the tag field
    ol, nl = parse(inp).blocks, parse(out).blocks
    for ob, nb in zip(ol, nl):
        if hasattr(ob, "fields"):
            strip = lambda b: [(f.key, f.value) for f in b.fields if f.key.lower() != field.lower()]
            assert strip(ob) == strip(nb)
    return terms


def check_roundtrip(text, predict=None, field=None):
    """update -> only tags differ; second run no change; abstaining removes tool terms."""
    predict = predict or FakePredictor()
    r = update_bib_text(text, predict, facets=FACETS, field=field)
    assert_only_tags_changed(text, r.new_text, field or "keywords")
    r2 = update_bib_text(r.new_text, FakePredictor(predict.rules, predict.always), facets=FACETS, field=field)
    assert r2.new_text == r.new_text and r2.changed_keys == [] and r2.stale_keys == []
    # abstaining undoes the edit, unless the input had tool terms already or a tag field
    # without user terms (such a field is removed when the model abstains)
    fields = [f for e in parse(text).entries for f in e.fields if f.key.lower() == (field or "keywords")]
    if all(any(t and not is_tool(t) for t in split_terms(f.value)) for f in fields) and not any(
        is_tool(t) for f in fields for t in split_terms(f.value)
    ):
        assert update_bib_text(r.new_text, abstain, facets=FACETS, field=field).new_text == text
    return r


# --------------------------------------------------------------------------------------
# The cases of ../shared/bib/cases, copied byte for byte
# --------------------------------------------------------------------------------------

# file -> (keys tagged, keys left untouched and reported)
EXPECTED = {
    "01-month-macro.bib": ({"doe2019month", "roe2020months"}, set()),
    "02-string-macro-reference.bib": ({"sample2018macro"}, set()),
    "03-string-concat.bib": ({"example2017concat"}, set()),
    "04-percent-comment-inside-entry.bib": (set(), {"roe2021pct"}),
    "05-percent-comment-between-entries.bib": ({"doe2016line"}, set()),
    "06-jabref-meta-comments.bib": ({"example2015jab"}, set()),
    "07-braceless-comment.bib": ({"sample2014bc"}, set()),
    "08-at-sign-in-value.bib": ({"doe2022at"}, set()),
    "10-quote-escaped-quote.bib": ({"doe2013quote"}, set()),
    "11-quoted-value-inner-braces-quotes.bib": ({"sample2014iq"}, set()),
    "12-paren-delimited-entry.bib": ({"doe2002paren"}, set()),
    "13-escaped-brace.bib": ({"roe2015esc"}, set()),
    "14-backslash-paths.bib": ({"sample2015path"}, set()),
    "15-duplicate-entry-key.bib": (set(), {"dup2022"}),
    "17-field-name-case.bib": ({"Upper2011", "Mixed2011"}, set()),
    "18-crlf.bib": ({"doe2020crlf"}, set()),
    "19-utf8-bom.bib": ({"bom2016"}, set()),
    "21-latex-accents-math.bib": ({"garcia2019acc"}, set()),
    "22-nested-braces-commands.bib": ({"secret2022"}, set()),
    "23-percent-in-url.bib": ({"web2019pct"}, set()),
    "24-unicode.bib": ({"Müller2020ü"}, set()),
    "25-preamble.bib": ({"pre2010"}, set()),
    "26-text-between-entries.bib": ({"free2012"}, set()),
    "28-trailing-comma-variants.bib": ({"nocomma2017", "withcomma2017"}, set()),
    "30-unbalanced-braces.bib": ({"after1996"}, {"unbal1996"}),
    "31-existing-keywords-separators.bib": ({"worm2014kw", "tags2014kw"}, set()),
    "32-no-final-newline.bib": ({"nonl2018"}, set()),
    "33-idiosyncratic-formatting.bib": ({"spaced2010", "commafirst2010", "bibdesk2010"}, set()),
    "34-multiline-abstract.bib": ({"multi2019"}, set()),
    "36-biblatex-unknown-types.bib": ({"ctan2020", "tool2021", "child2021"}, set()),
    "37-string-case-insensitive.bib": ({"case2019str"}, set()),
    "38-empty-values.bib": (set(), set()),
    "40-percent-in-value.bib": ({"pct2020"}, set()),
    "42-indented-string-after-comment.bib": ({"indent2008"}, set()),
}


def test_cases_copied_and_all_covered():
    files = sorted(p.name for p in CASES.glob("*.bib"))
    index_rows = re.findall(r"^\| (\S+\.bib) \|", (CASES / "INDEX.md").read_text("utf-8"), re.M)
    assert files == sorted(index_rows) == sorted(EXPECTED)
    assert (CASES / ".gitattributes").read_text() .count("*.bib -text") == 1
    shared = SHARED / "bib" / "cases"
    if shared.is_dir():
        for name in files + ["INDEX.md", ".gitattributes"]:
            assert (CASES / name).read_bytes() == (shared / name).read_bytes(), name
    # the special bytes survived the copy
    assert read_case("18-crlf.bib").count("\r\n") == read_case("18-crlf.bib").count("\n")
    assert (CASES / "19-utf8-bom.bib").read_bytes().startswith(b"\xef\xbb\xbf@")
    assert (CASES / "32-no-final-newline.bib").read_bytes().endswith(b"}")


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_case(name):
    text = read_case(name)
    tagged, reported = EXPECTED[name]
    pred = FakePredictor()
    r = check_roundtrip(text, pred)
    assert set(r.changed_keys) == tagged
    assert set(r.stale_keys) == tagged
    assert {k for _, k, _ in r.problems} == reported
    assert len(pred.calls) == (1 if tagged else 0)  # one batch per file, none when nothing to tag
    assert sorted(x["key"] for x in pred.items) == sorted(tagged)
    for line, key, reason in r.problems:  # lines point at the entry's "@"
        assert text.split("\n")[line - 1].lstrip().startswith("@") and reason
    terms = assert_only_tags_changed(text, r.new_text)
    for key in tagged:  # every tagged entry got the predicted tags after the user's terms
        item = next(x for x in pred.items if x["key"] == key)
        predicted = FakePredictor()([item])[0]
        assert [t for t in terms[key] if is_tool(t)] == predicted
    if reported and not tagged:
        assert r.new_text == text


def case_out(name, **kw):
    return update_bib_text(read_case(name), FakePredictor(), facets=FACETS, **kw).new_text


def test_case_exact_bytes_of_inserted_fields():
    # trailing comma kept, indentation copied
    assert "sample data.},\n  keywords = {modality:text},\n}" in case_out("01-month-macro.bib")
    # `(`-delimited entry, no trailing comma: field inserted before `)`
    assert case_out("12-paren-delimited-entry.bib").startswith(
        "@article(doe2002paren,\n  author = {Doe, Jane},\n  title = {Parentheses as Delimiters (Still Valid)},\n"
        "  year = {2002},\n  abstract = {BibTeX allows round parentheses around an entry body.},\n"
        "  keywords = {modality:text, task:entry}\n)\n"
    )
    # upper-case field names, existing `Keywords` merged; BibDesk `}}` kept glued, Capitalised name
    out = case_out("17-field-name-case.bib")
    assert out.startswith("@ARTICLE{Upper2011,")
    assert "  Keywords = {existing, user tag, modality:text},\n}" in out
    assert "     Abstract = {Another abstract.},\n     Keywords = {modality:text, method:abstract}}" in out
    # CRLF: the inserted line ends with CRLF, no bare LF anywhere
    out = case_out("18-crlf.bib")
    assert "second line.},\r\n  keywords = {modality:text, method:abstract},\r\n}\r\n" in out
    assert out.count("\n") == out.count("\r\n")
    # BOM stays the first character
    assert case_out("19-utf8-bom.bib").startswith("\ufeff@article{bom2016,")
    # quotes follow the entry's delimiter style; trailing-comma variants
    out = case_out("28-trailing-comma-variants.bib")
    assert '"Last field without a trailing comma",\n  keywords = "modality:text"\n}' in out
    assert "{Last field with a trailing comma},\n  keywords = {modality:text},\n}" in out
    assert "@misc{emptyentry2017}\n\n@misc{keyonly2017,\n}\n" in out
    # `=` alignment recomputed for the new name
    assert '  abstract       = "Inner {"quoted"} words and {braces} inside quotes.",\n  keywords       = "modality:text",\n}' in case_out(
        "11-quoted-value-inner-braces-quotes.bib"
    )
    assert "  abstract = {This file ends" in case_out("06-jabref-meta-comments.bib")
    assert "comments.},\n  keywords = {modality:text},\n}" in case_out("06-jabref-meta-comments.bib")
    # semicolon separators and a braced comma kept; comma separator
    out = case_out("31-existing-keywords-separators.bib")
    assert "  Keywords = {Apple; Fruit; {Trees, Deciduous}; modality:text},\n" in out
    assert "  keywords = {user-a, user-b, modality:text, task:entry},\n" in out
    assert "  keywords = {language modeling, {Smart Examples}, modality:text, modality:example, method:abstract}," in case_out(
        "22-nested-braces-commands.bib"
    )
    # no final newline stays so
    assert case_out("32-no-final-newline.bib").endswith("file.},\n  keywords = {modality:text},\n}")
    # tabs, comma-first, BibDesk
    out = case_out("33-idiosyncratic-formatting.bib")
    assert "\tabstract\t=\t{Odd whitespace around every token.},\n\tkeywords\t=\t{modality:text}\n}\n" in out
    assert ",\tabstract\t= {Comma-first style exported by some tools.}\n,\tkeywords\t= {modality:text}\n}\n" in out
    assert "\tYear = {1969},\n\tKeywords = {modality:text}}\n" in out
    assert out.startswith("  @article { spaced2010 ,\n")
    # case 14 is handled fully: `note = {C:\\}` read correctly, the next entry intact
    out = case_out("14-backslash-paths.bib")
    assert "  note = {C:\\\\},\n  year = {2015},\n  abstract = {The note field ends in an escaped backslash.},\n  keywords = {modality:text},\n}\n\n@misc{sample2015after,\n  title = {Entry After the Path Entry},\n  year = {2015},\n}\n" in out


def test_case_model_input_is_cleaned_copy():
    def items(name):
        p = FakePredictor()
        update_bib_text(read_case(name), p, facets=FACETS)
        return {x["key"]: x for x in p.items}

    x = items("21-latex-accents-math.bib")["garcia2019acc"]
    assert x["title"] == "Das Beispielverständnis: ω-Limits and N"
    assert x["abstract"] == "We show α ≤ β for Čech-type examples; see ."
    assert items("03-string-concat.bib")["example2017concat"]["title"] == "Concatenated Title"
    assert items("18-crlf.bib")["doe2020crlf"]["abstract"] == "First line of the abstract continues on a second line."
    assert items("34-multiline-abstract.bib")["multi2019"]["abstract"] == (
        "Background: the first paragraph of a long abstract wraps over several indented lines. "
        "Results: a second paragraph follows an empty line, and this line is indented with a tab."
    )
    assert items("10-quote-escaped-quote.bib")["doe2013quote"]["abstract"] == 'We revisit the "placeholder" debate.'
    assert items("22-nested-braces-commands.bib")["secret2022"] == {
        "key": "secret2022",
        "title": "The Secret of Example Systems",
        "abstract": "Triple braced abstract with emphasis and https://example.org/a_b",
    }


def test_macros_resolved_case_insensitively_for_the_model():
    text = (
        '@STRING{ABS = {Shared } # "opening"}\n@string{Ttl = "Macro Title"}\n'
        "@article{m1, title = ttl, abstract = abs # { and more about } # jan}\n"
    )
    p = FakePredictor()
    r = update_bib_text(text, p, facets=FACETS)
    assert p.items == [{"key": "m1", "title": "Macro Title", "abstract": "Shared opening and more about January"}]
    assert r.new_text == text.replace("# jan}", "# jan, keywords = {modality:text}}")


# --------------------------------------------------------------------------------------
# Unsafe kinds: detected generally (several variants each), reported, left untouched
# --------------------------------------------------------------------------------------

GOOD = "\n@misc{good9, title = {After}, abstract = {A following entry.}}\n"

UNSAFE = {
    "missing comma between fields": [
        "@article{bad1,\n  title = {Foo}\n  year = {2020},\n  abstract = {Some entry.},\n}\n",
        '@article{bad1,\n  title = "Foo"\n  abstract = {Some entry.}\n}\n',
        "@article{bad1,\n  year = 2020\n  abstract = {Some entry.},\n}\n",
        "@article{bad1, abstract = {Some entry.} note = {x}}\n",
    ],
    "stray closing brace": [
        "@article{bad1,\n  title = {Foo}},\n  abstract = {Some entry.},\n}\n",
        "@article{bad1,\n  journal = {Ind. Res.}amp$ Research},\n  abstract = {Some entry.},\n}\n",
        "@article{bad1,\n  title = {Foo}}\n  abstract = {Some entry.},\n}\n",
        "@article{bad1, abstract = {Some entry.}}}\n",
        "@article{bad1, abstract = {Some entry.}}\n}\n",
        "@article{bad1, title = {Foo}} bar baz,\n abstract = {Some entry.},\n}\n",
    ],
    'unescaped "': [
        '@article{bad1,\n  title = "The "Best" Paper",\n  abstract = {Some entry.},\n}\n',
        '@article{bad1,\n  title = "A 5" Display",\n  year = 2020,\n  abstract = {Some entry.},\n}\n',
        '@article{bad1,\n  abstract = "Some "quoted" entry."\n}\n',
        '@article{bad1,\n  abstract = "M\\"uller entry."\n}\n',
    ],
    "entry inside @comment": [
        "@comment{\n  disabled:\n@article{bad1,\n  abstract = {Some entry.},\n}\n}\n",
        "@Comment{old\n@inproceedings{bad1, abstract = {Some entry.}}\n  more}\n",
    ],
    "phantom @word{ / @word (": [
        "@article{bad0,\n  abstract = {We discuss\n@misc{bad1, abstract = {Some entry.}} more words},\n  year = {2020},\n}\n",
        "@article{bad0,\n  abstract = {We discuss\n@inproceedings (bad1, abstract = {Some entry.}) and more},\n}\n",
        "@article{bad0,\n  title = \"Quoted\n  @book{bad1, abstract = {Some entry.}}\",\n  abstract = {x}}\n",
    ],
    "duplicate key": [
        "@article{bad1, abstract = {Some entry.}}\n@article{bad1, abstract = {Other entry.}}\n",
        "@article{Bad1, abstract = {Some entry.}}\n@misc{bad1, abstract = {Other entry.}}\n",
    ],
    "duplicate field": [
        "@article{bad1, title = {a}, title = {b}, abstract = {Some entry.}}\n",
        "@article{bad1, Title = {a}, abstract = {Some entry.}, TITLE = {b}}\n",
        "@article{bad1, abstract = {Some entry.}, ABSTRACT = {Again.}}\n",
    ],
    "% comment inside entry": [
        "@article{bad1,\n  % title = {x},\n  abstract = {Some entry.},\n}\n",
        "@article{bad1,\n  abstract = {Some entry.}, % note\n}\n",
    ],
    "ambiguous backslash": [
        "@article{bad1, note = {C:\\\\{x}}, abstract = {Some entry.}}\n",
    ],
}


@pytest.mark.parametrize("kind,text", [(k, t) for k, ts in UNSAFE.items() for t in ts])
def test_unsafe_kind_untouched_and_reported(kind, text):
    full = text + GOOD
    p = FakePredictor()
    r = update_bib_text(full, p, facets=FACETS)
    keys = {k for _, k, _ in r.problems}
    assert "bad1" in keys or "Bad1" in keys, r.problems
    assert r.changed_keys == ["good9"]
    # everything but the good entry is byte-identical
    assert r.new_text[: len(text)] == text
    assert r.new_text[len(text) :] == GOOD.replace("entry.}}", "entry.}, keywords = {modality:text, task:entry}}")
    assert all(x["key"] == "good9" for x in p.items)


@pytest.mark.parametrize(
    "text",
    [
        "@misc{bs1, note = {C:\\\\}, abstract = {Some entry.}}\n",  # last entry of the file
        "@misc{bs1,\n  file = {D:\\\\dir\\\\},\n  abstract = {Some entry.}\n}\n% a comment\n",
        '@misc{bs1,\n  note = "C:\\\\",\n  abstract = {Some entry.},\n}\n\n',
    ],
)
def test_backslash_parity_entries_are_handled(text):
    # bibtexparser 2.1.0 fails on these (`\\}` read as an escaped brace); they are read with
    # parity-aware escapes, agreeing with plain BibTeX, tagged, and verified
    full = text + GOOD
    assert any(type(b).__name__ == "ParsingFailedBlock" for b in parse(full).blocks)
    r = update_bib_text(full, FakePredictor(), facets=FACETS)
    assert r.problems == [] and r.changed_keys == ["bs1", "good9"]
    assert re.sub(r",?\s*keywords = \{modality:text, task:entry\}", "", r.new_text) == re.sub(r",?\s*keywords = \{modality:text, task:entry\}", "", full)
    assert update_bib_text(r.new_text, FakePredictor(), facets=FACETS).new_text == r.new_text
    assert update_bib_text(r.new_text, abstain, facets=FACETS).new_text == full


def test_backslash_ambiguity_not_recovered_when_readings_differ():
    # `\{` counts as a brace for BibTeX but not with escapes: the readings differ -> reported
    text = "@misc{bs1, note = {C:\\\\}, file = {a\\{b}, abstract = {Some entry.}}\n" + GOOD
    r = update_bib_text(text, FakePredictor(), facets=FACETS)
    assert [k for _, k, _ in r.problems] == ["bs1"] and r.changed_keys == ["good9"]


def test_duplicate_key_reports_both_lines():
    r = update_bib_text(read_case("15-duplicate-entry-key.bib"), FakePredictor(), facets=FACETS)
    assert [(ln, k) for ln, k, _ in r.problems] == [(1, "dup2022"), (8, "dup2022")]
    assert all("duplicate key" in why for _, _, why in r.problems)


def test_blocks_not_recognised_by_the_parser_are_reported():
    text = "@article\n{hidden1, abstract = {Some entry.}}\n"
    r = update_bib_text(text, FakePredictor(), facets=FACETS)
    assert r.new_text == text and [(ln, k) for ln, k, _ in r.problems] == [(1, "hidden1")]


def test_unparsable_file_left_untouched(monkeypatch):
    def boom(*a, **k):
        raise RuntimeError("parser bug")

    monkeypatch.setattr(bibtexparser, "parse_string", boom)
    r = update_bib_text("@misc{a, abstract={x}}", FakePredictor(), facets=FACETS)
    assert r.new_text == "@misc{a, abstract={x}}" and r.problems[0][0] == 1 and "parser bug" in r.problems[0][2]


def test_unverifiable_edit_is_dropped(monkeypatch):
    text = "@misc{a, abstract = {one entry}}\n@misc{b, abstract = {two}}\n"
    real = bib._parse_blocks
    calls = []

    def flaky(t):
        calls.append(t)
        located = real(t)
        if len(calls) == 2:  # the verification parse: pretend entry a came back different
            b0, s, e = located[0]
            b0._raw = b0.raw + " "
        return located

    monkeypatch.setattr(bib, "_parse_blocks", flaky)
    r = update_bib_text(text, FakePredictor(), facets=FACETS)
    assert r.changed_keys == ["b"]
    assert r.new_text == text.replace("{two}}", "{two}, keywords = {modality:text}}")
    assert [(ln, k) for ln, k, _ in r.problems] == [(1, "a")]


def test_bibtexparser_logging_does_not_reach_stderr(capsys):
    update_bib_text(read_case("04-percent-comment-inside-entry.bib"), FakePredictor(), facets=FACETS)
    update_bib_text(read_case("14-backslash-paths.bib"), FakePredictor(), facets=FACETS)
    captured = capsys.readouterr()
    assert captured.err == "" and captured.out == ""
    assert logging.getLogger("bibtexparser").propagate is True


# --------------------------------------------------------------------------------------
# Merge semantics
# --------------------------------------------------------------------------------------


def kw_out(kw, tags, abstract="x", **extra):
    text = "@article{k,\n  abstract = {%s},\n  keywords = {%s},\n}\n" % (abstract, kw)
    r = update_bib_text(text, lambda items: [list(tags) for _ in items], facets=FACETS, **extra)
    m = re.search(r"keywords = \{(.*)\},\n", r.new_text, re.S)
    return (m.group(1) if m else None), r


@pytest.mark.parametrize(
    "kw,tags,expected",
    [
        ("a, b", ["method:cnn"], "a, b, method:cnn"),
        ("a,b", ["method:cnn", "task:x"], "a,b,method:cnn,task:x"),
        ("a; b", ["method:cnn"], "a; b; method:cnn"),
        ("a ; {b, c}", ["method:cnn"], "a ; {b, c} ; method:cnn"),
        ("only", ["method:cnn"], "only, method:cnn"),
        ("", ["method:cnn"], "method:cnn"),
        ("method:old, a, task:old, b", ["method:cnn"], "a, b, method:cnn"),  # stale removed, order fixed
        ("a, method:cnn", ["method:cnn"], "a, method:cnn"),  # already current
        ("a, method:old", [], "a"),  # abstain: tool terms removed
        ("Zeta, other:thing, {method:kept}, Method:Case", ["task:t"], "Zeta, other:thing, {method:kept}, Method:Case, task:t"),
        ("a, b,", ["method:cnn"], "a, b, method:cnn,"),
        ("a,\n    b", ["method:cnn", "task:x"], "a,\n    b,\n    method:cnn,\n    task:x"),
    ],
)
def test_merge_keeps_user_terms(kw, tags, expected):
    got, r = kw_out(kw, tags)
    assert got == expected
    assert r.new_text == "@article{k,\n  abstract = {x},\n  keywords = {%s},\n}\n" % expected
    again, r2 = kw_out(got, tags)
    assert again == got and r2.changed_keys == []


def test_tool_only_field_is_removed_when_model_abstains():
    text = "@article{k,\n  title = {t},\n  abstract = {x},\n  keywords = {method:a, task:b},\n}\n"
    r = update_bib_text(text, abstain, facets=FACETS)
    assert r.new_text == "@article{k,\n  title = {t},\n  abstract = {x},\n}\n"
    assert r.stale_entries == [(1, "k", "tags out of date")]
    # first-field variant
    text = "@article{k, keywords = {method:a}, abstract = {x}}\n"
    assert update_bib_text(text, abstain, facets=FACETS).new_text == "@article{k, abstract = {x}}\n"
    # user keywords = {} stays
    text = "@article{k, abstract = {x}, keywords = {}}\n"
    assert update_bib_text(text, abstain, facets=FACETS).new_text == text


def test_entries_without_abstract_untouched_even_with_stale_tags():
    text = "@article{k, abstract = {  }, keywords = {method:a}}\n@misc{n, keywords = {task:b}}\n"
    p = FakePredictor()
    r = update_bib_text(text, p, facets=FACETS)
    assert r.new_text == text and p.calls == [] and r.stale_keys == []


@pytest.mark.parametrize(
    "fields,expected_name",
    [
        ("AUTHOR = {a},\n  TITLE = {t},\n  ABSTRACT = {x}", "KEYWORDS"),
        ("Author = {a},\n  Title = {t},\n  Abstract = {x}", "Keywords"),
        ("author = {a},\n  ISSN = {1},\n  DOI = {d},\n  abstract = {x}", "keywords"),  # tie -> abstract's
        ("archivePrefix = {a},\n  abstract = {x}", "keywords"),
    ],
)
def test_new_field_name_follows_letter_case(fields, expected_name):
    text = "@article{k,\n  %s\n}\n" % fields
    out = update_bib_text(text, FakePredictor(), facets=FACETS).new_text
    assert out == text.replace("\n}\n", ",\n  %s = {modality:text}\n}\n" % expected_name)


def test_owned_field_replaced_wholesale():
    text = "@article{k,\n  abstract = {x},\n  keywords = {user, method:a},\n  tags = {method:y; method:z},\n}\n"
    r = update_bib_text(text, lambda it: [["method:b", "task:c"]], facets=FACETS, field="tags")
    assert r.new_text == text.replace("{method:y; method:z}", "{method:b, task:c}")
    r = update_bib_text(text, abstain, facets=FACETS, field="tags")
    assert r.new_text == text.replace("  tags = {method:y; method:z},\n", "")
    # a field with anything but the tool's terms in it (a user's keywords, an author list) is never replaced
    for name, value in (("tags", "{user-junk; method:z}"), ("keywords", "{user, method:a}"), ("author", "{Doe, Jane}")):
        t = "@article{k,\n  abstract = {x},\n  %s = %s,\n}\n" % (name, value)
        r = update_bib_text(t, lambda it: [["method:b"]], facets=FACETS, field=name)
        assert r.new_text == t and r.problems and "not the tool's tags" in r.problems[0][2]
    text2 = "@article{k,\n  abstract = {x},\n}\n"
    r = update_bib_text(text2, lambda it: [["method:b"]], facets=FACETS, field="tags")
    assert r.new_text == "@article{k,\n  abstract = {x},\n  tags = {method:b},\n}\n"
    with pytest.raises(ValueError):
        update_bib_text(text2, abstain, facets=FACETS, field="abstract")


def test_predict_contract_violations_raise():
    text = "@misc{a, abstract = {x}}\n@misc{b, abstract = {y}}\n"
    with pytest.raises(ValueError, match="2 entries"):
        update_bib_text(text, lambda it: [["method:a"]], facets=FACETS)
    with pytest.raises(ValueError, match="facet"):
        update_bib_text(text, lambda it: [["unknown:a"], []], facets=FACETS)
    with pytest.raises(ValueError):
        update_bib_text(text, lambda it: [["method:a b"], []], facets=FACETS)


def test_duplicate_predicted_tags_written_once():
    text = "@misc{a, abstract = {x}}\n"
    r = update_bib_text(text, lambda it: [["method:a", "method:a", "task:b"]], facets=FACETS)
    assert r.new_text == "@misc{a, abstract = {x}, keywords = {method:a, task:b}}\n"


# --------------------------------------------------------------------------------------
# LaTeX decoding for the model copy
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "src,expected",
    [
        (r"Garc{\'\i}a-P{\'e}rez, Bl{\"a}ttel, M\"{u}ller", "García-Pérez, Blättel, Müller"),
        (r"{\v{C}}ech \c{c}a \v C \'E \`a \^o \~n \=a \.z \u{g} \H{o} \k{a} \r{a}", "Čech ça Č É à ô ñ ā ż ğ ő ą å"),
        (r"\ss{} \o{} \AE \l \aa", "ß ø Æ ł å"),
        (r"Examples \& Counterexamples, \$1, 50\%, a\_b, \#1, \{x\}", "Examples & Counterexamples, $1, 50%, a_b, #1, {x}"),
        (r"\emph{x} \textbf{bold} {\em em} \textsf{S}", "x bold em S"),
        (r"$\alpha \le \beta$ and $\mathbb{N}$ and $x^2$", "α ≤ β and N and x^2"),
        (r"see \cite[p.~3]{key} and \ref{fig}", "see and"),
        (r"\url{https://x.org/a_b%20c} \href{http://y}{link text}", "https://x.org/a_b%20c link text"),
        ("a\r\n\t  b   c", "a b c"),
        (r"non~breaking and A--B and C---D", "non breaking and A–B and C—D"),
        (r"{{The \textsf{Secret} of {E}xample}}", "The Secret of Example"),
        (r"\unknowncommand rest \\ end", "unknowncommand rest end"),
        ("", ""),
        ("\\", ""),
        (r"\'", ""),
    ],
)
def test_latex_to_text(src, expected):
    assert latex_to_text(src) == expected


# --------------------------------------------------------------------------------------
# Real bibliographies of ../shared/bib/real
# --------------------------------------------------------------------------------------

REAL_FILES = sorted(REAL.glob("*.bib")) if REAL.is_dir() else []


@pytest.mark.skipif(not REAL_FILES, reason=f"shared real .bib files not found at {REAL} (set TAGGER_SHARED)")
@pytest.mark.parametrize("path", REAL_FILES, ids=lambda p: p.name[:40])
def test_real_file(path, tmp_path):
    data = path.read_bytes()
    text = data.decode("utf-8")
    pred = FakePredictor(rules=[("reinforcement", "task:rl"), ("language", "modality:language")])
    r = update_bib_text(text, pred, facets=FACETS)
    assert len(pred.calls) <= 1
    # every readable entry with a non-blank abstract was tagged
    with_abstract = [
        e.key for e in parse(text).entries
        if any(f.key.lower() == "abstract" and latex_to_text(f.value.strip('{}"')) for f in e.fields)
    ]
    problem_keys = {k for _, k, _ in r.problems}
    assert sorted(r.changed_keys) == sorted(k for k in with_abstract if k not in problem_keys)
    # bytes outside the tag fields identical; re-parse equal apart from the tags
    terms = assert_only_tags_changed(text, r.new_text)
    old = {e.key: e for e in parse(text).entries}
    for key, ts in terms.items():
        kw = [f.value for f in old[key].fields if f.key.lower() == "keywords"]
        user = [t for t in split_terms(kw[0]) if not is_tool(t)] if kw else []
        assert ts[: len(user)] == user and all(is_tool(t) for t in ts[len(user) :])
        assert ts[len(user) :][0] == "modality:text"
    # through run(): written, second run no change, check passes
    f = tmp_path / path.name
    f.write_bytes(data)
    out, err = io.StringIO(), io.StringIO()
    assert run([f], predict=pred, facets=FACETS, out=out, err=err) == (1 if r.changed_keys else 0)
    assert f.read_bytes() == r.new_text.encode("utf-8")
    out, err = io.StringIO(), io.StringIO()
    assert run([f], predict=pred, facets=FACETS, out=out, err=err) == 0 and out.getvalue() == ""
    assert run([f], predict=pred, facets=FACETS, check=True, out=out, err=err) == 0 and out.getvalue() == ""
    assert update_bib_text(r.new_text, abstain, facets=FACETS).new_text == text or any(
        is_tool(t) for e in old.values() for fl in e.fields if fl.key.lower() == "keywords" for t in split_terms(fl.value)
    )


# --------------------------------------------------------------------------------------
# Property test: random entries
# --------------------------------------------------------------------------------------

WORDS = ["alpha", "entry", "example", "model", "data", "abstract", "graph", "noise", "abstain", "vision"]
word = st.sampled_from(WORDS)
words = st.lists(word, min_size=1, max_size=6).map(" ".join)


@st.composite
def bib_files(draw):
    nl = draw(st.sampled_from(["\n", "\r\n"]))
    entries = []
    keys = draw(st.lists(st.from_regex(r"[A-Za-z][A-Za-z0-9_:-]{0,8}", fullmatch=True), min_size=1, max_size=4,
                         unique_by=str.casefold))
    for key in keys:
        names = draw(st.lists(st.sampled_from(["title", "author", "year", "journal", "note", "abstract", "keywords"]),
                              unique=True, min_size=1, max_size=7))
        case = draw(st.sampled_from([str.lower, str.upper, str.capitalize]))
        indent = draw(st.sampled_from(["  ", "\t", "    ", ""]))
        eq = draw(st.sampled_from([" = ", "=", "\t=\t", "  =  ", " =\t"]))
        comma_first = draw(st.booleans())
        trailing = draw(st.booleans()) and not comma_first
        one_line = draw(st.booleans())
        delim_style = draw(st.sampled_from(["{}", '""', "mixed"]))
        fields = []
        for name in names:
            if name == "keywords":
                user = draw(st.lists(st.one_of(word, words, st.just("{Trees, Deciduous}"), st.just("method:old"),
                                               st.just("task:entry")), max_size=4))
                sep = draw(st.sampled_from([", ", ",", "; ", ";", " ; ", "," + nl + "    "]))
                value = sep.join(user)
            elif name == "abstract":
                value = draw(st.one_of(words, st.just(""), st.just("  ")))
            elif name == "year":
                value = str(draw(st.integers(1900, 2030)))
            else:
                value = draw(words)
            d = delim_style if delim_style != "mixed" else draw(st.sampled_from(["{}", '""']))
            if name == "year" and draw(st.booleans()):
                rendered = value
            else:
                rendered = d[0] + value + d[1]
            fields.append(case(name) + eq + rendered)
        if one_line:
            body = ", ".join(fields) + ("," if trailing else "")
            entries.append("@%s{%s, %s}" % (draw(st.sampled_from(["article", "MISC", "InProceedings"])), key, body))
        elif comma_first:
            body = "".join(nl + ", " + f for f in fields)
            entries.append("@article{%s%s%s}" % (key, body, nl))
        else:
            body = ("," + nl).join(indent + f for f in fields) + ("," if trailing else "")
            entries.append("@article{%s,%s%s%s}" % (key, nl, body, nl))
    gaps = [draw(st.sampled_from([nl, nl + nl, nl + "% a comment" + nl, nl + "free text" + nl + nl])) for _ in entries]
    text = draw(st.sampled_from(["", "\ufeff", "% header" + nl]))
    for e, g in zip(entries, gaps):
        text += e + g
    if draw(st.booleans()):
        text = text.rstrip("\r\n")
    return text


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(bib_files())
def test_property_random_entries(text):
    pred = FakePredictor()
    r = check_roundtrip(text, pred)
    assert r.problems == []
    assert len(pred.calls) <= 1
    # stale keys are exactly the entries whose tool terms differ from the prediction
    new_terms = assert_only_tags_changed(text, r.new_text)
    for item in pred.items:
        want = FakePredictor()([item])[0]
        if item["key"] in new_terms:
            assert [t for t in new_terms[item["key"]] if is_tool(t)] == want
    # line endings of the file are kept: a CRLF file gets no bare LF
    if "\r\n" in text:
        assert r.new_text.count("\n") == r.new_text.count("\r\n")


# --------------------------------------------------------------------------------------
# run(): the CLI / hook contract
# --------------------------------------------------------------------------------------


def call(paths, **kw):
    out, err = io.StringIO(), io.StringIO()
    kw.setdefault("predict", FakePredictor())
    kw.setdefault("facets", FACETS)
    rc = run([str(p) for p in paths], out=out, err=err, **kw)
    return rc, out.getvalue(), err.getvalue()


@pytest.fixture
def bibfile(tmp_path):
    def make(name="refs.bib", content=None, data=None):
        p = tmp_path / name
        if data is None:
            data = (content if content is not None else read_case("01-month-macro.bib")).encode("utf-8")
        p.write_bytes(data)
        return p

    return make


def test_run_fixes_then_passes(bibfile):
    f = bibfile()
    before = f.read_bytes()
    pred = FakePredictor()
    rc, out, err = call([f], predict=pred)
    assert (rc, out, err) == (1, f"Fixing {f}\n", "")
    assert len(pred.calls) == 1 and len(pred.calls[0]) == 2  # one batch with both entries
    after = f.read_bytes()
    assert after != before and b"keywords = {modality:text}," in after
    assert call([f]) == (0, "", "")
    assert f.read_bytes() == after
    assert call([f], check=True) == (0, "", "")


def test_run_nothing_to_do_exits_0(bibfile):
    f = bibfile(content=read_case("38-empty-values.bib"))
    assert call([f]) == (0, "", "")
    assert call([f], check=True) == (0, "", "")


def test_run_check_lists_stale_and_writes_nothing(bibfile):
    f = bibfile(content="@misc{a,\n  abstract = {An entry.},\n}\n\n@misc{b,\n  abstract = {Other.},\n  keywords = {u, method:gone},\n}\n")
    before = f.read_bytes()
    rc, out, err = call([f], check=True)
    assert rc == 1 and err == ""
    assert out == f"{f}:1: a: tags missing\n{f}:5: b: tags out of date\n"
    assert f.read_bytes() == before
    assert call([f])[0] == 1
    assert call([f], check=True) == (0, "", "")


def test_run_diff(bibfile):
    f = bibfile()
    before = f.read_bytes()
    rc, out, err = call([f], check=True, diff=True)
    assert rc == 1 and f.read_bytes() == before
    assert f"--- a/{f}\n+++ b/{f}\n" in out
    plus = [ln for ln in out.splitlines() if ln.startswith("+") and not ln.startswith("+++")]
    assert plus == ["+  keywords = {modality:text},", "+  keywords = {modality:text, modality:example, method:abstract},"]
    rc, out2, _ = call([f], diff=True)
    assert rc == 1 and out2.startswith(f"Fixing {f}\n--- a/{f}")
    assert call([f], diff=True) == (0, "", "")


def test_run_diff_no_final_newline(bibfile):
    f = bibfile(content=read_case("32-no-final-newline.bib"))
    rc, out, _ = call([f], check=True, diff=True)
    assert rc == 1 and out.endswith("+  keywords = {modality:text},\n }\n\\ No newline at end of file\n")


def test_run_warnings_and_strict(bibfile):
    f = bibfile(content=read_case("04-percent-comment-inside-entry.bib"))
    before = f.read_bytes()
    rc, out, err = call([f])
    assert (rc, out) == (0, "")
    assert err.startswith(f"{f}:1: roe2021pct: ") and err.count("\n") == 1
    assert call([f], check=True)[0] == 0
    assert call([f], strict=True)[0] == 1
    assert call([f], check=True, strict=True)[0] == 1
    assert f.read_bytes() == before


def test_run_warning_does_not_block_other_entries(bibfile):
    f = bibfile(content=read_case("30-unbalanced-braces.bib"))
    rc, out, err = call([f])
    assert rc == 1 and out == f"Fixing {f}\n"
    assert err.startswith(f"{f}:1: unbal1996: ")
    assert b"{Should still be parsed.},\n  keywords = {modality:text},\n}" in f.read_bytes()


LATIN1 = "@article{caf\xe9,\n  title = {Caf\xe9 entry},\n  abstract = {R\xe9sum\xe9 of an entry.},\n}\n".encode("latin-1")


def test_run_non_utf8_without_encoding(bibfile):
    f = bibfile("latin.bib", data=LATIN1)
    pred = FakePredictor()
    rc, out, err = call([f], predict=pred)
    assert rc == 2 and out == ""
    assert err.count("\n") == 1 and str(f) in err and "UTF-8" in err and "--encoding" in err
    assert "Traceback" not in err
    assert f.read_bytes() == LATIN1 and pred.calls == []
    assert call([f], check=True)[0] == 2


def test_run_latin1_with_encoding(bibfile):
    f = bibfile("latin.bib", data=LATIN1)
    pred = FakePredictor()
    rc, out, err = call([f], predict=pred, encoding="latin-1")
    assert (rc, out, err) == (1, f"Fixing {f}\n", "")
    assert pred.items[0]["abstract"] == "Résumé of an entry." and pred.items[0]["key"] == "café"
    assert f.read_bytes() == LATIN1.replace(b"entry.},\n}", b"entry.},\n  keywords = {modality:text, task:entry},\n}")
    with pytest.raises(UnicodeDecodeError):
        f.read_bytes().decode("utf-8")
    assert call([f], encoding="latin-1") == (0, "", "")


def test_run_encoding_that_does_not_round_trip_is_refused(bibfile):
    data = "\ufeff@misc{a, abstract = {An entry.}}\n".encode("utf-16-be")
    f = bibfile("u16.bib", data=data)
    rc, out, err = call([f], encoding="utf-16")  # would be written back little-endian
    assert rc == 2 and out == "" and err.count("\n") == 1 and "does not reproduce" in err
    assert f.read_bytes() == data
    rc, out, err = call([f], encoding="utf-16-be")
    assert (rc, out, err) == (1, f"Fixing {f}\n", "")
    assert f.read_bytes() == "\ufeff@misc{a, abstract = {An entry.}, keywords = {modality:text, task:entry}}\n".encode("utf-16-be")


def test_run_bom_and_crlf_bytes(bibfile):
    f = bibfile(data=(CASES / "19-utf8-bom.bib").read_bytes())
    assert call([f])[0] == 1
    assert f.read_bytes().startswith(b"\xef\xbb\xbf@article{bom2016,")
    g = bibfile("crlf.bib", data=(CASES / "18-crlf.bib").read_bytes())
    assert call([g])[0] == 1
    data = g.read_bytes()
    assert b"  keywords = {modality:text, method:abstract},\r\n}" in data and data.count(b"\n") == data.count(b"\r\n")


def test_run_unreadable_and_unknown_encoding(bibfile, tmp_path):
    missing = tmp_path / "missing.bib"
    rc, out, err = call([missing])
    assert rc == 2 and out == "" and err.startswith(f"tagger: error: {missing}: cannot read file") and err.count("\n") == 1
    d = tmp_path / "dir.bib"
    d.mkdir()
    assert call([d])[0] == 2
    f = bibfile()
    rc, out, err = call([f], encoding="no-such-codec")
    assert rc == 2 and "unknown encoding" in err and err.count("\n") == 1


def test_run_multiple_files_continue_after_error(bibfile):
    bad = bibfile("bad.bib", data=LATIN1)
    good = bibfile("good.bib")
    pred = FakePredictor()
    rc, out, err = call([bad, good], predict=pred)
    assert rc == 2 and out == f"Fixing {good}\n" and str(bad) in err
    assert len(pred.calls) == 1  # once per file that has entries to tag
    assert b"keywords" in good.read_bytes()


def test_run_predict_called_once_per_file(bibfile):
    a = bibfile("a.bib")
    b = bibfile("b.bib", content=read_case("36-biblatex-unknown-types.bib"))
    pred = FakePredictor()
    assert call([a, b], predict=pred)[0] == 1
    assert [len(c) for c in pred.calls] == [2, 3]


def test_run_atomic_write_keeps_mode_and_leaves_no_temp(bibfile, tmp_path):
    f = bibfile()
    os.chmod(f, 0o640)
    assert call([f])[0] == 1
    assert stat.S_IMODE(os.stat(f).st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["refs.bib"]


def test_run_write_through_symlink(bibfile, tmp_path):
    target = bibfile("real.bib")
    link = tmp_path / "link.bib"
    link.symlink_to(target)
    assert call([link])[0] == 1
    assert link.is_symlink() and b"keywords" in target.read_bytes()


def test_run_field_option(bibfile):
    f = bibfile(content=read_case("31-existing-keywords-separators.bib"))
    before = f.read_bytes()
    assert call([f], field="tags")[0] == 1
    after = f.read_bytes()
    assert b"Keywords = {Apple; Fruit; {Trees, Deciduous}}," in after  # user keywords untouched
    assert after.count(b"tags = {") == 2
    assert call([f], field="tags") == (0, "", "")
    assert call([f], field="tags", predict=abstain)[0] == 1
    assert f.read_bytes() == before


def test_run_default_streams_are_looked_up_at_call_time(bibfile, monkeypatch):
    f = bibfile()
    fake_out, fake_err = io.StringIO(), io.StringIO()
    monkeypatch.setattr("sys.stdout", fake_out)
    monkeypatch.setattr("sys.stderr", fake_err)
    assert run([str(f)], predict=FakePredictor(), facets=FACETS) == 1
    assert fake_out.getvalue() == f"Fixing {f}\n" and fake_err.getvalue() == ""


def test_report_dataclass_shape():
    r = update_bib_text("", FakePredictor(), facets=FACETS)
    assert r == BibReport("", [], [], [], [])
