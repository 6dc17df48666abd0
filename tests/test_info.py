"""`tagger info`: the model card, --model DIR as the other commands have it, and a model this
tagger refuses described by its manifest, then the reason in one line (exit 2)."""

import json

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings, strategies as st

from tagger.cli import cli
from tagger.model.modeldir import space_words

from conftest import ROOT

SHIPPED = ROOT / "models"
MANIFEST = json.loads((SHIPPED / "manifest.json").read_text(encoding="utf-8"))
RETRAIN = "please retrain with `tagger train`"


def info(*args, env=None):
    return CliRunner().invoke(cli, ["info", *map(str, args)], env=env)


def old_model(tmp_path, name="old", card=True, **changes):
    """A model directory of the shipped manifest with ``changes`` (no other model file: the
    manifest's checks refuse it first)."""
    d = tmp_path / name
    d.mkdir()
    (d / "manifest.json").write_text(json.dumps({**MANIFEST, **changes}), encoding="utf-8")
    if card:
        (d / "README.md").write_text("# Model card: an old one\n", encoding="utf-8")
    return d


def _head(d, fmt):
    n = len(MANIFEST["labels"])
    return (f"{d}: {n} labels (taxonomy {MANIFEST['taxonomy_name']}), trained {MANIFEST['created']} on "
            f"{MANIFEST['corpus_size']} abstracts, model format {fmt}, built by tagger {MANIFEST['versions']['tagger']}, "
            f"{MANIFEST['n_features']} TF-IDF terms{space_words(MANIFEST)}")


def test_model_option_names_the_model_as_directory_does(monkeypatch):
    card = (SHIPPED / "README.md").read_text(encoding="utf-8")
    for args in (["--model", SHIPPED], [SHIPPED], [SHIPPED, "--model", SHIPPED]):
        r = info(*args)
        assert (r.exit_code, r.stdout, r.stderr) == (0, card, "")
    assert info(env={"TAGGER_MODEL": str(SHIPPED)}).stdout == card


def test_model_option_wins_over_the_environment(tmp_path):
    old = old_model(tmp_path)
    r = info("--model", SHIPPED, env={"TAGGER_MODEL": str(old)})
    assert r.exit_code == 0 and r.stdout.startswith("# Model card: ml-abstracts\n")
    assert info(env={"TAGGER_MODEL": str(old)}).exit_code == 2


def test_two_different_models_named_is_one_line(tmp_path):
    old = old_model(tmp_path)
    r = info(old, "--model", SHIPPED)
    assert (r.exit_code, r.stdout) == (2, "")
    assert r.stderr == f"tagger: error: two models named: DIRECTORY {old} and --model {SHIPPED}; name one\n"


def test_old_format_prints_the_manifest_then_the_reason(tmp_path):
    old = old_model(tmp_path, format_version=0)
    for args in ([old], ["--model", old]):
        r = info(*args)
        assert r.exit_code == 2
        figs = {k: v["f1_micro"] for k, v in MANIFEST["figures"]["out_of_fold"].items()}
        assert r.stdout == f"{_head(old, 0)}\nout-of-fold figures: {json.dumps(figs)}\n"
        assert r.stderr == f"tagger: error: {old}: model format 0, but this tagger reads format 1: {RETRAIN}\n"


@pytest.mark.parametrize("changes, reason", [
    ({"parameters": {"stage2": True}}, "the model uses the label-dependency second stage (stage2), whose code was "
                                       "removed from this tagger"),
    ({"feature_version": {"normaliser": -1}}, "model built with feature version ("),
])
def test_a_removed_option_or_other_features_prints_the_manifest_then_the_reason(tmp_path, changes, reason):
    d = old_model(tmp_path, card=False, **changes)
    r = info("--model", d)
    assert r.exit_code == 2 and r.stdout.splitlines()[0] == _head(d, 1)
    assert r.stderr.startswith(f"tagger: error: {d}: {reason}") and r.stderr.endswith(f"{RETRAIN}\n")
    assert r.stderr.count("\n") == 1


def test_no_manifest_is_the_reason_alone(tmp_path):
    for d, why in [(tmp_path / "none", "not a tagger model directory (no manifest.json)"),
                   (old_model(tmp_path, "list"), "unreadable manifest")]:
        if why.startswith("unreadable"):
            (d / "manifest.json").write_text("[1, 2", encoding="utf-8")
        r = info("--model", d)
        assert (r.exit_code, r.stdout) == (2, "") and why in r.stderr and r.stderr.count("\n") == 1


def test_a_usable_model_without_a_card_prints_its_manifest(tmp_path):
    d = tmp_path / "nocard"
    d.mkdir()
    for p in SHIPPED.iterdir():  # the shipped model's files, without README.md
        if p.name != "README.md":
            (d / p.name).symlink_to(p)
    r = info("--model", d)
    assert r.exit_code == 0 and r.stderr == ""
    lines = r.stdout.splitlines()
    assert lines[0] == _head(d, 1) and lines[1].startswith('out-of-fold figures: {"all": ')
    assert lines[2] == f"no model card; write one with `tagger evaluate --card {d}`" and len(lines) == 3


_ODD = st.one_of(st.none(), st.integers(), st.text(max_size=5), st.lists(st.integers(), max_size=3),
                 st.dictionaries(st.text(max_size=3), st.one_of(st.none(), st.integers(), st.dictionaries(
                     st.text(max_size=3), st.integers(), max_size=2)), max_size=2))


_NESTED = st.one_of(_ODD, st.fixed_dictionaries({"tagger": _ODD}),
                    st.fixed_dictionaries({"out_of_fold": st.one_of(_ODD, st.dictionaries(
                        st.text(max_size=3), st.one_of(_ODD, st.fixed_dictionaries({"f1_micro": _ODD})), max_size=2))}))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(fields=st.dictionaries(st.sampled_from(["labels", "taxonomy_name", "created", "corpus_size", "versions",
                                               "figures", "space", "n_features"]), _NESTED, min_size=1))
def test_an_odd_old_manifest_never_crashes(tmp_path_factory, fields):
    d = old_model(tmp_path_factory.mktemp("odd"), format_version=0, **fields)
    r = info("--model", d)
    assert r.exit_code == 2 and (r.exception is None or isinstance(r.exception, SystemExit)), r.output
    assert r.stdout.startswith(f"{d}: ") and "model format 0" in r.stdout.splitlines()[0]
    assert r.stderr == f"tagger: error: {d}: model format 0, but this tagger reads format 1: {RETRAIN}\n"


def test_space_words_say_kind_weight_and_learners():
    """What `info`, `train` and the model card say of a model's text space (an old manifest's:
    weight 1, trees reading it; a damaged one's fields as they are)."""
    sp = {"k": 256, "kind": "ppmi", "sha256": "02da7193640f67d5", "location": "package"}
    assert space_words({}) == "" and space_words({"space": "ppmi"}) == ""
    assert space_words({"space": sp}) == " and text space ppmi 02da7193640f (256 components, weight 1, linear base and trees)"
    assert space_words({"space": {**sp, "weight": 0.5, "in_trees": False}}) == (
        " and text space ppmi 02da7193640f (256 components, weight 0.5, linear base only)")
    assert space_words({"space": {**sp, "weight": "x", "in_trees": True}}).endswith("(256 components, weight 'x', "
                                                                                    "linear base and trees)")


def test_refresh_card_replaces_a_size_line_that_names_a_space():
    """A card whose size line names a text space is refreshed like one without (the line found
    by its TF-IDF terms and trees, whatever sits between)."""
    from tagger.model.modeldir import card_header, refresh_card

    sp = {"k": 8, "kind": "ppmi", "sha256": "ab" * 32, "weight": 0.5, "in_trees": False}
    old = {**MANIFEST, "space": sp, "n_trees": 7}
    card = "# Model card: x\n\n" + "\n".join(card_header(old)) + "\n\n## Figures\n"
    assert "TF-IDF terms and text space ppmi abababababab (8 components, weight 0.5, linear base only), 7 trees" in card
    new = refresh_card(card, {**old, "n_trees": 9, "space": {**sp, "weight": 0.25}})
    assert ", 9 trees; versions: " in new.splitlines()[3] and "(8 components, weight 0.25, linear base only)" in new
    assert "7 trees" not in new and new.endswith("\n\n## Figures\n")
