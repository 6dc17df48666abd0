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
    old59 = json.loads(json.dumps(dict(old, documents=59)))
    old59["tagger"]["all"]["all"]["documents"] = 59
    (tmp_path / "old59.json").write_text(json.dumps(old59))
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
                                    ["--space", "none"], ["--first", "10"], ["--no-bib-eval"], ["--test", "x.jsonl"],
                                    ["--no-space-trees"], ["--model", "m"]])
def test_options_that_shape_a_run_are_refused_with_figures(run, option):
    r = figures("--figures", run["dir"] / "e.json", *option)
    assert r.exit_code == 2 and r.output == (f"tagger: error: {option[0]} shapes a run; --figures "
                                             "reads the figures of one already run\n"), r.output


def test_a_missing_figures_file_is_one_line(tmp_path):
    r = figures("--figures", tmp_path / "no.json")
    assert r.exit_code == 2 and r.output.startswith(f"tagger: error: --figures {tmp_path / 'no.json'}: cannot read it")


def mutated(run, tmp_path, change, name="x.json"):
    res = json.loads(json.dumps(run["json"]))
    change(res)
    p = tmp_path / name
    p.write_text(json.dumps(res))
    return p


@pytest.mark.parametrize("change, says", [
    (lambda r: r["tagger"]["per_label"][0].update(label=3), "a per-label row without its label"),
    (lambda r: r["tagger"]["per_label"].append(5), "a per-label row without its label"),
    (lambda r: r["tagger"]["all"]["all"].update(f1_micro="0.5"),
     "tagger.all.all.f1_micro is '0.5', not a rate in [0, 1]"),
    (lambda r: r["tagger"]["all"]["all"].update(f1_micro=7.5), "tagger.all.all.f1_micro is 7.5, not a rate"),
    (lambda r: r["tagger"]["per_label"][0].update(f1="high"), "f1 is 'high', not a rate in [0, 1]"),
    (lambda r: r.update(documents=True), "documents is True, not a positive count"),
    (lambda r: r.update(documents=7), "the whole corpus's figures do not count its documents"),
    (lambda r: r.update(folds="two"), "folds is 'two', not a count of 2 or more"),
    (lambda r: r.update(space="ppmi"), "space is 'ppmi', not a recorded text space"),
])
def test_figures_of_the_wrong_shape_are_one_line_and_touch_nothing(run, tmp_path, change, says):
    bad = mutated(run, tmp_path, change)
    (tmp_path / "o.tsv").write_text("OLD\n")
    r = figures("--figures", bad, "--per-label", tmp_path / "o.tsv", "--card", run["dir"] / "m")
    assert r.exit_code == 2 and r.output.count("\n") == 1, r.output
    assert r.output.startswith(f"tagger: error: --figures {bad}: not the figures `tagger evaluate --json` writes (")
    assert says in r.output
    assert (tmp_path / "o.tsv").read_text() == "OLD\n"
    assert (run["dir"] / "m" / "README.md").read_text() == run["card"]


@pytest.mark.parametrize("change", [
    lambda r: r["tagger"].update(threshold_curves="x"),
    lambda r: r["tagger"].update(uniform="x"),
    lambda r: r["tagger"]["all"]["all"].pop("precision@3"),
    lambda r: r.update(learning_curve="x"),
])
def test_figures_that_cannot_be_rendered_touch_no_file(run, tmp_path, change):
    bad = mutated(run, tmp_path, change)
    for f in ("o.json", "o.tsv", "o.html"):
        (tmp_path / f).write_text("OLD\n")
    r = figures("--figures", bad, "--json", tmp_path / "o.json", "--per-label", tmp_path / "o.tsv",
                "--html", tmp_path / "o.html", "--card", run["dir"] / "m")
    assert r.exit_code == 2 and r.output.count("\n") == 1, r.output
    assert r.output.startswith(f"tagger: error: --figures {bad}: figures that cannot be rendered (")
    assert all((tmp_path / f).read_text() == "OLD\n" for f in ("o.json", "o.tsv", "o.html"))
    assert (run["dir"] / "m" / "README.md").read_text() == run["card"]


@pytest.mark.parametrize("text", ['{"documents": NaN}', '{"a": Infinity}', "[" * 100_000 + "]" * 100_000])
def test_nan_and_deep_nesting_are_not_json_figures(tmp_path, text):
    (tmp_path / "f.json").write_text(text)
    r = figures("--figures", tmp_path / "f.json")
    assert r.exit_code == 2 and r.output.startswith(f"tagger: error: --figures {tmp_path / 'f.json'}: not JSON")


def test_an_empty_figures_name_is_refused_not_a_run(run):
    r = figures("--figures", "", "--corpus", run["corpus"])
    assert r.exit_code == 2 and r.output == ("tagger: error: --corpus shapes a run; --figures reads the figures "
                                             "of one already run\n")
    r = figures("--figures", "")
    assert r.exit_code == 2 and r.output.startswith("tagger: error: --figures: empty file name")


@pytest.mark.parametrize("out", ["--json", "--html", "--per-label"])
def test_an_output_naming_the_figures_file_is_refused(run, tmp_path, out):
    f = tmp_path / "e.json"
    f.write_text(json.dumps(run["json"]))
    r = figures("--figures", f, out, f)
    assert r.exit_code == 2 and r.output.startswith(f"tagger: error: --figures and {out} name the same file {f}")
    assert json.loads(f.read_text()) == run["json"]


def test_two_outputs_naming_one_file_are_refused(run, tmp_path):
    r = figures("--figures", run["dir"] / "e.json", "--json", tmp_path / "x", "--html", tmp_path / "x")
    assert r.exit_code == 2 and r.output == f"tagger: error: --json and --html name the same file {tmp_path / 'x'}\n"
    assert not (tmp_path / "x").exists()


def test_gzipped_figures_are_read_and_the_page_names_the_corpus(run, tmp_path):
    r = figures("--figures", run["dir"] / "e.json", "--json", tmp_path / "e.json.gz", "--html", tmp_path / "p.html")
    assert r.exit_code == 0, r.output
    assert run["json"]["source"] == "c.jsonl"
    assert "<title>tagger evaluation: c.jsonl</title>" in (tmp_path / "p.html").read_text()
    r = figures("--figures", tmp_path / "e.json.gz", "--per-label", tmp_path / "p.tsv")
    assert r.exit_code == 0, r.output
    assert (tmp_path / "p.tsv").read_text() == run["tsv"]


def test_test_file_figures_are_read_back_but_make_no_card(run, tmp_path):
    d = run["dir"]
    rows = [json.loads(x) for x in run["corpus"].read_text().splitlines()][:12]
    test = tmp_path / "t.jsonl"
    test.write_text("".join(json.dumps({"id": r["id"], "abstract": r["abstract"], "labels": r["labels"][:1]}) + "\n"
                            for r in rows))
    r = figures("--test", test, "--model", d / "m", "--no-bib-eval", "--json", tmp_path / "t.json")
    assert r.exit_code == 0, r.output
    r = figures("--figures", tmp_path / "t.json", "--per-label", tmp_path / "t.tsv")
    assert r.exit_code == 0, r.output
    assert (tmp_path / "t.tsv").read_text().count("\n") == 1 + len(json.loads((tmp_path / "t.json").read_text())[
        "tagger"]["per_label"])
    r = figures("--figures", tmp_path / "t.json", "--card", d / "m")
    assert r.exit_code == 2 and "these are figures on a test file; a card from them is written by" in r.output


def test_another_taxonomy_is_named_by_its_labels(run, tmp_path):
    bad = mutated(run, tmp_path, lambda r: r["tagger"]["per_label"][0].update(label="modality:telepathy"))
    r = figures("--figures", bad)
    first = run["json"]["tagger"]["per_label"][0]["label"]
    assert r.exit_code == 2 and (f"(no figures for {first}; figures for unknown modality:telepathy)"
                                 in r.output), r.output


def test_a_closed_pipe_loses_only_the_report(run, tmp_path):
    """The files are written before the report: a reader that went away costs nothing else."""
    import subprocess
    import sys

    code = ("import sys; from tagger.cli import main; sys.argv = ['tagger', 'evaluate', '--figures', sys.argv[1], "
            "'--per-label', sys.argv[2]]; main()")
    p = subprocess.run(f"{sys.executable} -c \"{code}\" {run['dir'] / 'e.json'} {tmp_path / 'p.tsv'} | head -c 10",
                       shell=True, capture_output=True, text=True)
    assert p.returncode == 0 and p.stdout == "The tagger" and p.stderr == ""
    assert (tmp_path / "p.tsv").read_text() == run["tsv"]


def test_a_file_that_cannot_be_written_costs_neither_the_others_nor_the_report(run, tmp_path, monkeypatch):
    from tagger.writers import target

    real = target.Target.__enter__

    def enter(self):
        if str(self.path).endswith(".html"):
            raise target.OutputError(f"{self.path}: cannot write: No space left on device")
        return real(self)

    monkeypatch.setattr(target.Target, "__enter__", enter)
    r = figures("--figures", run["dir"] / "e.json", "--html", tmp_path / "p.html", "--per-label", tmp_path / "p.tsv")
    assert r.exit_code == 2
    assert r.stdout == run["stdout"].split("evaluation page written")[0]
    assert r.stderr == f"tagger: error: {tmp_path / 'p.html'}: cannot write: No space left on device\n"
    assert (tmp_path / "p.tsv").read_text() == run["tsv"] and not (tmp_path / "p.html").exists()
