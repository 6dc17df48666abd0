"""Tests of tagger.bib on the failure kinds of ../shared/bib/cases (copied into
tests/bib_cases) and on generated unsafe entries: byte-preserving tag writing, which
entries are unreadable and which only warned about."""

from __future__ import annotations

import logging
import re

import bibtexparser
import pytest

from tagger import text as textmod
from tagger.bib import edit, update_bib_text
from tagger.bib.read import UNREADABLE, WARNING

from bibtools import CASES, FACETS, SHARED, FakePredictor, abstain, assert_only_tags_changed, check_roundtrip, nothing, parse, read_case

# file -> (keys tagged, keys reported unreadable, keys warned about and left untouched)
EXPECTED = {
    "01-month-macro.bib": ({"doe2019month", "roe2020months"}, set(), set()),
    "02-string-macro-reference.bib": ({"sample2018macro"}, set(), set()),
    "03-string-concat.bib": ({"example2017concat"}, set(), set()),
    "04-percent-comment-inside-entry.bib": (set(), set(), {"roe2021pct"}),
    "05-percent-comment-between-entries.bib": ({"doe2016line"}, set(), set()),
    "06-jabref-meta-comments.bib": ({"example2015jab"}, set(), set()),
    "07-braceless-comment.bib": ({"sample2014bc"}, set(), set()),
    "08-at-sign-in-value.bib": ({"doe2022at"}, set(), set()),
    "10-quote-escaped-quote.bib": ({"doe2013quote"}, set(), set()),
    "11-quoted-value-inner-braces-quotes.bib": ({"sample2014iq"}, set(), set()),
    "12-paren-delimited-entry.bib": ({"doe2002paren"}, set(), set()),
    "13-escaped-brace.bib": ({"roe2015esc"}, set(), set()),
    "14-backslash-paths.bib": ({"sample2015path"}, set(), set()),
    "15-duplicate-entry-key.bib": (set(), set(), {"dup2022"}),
    "17-field-name-case.bib": ({"Upper2011", "Mixed2011"}, set(), set()),
    "18-crlf.bib": ({"doe2020crlf"}, set(), set()),
    "19-utf8-bom.bib": ({"bom2016"}, set(), set()),
    "21-latex-accents-math.bib": ({"garcia2019acc"}, set(), set()),
    "22-nested-braces-commands.bib": ({"secret2022"}, set(), set()),
    "23-percent-in-url.bib": ({"web2019pct"}, set(), set()),
    "24-unicode.bib": ({"Müller2020ü"}, set(), set()),
    "25-preamble.bib": ({"pre2010"}, set(), set()),
    "26-text-between-entries.bib": ({"free2012"}, set(), set()),
    "28-trailing-comma-variants.bib": ({"nocomma2017", "withcomma2017"}, set(), set()),
    "30-unbalanced-braces.bib": ({"after1996"}, {"unbal1996"}, set()),
    "31-existing-keywords-separators.bib": ({"worm2014kw", "tags2014kw"}, set(), set()),
    "32-no-final-newline.bib": ({"nonl2018"}, set(), set()),
    "33-idiosyncratic-formatting.bib": ({"spaced2010", "commafirst2010", "bibdesk2010"}, set(), set()),
    "34-multiline-abstract.bib": ({"multi2019"}, set(), set()),
    "36-biblatex-unknown-types.bib": ({"ctan2020", "tool2021", "child2021"}, set(), set()),
    "37-string-case-insensitive.bib": ({"case2019str"}, set(), set()),
    "38-empty-values.bib": (set(), set(), set()),
    "40-percent-in-value.bib": ({"pct2020"}, set(), set()),
    "42-indented-string-after-comment.bib": ({"indent2008"}, set(), set()),
}


def test_cases_copied_and_all_covered():
    files = sorted(p.name for p in CASES.glob("*.bib"))
    index_rows = re.findall(r"^\| (\S+\.bib) \|", (CASES / "INDEX.md").read_text("utf-8"), re.M)
    assert files == sorted(index_rows) == sorted(EXPECTED)
    assert (CASES / ".gitattributes").read_text().count("*.bib -text") == 1
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
    tagged, unreadable, warned = EXPECTED[name]
    pred = FakePredictor()
    r = check_roundtrip(text, pred)
    assert set(r.changed_keys) == tagged
    assert {p.key for p in r.problems if p.kind == UNREADABLE} == unreadable
    assert {p.key for p in r.problems if p.kind == WARNING} == warned
    assert {e.key for e in r.entries if e.status == "unreadable"} == unreadable
    assert {e.key for e in r.entries if e.status == "untouched"} == warned
    assert len(pred.calls) == (1 if tagged else 0)  # one batch per file, none when nothing to tag
    assert sorted(x["key"] for x in pred.items) == sorted(tagged)
    for p in r.problems:  # lines point at the entry's "@"
        assert text.split("\n")[p.line - 1].lstrip().startswith("@") and p.reason
    terms = assert_only_tags_changed(text, r.new_text)
    for key in tagged:  # every tagged entry got the predicted tags after the user's terms
        item = next(x for x in pred.items if x["key"] == key)
        assert [t for t in terms[key] if t.startswith(("modality:", "task:", "method:"))] == FakePredictor().expected(item)
    if not tagged:
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


def test_case_model_input_goes_through_the_one_normaliser():
    def items(name):
        p = FakePredictor()
        update_bib_text(read_case(name), p, facets=FACETS)
        return {x["key"]: x for x in p.items}

    x = items("21-latex-accents-math.bib")["garcia2019acc"]
    assert x["title"] == "Das Beispielverständnis: omega -Limits and N"
    assert x["abstract"] == "We show alpha le beta for Čech-type examples; see ."
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


def test_model_text_is_text_normalize_of_the_resolved_value():
    # the bib package has no LaTeX decoder of its own: what the model reads is normalize()
    src = r"Garc{\'\i}a: {\em Deep} \emph{{BERT}} nets, $\alpha$-tests \cite{k}, 50\%~of A--B"
    text = "@misc{m, title = {T}, abstract = {%s}}\n" % src
    p = FakePredictor()
    update_bib_text(text, p, facets=FACETS)
    assert p.items[0]["abstract"] == textmod.normalize(src) == "García: Deep BERT nets, alpha -tests , 50% of A–B"
    import tagger.bib as pkg
    import pkgutil
    for mod in pkgutil.iter_modules(pkg.__path__):
        src_text = (CASES.parents[1] / "tagger" / "bib" / f"{mod.name}.py").read_text()
        assert "latex_to_text" not in src_text and "_ACCENTS" not in src_text, mod.name


def test_jats_abstract_bytes_unchanged_and_model_text_normalised():
    from conftest import shared_path

    path = shared_path("bib", "cases-2", "05-jats-markup-in-bib-abstract.bib")
    text = path.read_bytes().decode("utf-8")
    p = FakePredictor()
    r = check_roundtrip(text, p)
    assert len(r.changed_keys) == len(p.items) == 2
    raw = [f.value for e in parse(text).entries for f in e.fields if f.key == "abstract"]
    assert [x["abstract"] for x in p.items] == [textmod.normalize(v[1:-1]) for v in raw]


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



KINDS = {  # kind of each UNSAFE group
    "missing comma between fields": UNREADABLE, "stray closing brace": UNREADABLE, 'unescaped "': UNREADABLE,
    "entry inside @comment": UNREADABLE, "phantom @word{ / @word (": UNREADABLE, "duplicate key": WARNING,
    "duplicate field": WARNING, "% comment inside entry": WARNING, "ambiguous backslash": UNREADABLE,
}


@pytest.mark.parametrize("kind,text", [(k, t) for k, ts in UNSAFE.items() for t in ts])
def test_unsafe_kind_untouched_and_reported(kind, text):
    full = text + GOOD
    p = FakePredictor()
    r = update_bib_text(full, p, facets=FACETS)
    bad = [pr for pr in r.problems if pr.key.lower() == "bad1"]
    assert bad and {pr.kind for pr in bad} == {KINDS[kind]}, r.problems
    assert r.changed_keys == ["good9"]
    # everything but the good entry is byte-identical
    assert r.new_text[: len(text)] == text
    assert r.new_text[len(text) :] == GOOD.replace("entry.}}", "entry.}, keywords = {modality:text, task:entry}}")
    assert all(x["key"] == "good9" for x in p.items)


def test_phantom_and_comment_reasons_name_the_broken_block():
    r = update_bib_text(UNSAFE["phantom @word{ / @word ("][0] + GOOD, FakePredictor(), facets=FACETS)
    assert [(p.line, p.key, p.kind) for p in r.problems] == [(1, "bad0", UNREADABLE), (3, "bad1", UNREADABLE)]
    assert r.problems[1].reason.startswith("phantom entry: this `@` line is inside a value of the broken entry at line 1")
    r = update_bib_text(UNSAFE["entry inside @comment"][0] + GOOD, FakePredictor(), facets=FACETS)
    assert [p.key for p in r.problems] == ["@comment", "bad1"]
    assert "inside the broken @comment{...} at line 1" in r.problems[1].reason


def test_readable_oddities_are_warnings_and_still_tagged():
    text = ("@misc{,\n  abstract = {An entry without key.},\n}\n\n"
            "@ARTICLE{Di Rocco2025,\n  abstract = {A key with a space.},\n}\n")
    r = update_bib_text(text, FakePredictor(), facets=FACETS)
    assert [(p.line, p.key, p.kind) for p in r.problems] == [(1, "-", WARNING), (5, "Di Rocco2025", WARNING)]
    assert "empty key" in r.problems[0].reason and "key contains spaces" in r.problems[1].reason
    assert [e.status for e in r.entries] == ["tagged", "tagged"]
    assert_only_tags_changed(text, r.new_text)
    two = text.replace("Di Rocco2025", "")  # two empty keys: not duplicates of each other
    assert [e.status for e in update_bib_text(two, FakePredictor(), facets=FACETS).entries] == ["tagged", "tagged"]


def test_percent_line_with_another_fault_is_unreadable():
    text = "@article{bad1,\n  % title = {x},\n  title = {a}\n  abstract = {Some entry.},\n}\n" + GOOD
    r = update_bib_text(text, FakePredictor(), facets=FACETS)
    assert [(p.key, p.kind) for p in r.problems] == [("bad1", UNREADABLE)]
    assert "missing comma between fields" in r.problems[0].reason


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
    pat = r",?\s*keywords = \{modality:text, task:entry\}"
    assert re.sub(pat, "", r.new_text) == re.sub(pat, "", full)
    assert update_bib_text(r.new_text, FakePredictor(), facets=FACETS).new_text == r.new_text
    assert update_bib_text(r.new_text, nothing, facets=FACETS).new_text == full


def test_backslash_ambiguity_not_recovered_when_readings_differ():
    # `\{` counts as a brace for BibTeX but not with escapes: the readings differ -> unreadable
    text = "@misc{bs1, note = {C:\\\\}, file = {a\\{b}, abstract = {Some entry.}}\n" + GOOD
    r = update_bib_text(text, FakePredictor(), facets=FACETS)
    assert [(p.key, p.kind) for p in r.problems] == [("bs1", UNREADABLE)] and r.changed_keys == ["good9"]


def test_duplicate_key_reports_both_lines_bounded():
    r = update_bib_text(read_case("15-duplicate-entry-key.bib"), FakePredictor(), facets=FACETS)
    assert [(p.line, p.key, p.kind) for p in r.problems] == [(1, "dup2022", WARNING), (8, "dup2022", WARNING)]
    assert all("duplicate key" in p.reason for p in r.problems)
    many = "".join("@misc{k, abstract = {x}}\n" for _ in range(50))
    r = update_bib_text(many, FakePredictor(), facets=FACETS)
    assert len(r.problems) == 50 and r.problems[0].reason == "duplicate key (also at line 2, 3, 4 and 46 more); left untouched"


def test_blocks_not_recognised_by_the_parser_are_reported():
    text = "@article\n{hidden1, abstract = {Some entry.}}\n"
    r = update_bib_text(text, FakePredictor(), facets=FACETS)
    assert r.new_text == text and [(p.line, p.key, p.kind) for p in r.problems] == [(1, "hidden1", UNREADABLE)]


def test_unparsable_file_left_untouched(monkeypatch):
    def boom(*a, **k):
        raise RuntimeError("parser bug")

    monkeypatch.setattr(bibtexparser, "parse_string", boom)
    r = update_bib_text("@misc{a, abstract={x}}", FakePredictor(), facets=FACETS)
    assert r.new_text == "@misc{a, abstract={x}}" and r.problems[0][:3] == (1, "-", UNREADABLE)
    assert "parser bug" in r.problems[0].reason


def test_unverifiable_edit_is_dropped(monkeypatch):
    text = "@misc{a, abstract = {one entry}}\n@misc{b, abstract = {two}}\n"
    real = edit.parse_blocks
    calls = []

    def flaky(t):
        calls.append(t)
        located = real(t)
        if len(calls) == 1:  # the first verification parse: pretend entry a came back different
            b0, s, e = located[0]
            b0._raw = b0.raw + " "
        return located

    monkeypatch.setattr(edit, "parse_blocks", flaky)
    r = update_bib_text(text, FakePredictor(), facets=FACETS)
    assert r.changed_keys == ["b"]
    assert r.new_text == text.replace("{two}}", "{two}, keywords = {modality:text}}")
    assert [(p.line, p.key, p.kind) for p in r.problems] == [(1, "a", UNREADABLE)]
    assert [e.status for e in r.entries] == ["unreadable", "tagged"]


def test_bibtexparser_logging_does_not_reach_stderr(capsys):
    update_bib_text(read_case("04-percent-comment-inside-entry.bib"), FakePredictor(), facets=FACETS)
    update_bib_text(read_case("14-backslash-paths.bib"), FakePredictor(), facets=FACETS)
    captured = capsys.readouterr()
    assert captured.err == "" and captured.out == ""
    assert logging.getLogger("bibtexparser").propagate is True


def test_abstained_entry_loses_its_tool_terms():
    text = "@misc{a, abstract = {Please abstain here.}, keywords = {user, method:old}}\n"
    r = update_bib_text(text, FakePredictor(), facets=FACETS)
    assert r.new_text == text.replace("user, method:old", "user")
    assert [(e.status, e.removed) for e in r.entries] == [("abstained", ["method:old"])]
    assert update_bib_text(text, abstain, facets=FACETS).entries[0].status == "abstained"


def test_every_block_inside_a_broken_block_is_reported():
    # the extent of a failed block is followed to where its braces close; blocks in it are reported
    text = ("@comment{\n@article{a, abstract = {An entry.}}\n@string{s = {x}}\n@article{b, abstract = {An entry.}}\n}\n"
            + GOOD)
    r = update_bib_text(text, FakePredictor(), facets=FACETS)
    assert [(p.line, p.key) for p in r.problems] == [(1, "@comment"), (2, "a"), (3, "@string"), (4, "b")]
    assert r.problems[0].reason == "@comment{...} not closed before line 2"
    assert r.changed_keys == ["good9"]
    # a brace that never closes hides nothing: reading resumes, every later entry is tagged
    text = "@article{u, title = {Taylor {{\\&} Francis}, year = 1}\n" + "".join(
        f"@misc{{e{i}, abstract = {{An entry.}}}}\n" for i in range(30))
    r = update_bib_text(text, FakePredictor(), facets=FACETS)
    assert [p.key for p in r.problems] == ["u"] and len(r.changed_keys) == 30
