"""`tagger evaluate --figures FILE`: the report, card, page and per-label table made anew
from a cross-validation's --json, without running it again."""

import json

import pytest
from click.testing import CliRunner

from tagger.cli import cli
from tagger.model.space_build import build_space

from test_space import pool, small_records


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """A 60-row corpus, a small PPMI space, a model trained with it, and one 2-fold
    cross-validation with the same settings writing --json, --card, --html and --per-label."""
    d = tmp_path_factory.mktemp("saved")
    corpus = d / "c.jsonl"
    corpus.write_text("".join(json.dumps({**r, "annotator": "t"}) + "\n" for r in small_records(60)))
    sp = d / "sp"
    build_space(pool(), k=8, kind="ppmi", min_df=2).save(sp)
    sp_opts = ["--space", str(sp), "--space-weight", "0.5", "--no-space-trees"]
    r = CliRunner().invoke(cli, ["train", "--corpus", str(corpus), "--rounds", "3", "--folds", "0",
                                 "--out", str(d / "m"), *sp_opts])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(cli, ["evaluate", "--corpus", str(corpus), "--no-bib-eval", "--folds", "2", *sp_opts,
                                 "--json", str(d / "e.json"), "--card", str(d / "m"), "--html", str(d / "e.html"),
                                 "--per-label", str(d / "p.tsv")])
    assert r.exit_code == 0, r.output
    return {"dir": d, "corpus": corpus, "space": sp, "sp_opts": sp_opts, "stdout": r.stdout,
            "card": (d / "m" / "README.md").read_text(), "tsv": (d / "p.tsv").read_text(),
            "json": json.loads((d / "e.json").read_text())}


def figures(*args):
    return CliRunner().invoke(cli, ["evaluate", *map(str, args)])


def test_the_json_records_its_corpus_and_taxonomy(run):
    from tagger.corpus import load_corpus
    from tagger.model.training import corpus_hash
    from tagger.resources import taxonomy_path
    from tagger.taxonomy import load_taxonomy

    res = run["json"]
    assert res["corpus_sha256"] == corpus_hash(load_corpus(str(run["corpus"])))
    assert res["taxonomy_fingerprint"] == load_taxonomy(taxonomy_path(None)).fingerprint()
    manifest = json.loads((run["dir"] / "m" / "manifest.json").read_text())
    assert res["corpus_sha256"] == manifest["corpus_sha256"]


def test_card_report_and_table_from_figures_are_those_of_the_run(run, tmp_path):
    d = run["dir"]
    card = d / "m" / "README.md"
    card.write_text("# stale card\n")
    r = figures("--figures", d / "e.json", "--card", d / "m", "--per-label", tmp_path / "p.tsv",
                "--html", tmp_path / "e.html", "--json", tmp_path / "e.json")
    assert r.exit_code == 0, r.output
    assert r.stderr == ""  # the figures name their corpus: no warning
    assert card.read_text() == run["card"]
    assert (tmp_path / "p.tsv").read_text() == run["tsv"]
    assert json.loads((tmp_path / "e.json").read_text()) == run["json"]
    report = run["stdout"].split("evaluation page written")[0]
    assert report.startswith("The tagger read text space ppmi") and "== whole corpus: 60 documents" in report
    assert r.stdout == report + f"evaluation page written to {tmp_path / 'e.html'}\nmodel card written to {card}\n"
    assert "the tagger reading text space ppmi" in (tmp_path / "e.html").read_text()


def test_figures_of_another_space_setting_or_corpus_are_refused(run, tmp_path):
    d = run["dir"]
    before = (d / "m" / "README.md").read_text()
    other = dict(run["json"], space=None)
    (tmp_path / "none.json").write_text(json.dumps(other))
    r = figures("--figures", tmp_path / "none.json", "--card", d / "m")
    assert r.exit_code == 2
    assert r.output.startswith(f"tagger: error: --figures {tmp_path / 'none.json'}: the figures are of a model "
                               "reading no text space, but ") and r.output.count("\n") == 1, r.output
    (tmp_path / "c.json").write_text(json.dumps(dict(run["json"], corpus_sha256="ab" * 32)))
    r = figures("--figures", tmp_path / "c.json", "--card", d / "m")
    assert r.exit_code == 2 and "the figures are of another corpus (sha256 abababababab)" in r.output
    assert (d / "m" / "README.md").read_text() == before


def test_figures_without_a_corpus_hash_are_checked_by_count(run, tmp_path):
    d = run["dir"]
    old = {k: v for k, v in run["json"].items() if k not in ("corpus_sha256", "taxonomy_fingerprint")}
    (tmp_path / "old.json").write_text(json.dumps(old))
    r = figures("--figures", tmp_path / "old.json", "--card", d / "m")
    assert r.exit_code == 0, r.output
    assert r.stderr == (f"tagger: warning: --figures {tmp_path / 'old.json'} does not record its corpus's sha256 "
                        "(an older tagger wrote it); checked by its document count (60) only\n")
    assert (d / "m" / "README.md").read_text() == run["card"]
    (tmp_path / "old59.json").write_text(json.dumps(dict(old, documents=59)))
    r = figures("--figures", tmp_path / "old59.json", "--card", d / "m")
    assert r.exit_code == 2 and r.output == (f"tagger: error: --figures {tmp_path / 'old59.json'}: the figures are "
                                             f"of 59 documents, but {d / 'm'} was trained on 60\n")


@pytest.mark.parametrize("content, says", [
    ("{not json", "not JSON"),
    ("[1, 2]", "not the figures `tagger evaluate --json` writes"),
    ('{"tagger": {"all": {}}, "documents": 3}', "not the figures `tagger evaluate --json` writes"),
])
def test_a_file_that_is_not_figures_is_one_line(tmp_path, content, says):
    (tmp_path / "f.json").write_text(content)
    r = figures("--figures", tmp_path / "f.json")
    assert r.exit_code == 2 and r.output.startswith(f"tagger: error: --figures {tmp_path / 'f.json'}: {says}")
    assert r.output.count("\n") == 1, r.output


def test_figures_of_another_taxonomy_are_refused(run, tmp_path):
    res = json.loads(json.dumps(run["json"]))
    res["tagger"]["per_label"] = res["tagger"]["per_label"][1:]
    (tmp_path / "t.json").write_text(json.dumps(res))
    r = figures("--figures", tmp_path / "t.json")
    assert r.exit_code == 2 and "these figures are of another taxonomy" in r.output, r.output
    (tmp_path / "fp.json").write_text(json.dumps(dict(run["json"], taxonomy_fingerprint="0" * 64)))
    r = figures("--figures", tmp_path / "fp.json")
    assert r.exit_code == 2 and "these figures are of another taxonomy" in r.output, r.output


@pytest.mark.parametrize("option", [["--baseline"], ["--seed", "3"], ["--folds", "3"], ["--jobs", "2"],
                                    ["--space", "none"], ["--first", "10"], ["--no-bib-eval"], ["--test", "x.jsonl"]])
def test_options_that_shape_a_run_are_refused_with_figures(run, option):
    r = figures("--figures", run["dir"] / "e.json", *option)
    assert r.exit_code == 2 and r.output == (f"tagger: error: {option[0]} shapes a cross-validation; --figures "
                                             "reads the figures of one already run\n"), r.output


def test_a_missing_figures_file_is_one_line(tmp_path):
    r = figures("--figures", tmp_path / "no.json")
    assert r.exit_code == 2 and r.output.startswith(f"tagger: error: --figures {tmp_path / 'no.json'}: cannot read it")
