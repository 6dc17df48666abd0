"""Recovery after broken entries (../shared/bib/cases-2, copied into tests/bib_cases_2), the
real bibliographies of ../shared/bib/real and real-2, and random entries."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tagger.bib import update_bib_text
from tagger.bib.read import UNREADABLE
from tagger.bib.run import MAX_LINE, decode
from tagger.text import normalize

from bibtools import (
    CASES2,
    FACETS,
    SHARED,
    FakePredictor,
    assert_only_tags_changed,
    call,
    check_roundtrip,
    entries_by_key,
    is_tool,
    nothing,
    parse,
    problem_lines,
    read_case,
    split_terms,
    summary_of,
)


def test_cases_2_copied_as_the_readme_allows():
    files = sorted(p.name for p in CASES2.iterdir() if p.name not in (".gitattributes",))
    rows = re.findall(r"^\| (\S+\.(?:bib|py))\b", (CASES2 / "README.md").read_text("utf-8"), re.M)
    # every case but 05 (a real Crossref abstract: read from ../shared only) is here
    assert sorted([r for r in rows if not r.startswith("05-")] + ["README.md"]) == files
    shared = SHARED / "bib" / "cases-2"
    if shared.is_dir():
        for name in files:
            assert (CASES2 / name).read_bytes() == (shared / name).read_bytes(), name
    assert (CASES2 / "09-utf16le-bib-latin1-hint.bib").read_bytes().startswith(b"\xff\xfe%\x00")


@pytest.mark.parametrize("name,broken,tagged", [
    ("01-unclosed-brace-swallows-rest.bib", ("broken2009", 1), ["fine2015", "fine2016"]),
    ("01b-missing-entry-closing-brace.bib", ("unclosed2020", 1), ["fine2015"]),
])
def test_broken_entry_reported_once_and_the_rest_tagged(name, broken, tagged):
    text = read_case(name, CASES2)
    r = check_roundtrip(text)
    assert r.changed_keys == tagged
    assert [(p.key, p.line, p.kind) for p in r.problems] == [(*broken, UNREADABLE)]
    assert [e.status for e in r.entries] == ["unreadable"] + ["tagged"] * len(tagged)


def test_broken_entry_reasons_name_the_place():
    r = update_bib_text(read_case("01-unclosed-brace-swallows-rest.bib", CASES2), FakePredictor(), facets=FACETS)
    assert r.problems[0].reason == ("unbalanced braces: a `{` in `publisher` (line 3) is never closed; "
                                    "reading resumes at line 7")
    r = update_bib_text(read_case("01b-missing-entry-closing-brace.bib", CASES2), FakePredictor(), facets=FACETS)
    assert r.problems[0].reason == "the entry is never closed (no `}` before line 5)"


def test_check_and_write_fail_on_the_broken_entry(tmp_path):
    f = tmp_path / "refs.bib"
    data = (CASES2 / "01-unclosed-brace-swallows-rest.bib").read_bytes()
    f.write_bytes(data)
    rc, out, err = call([f], check=True)
    assert rc == 2 and f.read_bytes() == data
    assert out == (f"{f}:7: fine2015: tags missing: +modality:text\n"
                   f"{f}:13: fine2016: tags missing: +modality:text\n")
    assert problem_lines(err) == [f"{f}:1: broken2009: unreadable: unbalanced braces: a `{{` in "
                                  f"`publisher` (line 3) is never closed; reading resumes at line 7"]
    rc, out, err = call([f])  # everything safe is done, and the run still fails
    assert rc == 2 and out == f"Fixing {f}\n" and f.read_bytes().count(b"keywords = {modality:text}") == 2
    assert call([f], check=True)[0] == 2 and call([f], check=True, allow_unreadable=True)[:2] == (0, "")


@pytest.fixture(scope="module")
def perf_files(tmp_path_factory):
    """The generator's 3,000-entry file with 40 broken entries, and without."""
    out = {}
    for n in (40, 0):
        d = tmp_path_factory.mktemp(f"perf{n}")
        subprocess.run([sys.executable, str(CASES2 / "11-perf-many-unclosed-braces.py"), str(n)], cwd=d, check=True)
        out[n] = d / "perf.bib"
    return out


def test_many_broken_entries_one_bounded_line_each(perf_files):
    rc, out, err = call([perf_files[40]], check=True)
    lines = problem_lines(err)
    assert rc == 2 and out == ""
    assert len(lines) == 40 and all(len(ln) <= MAX_LINE + max(0, len(str(perf_files[40])) - 80) for ln in lines)
    assert len(err) < 40 * 200 + 200
    keys = [ln.split(": ")[1] for ln in lines]
    assert keys == [f"broken{75 * i}" for i in range(40)]
    assert summary_of(err) == ("3040 entries: 0 tagged, 0 updated, 0 unchanged, 3000 without abstract, "
                               "0 abstained, 40 unreadable, 0 warnings")
    rc, out, err = call([perf_files[0]], check=True)
    assert (rc, out, problem_lines(err)) == (0, "", [])


# --------------------------------------------------------------------------------------
# Real bibliographies of ../shared/bib/real and real-2
# --------------------------------------------------------------------------------------

REAL_FILES = sorted((SHARED / "bib" / "real").glob("*.bib")) + sorted((SHARED / "bib" / "real-2").glob("*.bib"))


@pytest.mark.skipif(not REAL_FILES, reason=f"shared real .bib files not found under {SHARED} (set TAGGER_SHARED)")
@pytest.mark.parametrize("path", REAL_FILES, ids=lambda p: f"{p.parent.name}/{p.name[:40]}")
def test_real_file(path, tmp_path):
    data = path.read_bytes()
    text, codec = decode(data, None)
    pred = FakePredictor(rules=[("reinforcement", "task:rl"), ("language", "modality:language")])
    r = update_bib_text(text, pred, facets=FACETS)
    assert len(pred.calls) <= 1
    # every readable entry with a non-blank abstract was tagged
    entries = [getattr(b, "ignore_error_block", None) or b for b in parse(text).blocks]
    with_abstract = [
        e.key for e in entries if hasattr(e, "fields")
        and any(f.key.lower() == "abstract" and normalize(f.value.strip('{}"')) for f in e.fields)
    ]
    skipped = {p.key for p in r.problems if "left untouched" in p.reason or p.kind == UNREADABLE}
    assert sorted(k or "-" for k in r.changed_keys) == sorted(k or "-" for k in with_abstract if (k or "-") not in skipped)
    # bytes outside the tag fields identical; re-parse equal apart from the tags
    terms = assert_only_tags_changed(text, r.new_text)
    old = entries_by_key(text)
    for key, ts in terms.items():
        kw = [f.value for f in old[key].fields if f.key.lower() == "keywords"]
        user = [t for t in split_terms(kw[0]) if t and not is_tool(t)] if kw else []
        ts = [t for t in ts if t]  # empty terms (ScienceDirect's `a, b, , , `) stay where they were
        assert ts[: len(user)] == user and all(is_tool(t) for t in ts[len(user):])
        assert ts[len(user):][0] == "modality:text"
    # through run(): written, second run no change, check passes or names unreadable entries
    f = tmp_path / path.name
    f.write_bytes(data)
    unreadable = [p for p in r.problems if p.kind == UNREADABLE]
    rc, out, err = call([f], predict=pred)
    assert rc == (2 if unreadable else 1 if r.changed_keys else 0)
    assert f.read_bytes() == r.new_text.encode(codec)
    rc, out, err = call([f], predict=pred)
    assert (rc, out) == (2 if unreadable else 0, "")
    rc, out, err = call([f], predict=pred, check=True)
    assert (rc, out) == (2 if unreadable else 0, "")
    assert [ln for ln in problem_lines(err) if "unreadable" in ln] == [
        f"{f}:{p.line}: {p.key}: unreadable: {p.reason}" for p in unreadable]
    assert update_bib_text(r.new_text, nothing, facets=FACETS).new_text == text or any(
        is_tool(t) for e in old.values() for fl in e.fields if fl.key.lower() == "keywords" for t in split_terms(fl.value)
    )


def test_real_2_is_covered():
    if not (SHARED / "bib" / "real-2").is_dir():
        pytest.skip(f"needs {SHARED}/bib/real-2")
    names = {p.name for p in REAL_FILES}
    assert "jabref__tiny-LE-withBOM.bib" in names and "wilson008__scopus.bib" in names and len(REAL_FILES) >= 20


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
        names = draw(st.lists(st.sampled_from(["title", "author", "year", "journal", "note", "abstract", "keywords",
                                               "tagger"]), unique=True, min_size=1, max_size=7))
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
                                               st.just("task:entry"), st.just("method:user-term")), max_size=4))
                sep = draw(st.sampled_from([", ", ",", "; ", ";", " ; ", "," + nl + "    "]))
                value = sep.join(user)
            elif name == "tagger":
                value = ", ".join(draw(st.lists(st.sampled_from(["+method:rnn", "-modality:text", "+venue:journal",
                                                                 "-task:entry", "+method:rnm"]), max_size=3)))
            elif name == "abstract":
                value = draw(st.one_of(words, st.just(""), st.just("  ")))
            elif name == "year":
                value = str(draw(st.integers(1900, 2030)))
            else:
                value = draw(words)
            d = delim_style if delim_style != "mixed" else draw(st.sampled_from(["{}", '""']))
            rendered = value if name == "year" and draw(st.booleans()) else d[0] + value + d[1]
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
    assert [p for p in r.problems if p.kind == UNREADABLE] == []
    assert len(pred.calls) <= 1
    new_terms = assert_only_tags_changed(text, r.new_text)
    corrected = "tagger" in text.lower()
    for item in pred.items:  # without corrections the tool terms are exactly the prediction
        if item["key"] in new_terms and not corrected:
            assert [t for t in new_terms[item["key"]] if is_tool(t)] == (pred.expected(item) or [])
    if "\r\n" in text:  # line endings of the file are kept: a CRLF file gets no bare LF
        assert r.new_text.count("\n") == r.new_text.count("\r\n")


BROKEN = [  # entries that cannot be read, of the kinds real files have
    "@article{brokenX,{nl}  publisher = {Taylor {{\\&} Francis},{nl}  abstract = {An example entry.},{nl}}{nl}",
    "@article{brokenX,{nl}  title = {A closing brace deleted by hand},{nl}  abstract = {An entry.}{nl}",
    "@article{brokenX,{nl}  title = {Foo}{nl}  abstract = {An example entry.},{nl}}{nl}",
    '@article{brokenX,{nl}  title = "The "Best" Paper",{nl}  abstract = {An entry.},{nl}}{nl}',
]


def _entry_starts(text):
    return [m.end() - 1 for m in re.finditer(r"(?m)(?:^|\ufeff)@", text)]


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(bib_files(), st.sampled_from(BROKEN), st.integers(0, 10))
def test_property_a_broken_entry_changes_nothing_else(text, broken, where):
    # the result with a broken entry inserted is the result without it, with its bytes inserted
    nl = "\r\n" if "\r\n" in text else "\n"
    k = where % len(_entry_starts(text))
    at = _entry_starts(text)[k]
    bad = broken.replace("{nl}", nl)
    clean = update_bib_text(text, FakePredictor(), facets=FACETS)
    r = update_bib_text(text[:at] + bad + text[at:], FakePredictor(), facets=FACETS)
    at_new = _entry_starts(clean.new_text)[k]
    assert r.new_text == clean.new_text[:at_new] + bad + clean.new_text[at_new:]
    assert [(p.key, p.kind) for p in r.problems if p.kind == UNREADABLE] == [("brokenX", UNREADABLE)]
    assert [(e.key, e.status, e.added, e.removed) for e in r.entries if e.key != "brokenX"] == [
        (e.key, e.status, e.added, e.removed) for e in clean.entries]
