"""Merging tags into keywords (only the taxonomy's label ids are the tool's), corrections in
a `tagger` field, and the layout of a new field."""

from __future__ import annotations

import re

import pytest

from tagger.bib import Vocabulary, update_bib_text
from tagger.bib.merge import apply_corrections, parse_corrections
from tagger.bib.read import WARNING

from bibtools import CASES2, FACETS, FakePredictor, assert_only_tags_changed, check_roundtrip, nothing, read_case


def kw_out(kw, tags, abstract="x", **extra):
    text = "@article{k,\n  abstract = {%s},\n  keywords = {%s},\n}\n" % (abstract, kw)
    r = update_bib_text(text, lambda items: [list(tags) for _ in items], facets=FACETS, **extra)
    m = re.search(r"keywords = \{(.*)\},\n", r.new_text, re.S)
    return (m.group(1) if m else None), r


@pytest.mark.parametrize(
    "kw,tags,expected",
    [
        ("a, b", ["method:cnn"], "a, b, method:cnn"),
        ("a,b", ["method:cnn", "task:x"], "a,b,task:x,method:cnn"),
        ("a; b", ["method:cnn"], "a; b; method:cnn"),
        ("a ; {b, c}", ["method:cnn"], "a ; {b, c} ; method:cnn"),
        ("only", ["method:cnn"], "only, method:cnn"),
        ("", ["method:cnn"], "method:cnn"),
        ("method:old, a, task:old, b", ["method:cnn"], "a, b, method:cnn"),  # stale removed, order fixed
        ("a, method:cnn", ["method:cnn"], "a, method:cnn"),  # already current
        ("a, method:old", [], "a"),  # nothing predicted: tool terms removed
        ("Zeta, other:thing, {method:kept}, Method:Case", ["task:t"], "Zeta, other:thing, {method:kept}, Method:Case, task:t"),
        ("a, b,", ["method:cnn"], "a, b, method:cnn,"),
        ("a,\n    b", ["method:cnn", "task:x"], "a,\n    b,\n    task:x,\n    method:cnn"),
        # facet-shaped terms that are no label ids are the user's, whatever their shape
        ("method:qualitative, method:Survey, evaluation:user-study, method:cnn", ["task:x"],
         "method:qualitative, method:Survey, evaluation:user-study, task:x"),
    ],
)
def test_merge_keeps_user_terms(kw, tags, expected):
    got, r = kw_out(kw, tags)
    assert got == expected
    assert r.new_text == "@article{k,\n  abstract = {x},\n  keywords = {%s},\n}\n" % expected
    again, r2 = kw_out(got, tags)
    assert again == got and r2.changed_keys == []


def test_case_04_user_colon_keywords_kept_with_the_real_taxonomy(taxonomy):
    facets = [(f.id, f.kind, [lb.id for lb in f.labels]) for f in taxonomy.facets]
    text = read_case("04-user-colon-keywords-deleted.bib", CASES2)
    r = update_bib_text(text, lambda items: [["modality:image", "method:cnn"] for _ in items], facets=facets)
    kws = re.findall(r"keywords = \{(.*)\}", r.new_text)
    assert kws == [
        "method:qualitative, evaluation:user-study, method:cnn-variants, status:read, modality:image, method:cnn",
        "Method: survey; method:Survey; METHOD:cnn; method:survey_2; method:x y; evaluation:; contribution:method-ish; "
        "modality:image; method:cnn",
    ]
    assert [(e.status, e.added, e.removed) for e in r.entries] == [
        ("updated", ["modality:image", "method:cnn"], ["modality:text"]),
        ("updated", ["modality:image", "method:cnn"], ["modality:audio"]),
    ]
    assert_only_tags_changed(text, r.new_text)


def test_terms_of_another_taxonomy_are_user_terms():
    text = "@article{k, abstract = {x}, keywords = {modality:text, mood:happy}}\n"
    other = [("mood", "multi", ["mood:sad"])]
    r = update_bib_text(text, lambda it: [["mood:sad"]], facets=other)
    assert r.new_text == text.replace("mood:happy}", "mood:happy, mood:sad}")


def test_tool_only_field_is_removed_when_nothing_is_predicted():
    text = "@article{k,\n  title = {t},\n  abstract = {x},\n  keywords = {method:a, task:b},\n}\n"
    r = update_bib_text(text, nothing, facets=FACETS)
    assert r.new_text == "@article{k,\n  title = {t},\n  abstract = {x},\n}\n"
    assert [(e.status, e.removed) for e in r.entries] == [("updated", ["task:b", "method:a"])]
    text = "@article{k, keywords = {method:a}, abstract = {x}}\n"  # first-field variant
    assert update_bib_text(text, nothing, facets=FACETS).new_text == "@article{k, abstract = {x}}\n"
    text = "@article{k, abstract = {x}, keywords = {}}\n"  # user keywords = {} stays
    assert update_bib_text(text, nothing, facets=FACETS).new_text == text


def test_entries_without_abstract_untouched_even_with_stale_tags():
    text = "@article{k, abstract = {  }, keywords = {method:a}}\n@misc{n, keywords = {task:b}}\n"
    p = FakePredictor()
    r = update_bib_text(text, p, facets=FACETS)
    assert r.new_text == text and p.calls == [] and r.stale == []
    assert [e.status for e in r.entries] == ["without abstract", "without abstract"]


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
    assert r.new_text == text.replace("{method:y; method:z}", "{task:c; method:b}")
    r = update_bib_text(text, nothing, facets=FACETS, field="tags")
    assert r.new_text == text.replace("  tags = {method:y; method:z},\n", "")
    # a field with anything but label ids in it (a user's keywords, an author list) is never replaced
    for name, value in (("tags", "{user-junk; method:z}"), ("keywords", "{user, method:a}"), ("author", "{Doe, Jane}")):
        t = "@article{k,\n  abstract = {x},\n  %s = %s,\n}\n" % (name, value)
        r = update_bib_text(t, lambda it: [["method:b"]], facets=FACETS, field=name)
        assert r.new_text == t and r.problems[0].kind == WARNING and "not the taxonomy's labels" in r.problems[0].reason
        assert r.entries[0].status == "untouched"
    text2 = "@article{k,\n  abstract = {x},\n}\n"
    r = update_bib_text(text2, lambda it: [["method:b"]], facets=FACETS, field="tags")
    assert r.new_text == "@article{k,\n  abstract = {x},\n  tags = {method:b},\n}\n"
    for bad in ("abstract", "TAGGER", "tagger"):
        with pytest.raises(ValueError):
            update_bib_text(text2, nothing, facets=FACETS, field=bad)


def test_predict_contract_violations_raise():
    text = "@misc{a, abstract = {x}}\n@misc{b, abstract = {y}}\n"
    with pytest.raises(ValueError, match="2 entries"):
        update_bib_text(text, lambda it: [["method:a"]], facets=FACETS)
    with pytest.raises(ValueError, match="label id"):
        update_bib_text(text, lambda it: [["unknown:a"], []], facets=FACETS)
    with pytest.raises(ValueError):
        update_bib_text(text, lambda it: ["method:a", []], facets=FACETS)


def test_duplicate_predicted_tags_written_once():
    text = "@misc{a, abstract = {x}}\n"
    r = update_bib_text(text, lambda it: [["method:a", "method:a", "task:b"]], facets=FACETS)
    assert r.new_text == "@misc{a, abstract = {x}, keywords = {task:b, method:a}}\n"


# --------------------------------------------------------------------------------------
# Corrections: the `tagger` field
# --------------------------------------------------------------------------------------

V = Vocabulary(FACETS)


@pytest.mark.parametrize("field,predicted,expected", [
    ("-modality:text, +method:rnn", ["modality:text", "task:entry"], ["task:entry", "method:rnn"]),
    ("+method:rnn;-task:entry +task:x", ["task:entry"], ["task:x", "method:rnn"]),
    ("+venue:journal", ["venue:conference", "method:a"], ["method:a", "venue:journal"]),  # exclusive: replaced
    ("-venue:conference", ["venue:conference"], []),
    ("{+method:rnn}", [], ["method:rnn"]),
    ("", ["method:a"], ["method:a"]),
])
def test_corrections_pin_and_veto(field, predicted, expected):
    corr = parse_corrections(field, V)
    assert corr.warnings == []
    assert apply_corrections(predicted, corr, V) == expected


def test_correction_warnings_name_the_closest_ids():
    corr = parse_corrections("+method:rnm, -modality:txt, method:a, +zzz, +method:a, -method:a, "
                             "+venue:journal, +venue:workshop", V)
    assert corr.pins == ["venue:journal"] and corr.vetoes == set()
    assert corr.warnings == [
        "unknown label `method:rnm` in the tagger field (closest: method:rnn); ignored",
        "unknown label `modality:txt` in the tagger field (closest: modality:text); ignored",
        "`method:a` in the tagger field has no sign (+method:a pins it, -method:a vetoes it); ignored",
        "unknown label `zzz` in the tagger field (no label id is close; see `tagger taxonomy show`); ignored",
        "`method:a` is both pinned and vetoed in the tagger field; ignored",
        "`venue:workshop` and `venue:journal` are both pinned in the exclusive facet venue; `venue:journal` is used",
    ]


def test_corrections_stick_across_runs():
    text = ("@article{k,\n  abstract = {An example entry.},\n  tagger = {-modality:example, +method:rnn},\n}\n"
            "@misc{noabs,\n  title = {No abstract},\n  Tagger = {+task:x},\n}\n"
            "@misc{plain,\n  title = {No abstract, no corrections},\n}\n")
    pred = FakePredictor()
    r = check_roundtrip(text, pred)
    assert r.new_text == text.replace(
        "+method:rnn},\n}", "+method:rnn},\n  keywords = {modality:text, task:entry, method:rnn},\n}").replace(
        "{+task:x},\n}", "{+task:x},\n  keywords = {task:x},\n}")
    assert [(e.key, e.status) for e in r.entries] == [("k", "tagged"), ("noabs", "tagged"), ("plain", "without abstract")]
    assert [x["key"] for x in pred.items] == ["k"]  # pins need no prediction
    # the user removes a tool tag by hand: the next run puts it back; a veto keeps it out
    removed = r.new_text.replace("{modality:text, task:entry, method:rnn}", "{task:entry, method:rnn}")
    assert update_bib_text(removed, FakePredictor(), facets=FACETS).new_text == r.new_text
    vetoed = removed.replace("-modality:example", "-modality:example, -modality:text")
    assert update_bib_text(vetoed, FakePredictor(), facets=FACETS).changed_keys == []
    # a pin holds even when the model abstains, and the entry then counts as tagged
    ab = "@misc{a, abstract = {abstain}, tagger = {+method:rnn}}\n"
    r = update_bib_text(ab, FakePredictor(), facets=FACETS)
    assert r.new_text == ab.replace("}}", "}, keywords = {method:rnn}}") and r.entries[0].status == "tagged"


def test_unknown_correction_is_a_warning_and_the_rest_applies():
    text = "@misc{a, abstract = {An entry.}, tagger = {+method:rnm, -modality:text}}\n"
    r = update_bib_text(text, FakePredictor(), facets=FACETS)
    assert [(p.key, p.kind) for p in r.problems] == [("a", WARNING)]
    assert "closest: method:rnn" in r.problems[0].reason
    assert r.new_text == text.replace("}}", "}, keywords = {task:entry}}")


def test_corrections_with_an_owned_field_and_unreadable_corrections():
    text = "@misc{a, abstract = {An entry.}, tagger = {+method:rnn}}\n"
    r = update_bib_text(text, FakePredictor(), facets=FACETS, field="tags")
    assert r.new_text == text.replace("}}", "}, tags = {modality:text, task:entry, method:rnn}}")
    macro = "@string{fix = {+method:rnn}}\n@misc{a, abstract = {An entry.}, tagger = fix}\n"
    r = update_bib_text(macro, FakePredictor(), facets=FACETS)
    assert r.new_text == macro and r.entries[0].status == "untouched" and "macro" in r.problems[0].reason


# --------------------------------------------------------------------------------------
# Layout: alignment and separator style
# --------------------------------------------------------------------------------------

def test_case_06_paperpile_alignment():
    text = read_case("06-paperpile-aligned-fields-misaligned-insert.bib", CASES2)
    r = check_roundtrip(text, FakePredictor(rules=[("benchmark", "method:cnn")]))
    assert '  year      =  1996,\n  keywords  = "modality:text, method:cnn"\n}' in r.new_text
    assert '  issn      = "2278-0181",\n  keywords  = "modality:text, method:cnn"\n}' in r.new_text


@pytest.mark.parametrize("body,expected", [
    # aligned `=`, a long name overflowing the column
    ("  author  = {a},\n  title   = {t},\n  journal-abbreviation = {j},\n  abstract = {x}",
     "  keywords = {modality:text}"),
    ("  author   = {a},\n  title    = {t},\n  abstract = {x}", "  keywords = {modality:text}"),
    ("  author     = {a},\n  title      = {t},\n  abstract   = {x}", "  keywords   = {modality:text}"),
    # not aligned: copied from the last field
    ("  author = {a},\n  title   = {t},\n  abstract  = {x}", "  keywords  = {modality:text}"),
])
def test_alignment_of_a_new_field(body, expected):
    text = "@article{k,\n%s\n}\n" % body
    out = update_bib_text(text, FakePredictor(rules=[]), facets=FACETS).new_text
    assert out == text.replace("\n}\n", ",\n%s\n}\n" % expected)


def test_new_field_uses_the_files_separator_style():
    other = "@misc{o1, keywords = {a; b}}\n@misc{o2, keywords = {c; d; e}}\n@misc{o3, keywords = {f, g}}\n"
    text = other + "@misc{new, abstract = {An example entry.}}\n@misc{one, abstract = {An entry.}, keywords = {solo}}\n"
    r = update_bib_text(text, FakePredictor(), facets=FACETS)
    assert r.new_text == text.replace("entry.}}", "entry.}, keywords = {modality:text; modality:example; task:entry}}"
                                      ).replace("{solo}", "{solo; modality:text; task:entry}")
    plain = "@misc{new, abstract = {An example entry.}}\n"
    assert "{modality:text, modality:example, task:entry}" in update_bib_text(plain, FakePredictor(), facets=FACETS).new_text
