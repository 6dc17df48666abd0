"""`tagger bib` through the CLI with the shipped model, and the pre-commit hooks end to end."""

import os
import shutil
import subprocess
import sys

import pytest
from click.testing import CliRunner

from tagger.cli import cli

from conftest import ROOT

BIB = """% my reading list
@Article{Hu2022,
  Title    = {{LoRA}: Low-Rank Adaptation of Large Language Models},
  Abstract = {We propose low-rank adaptation, which freezes the pretrained weights of a large
              language model and injects trainable rank decomposition matrices into each layer
              of the Transformer architecture, greatly reducing the number of trainable
              parameters for downstream tasks. On GPT-3, LoRA matches fine-tuning quality
              on several benchmarks while training far fewer parameters.},
  Keywords = {to read; NLP},
  Year     = {2022}
}

@misc{noabstract, title = {Just a title}}
"""


def test_bib_writes_merges_and_is_idempotent(tmp_path):
    p = tmp_path / "refs.bib"
    p.write_bytes(BIB.encode())
    r = CliRunner().invoke(cli, ["bib", "--check", str(p)])
    assert r.exit_code == 1 and f"{p}:2: Hu2022: tags missing: +modality:text " in r.output
    assert (f"{p}: 2 entries: 1 tagged, 0 updated, 0 unchanged, 1 without abstract, 0 abstained, 0 unreadable, "
            f"0 warnings") in r.output
    assert p.read_bytes() == BIB.encode()
    r = CliRunner().invoke(cli, ["bib", str(p)])
    assert r.exit_code == 1 and f"Fixing {p}" in r.output
    new = p.read_text()
    line = next(x for x in new.splitlines() if x.strip().startswith("Keywords"))
    assert line.startswith("  Keywords = {to read; NLP; ")
    assert "method:fine-tuning" in line and "modality:text" in line
    assert new.replace(line + "\n", "") == BIB.replace("  Keywords = {to read; NLP},\n", "")
    assert CliRunner().invoke(cli, ["bib", str(p)]).exit_code == 0
    assert CliRunner().invoke(cli, ["bib", "--check", str(p)]).exit_code == 0
    assert p.read_text() == new


def test_bib_non_utf8_is_exit_2_and_untouched(tmp_path):
    p = tmp_path / "l.bib"
    data = BIB.replace("large\n", "large caf\u00e9\n").encode("latin-1")
    p.write_bytes(data)
    r = CliRunner().invoke(cli, ["bib", str(p)])
    assert r.exit_code == 2 and "not valid UTF-8" in r.output and p.read_bytes() == data
    r = CliRunner().invoke(cli, ["bib", "--encoding", "latin-1", str(p)])
    assert r.exit_code == 1
    assert "caf\u00e9".encode("latin-1") in p.read_bytes() and b"method:fine-tuning" in p.read_bytes()


def test_bib_corrections_unreadable_and_field_tagger(tmp_path):
    p = tmp_path / "refs.bib"
    fixed = BIB.replace("  Year     = {2022}\n", "  Year     = {2022},\n  Tagger   = {-method:fine-tuning, +method:rnn}\n")
    p.write_text(fixed)
    assert CliRunner().invoke(cli, ["bib", str(p)]).exit_code == 1
    line = next(x for x in p.read_text().splitlines() if x.strip().startswith("Keywords"))
    assert "method:rnn" in line and "method:fine-tuning" not in line and "Tagger   = {-method" in p.read_text()
    assert CliRunner().invoke(cli, ["bib", "--check", str(p)]).exit_code == 0
    r = CliRunner().invoke(cli, ["bib", "--field", "Tagger", str(p)])
    assert r.exit_code == 2 and r.output.startswith("tagger: error: --field tagger: ") and r.output.count("\n") == 1
    broken = tmp_path / "broken.bibtex"
    broken.write_text("@article{bad,\n  publisher = {Taylor {{\\&} Francis},\n}\n\n" + BIB)
    r = CliRunner().invoke(cli, ["bib", "--check", str(broken)])
    assert r.exit_code == 2 and f"{broken}:1: bad: unreadable: unbalanced braces" in r.output
    assert f"{broken}:6: Hu2022: tags missing" in r.output
    assert CliRunner().invoke(cli, ["bib", "--allow-unreadable", str(broken)]).exit_code == 1
    assert CliRunner().invoke(cli, ["bib", "--check", "--allow-unreadable", str(broken)]).exit_code == 0
    assert CliRunner().invoke(cli, ["bib", "--check", "--allow-unreadable", "--strict", str(broken)]).exit_code == 2


def test_bib_stdin_writes_the_tagged_bibtex_to_stdout(tmp_path):
    p = tmp_path / "refs.bib"
    p.write_text(BIB)
    assert CliRunner().invoke(cli, ["bib", str(p)]).exit_code == 1
    r = CliRunner().invoke(cli, ["bib", "-"], input=BIB.encode())
    assert r.exit_code == 0 and r.stdout_bytes == p.read_bytes() and "method:fine-tuning" in r.stdout
    assert r.stderr == ("-: 2 entries: 1 tagged, 0 updated, 0 unchanged, 1 without abstract, 0 abstained, "
                        "0 unreadable, 0 warnings\n")
    r = CliRunner().invoke(cli, ["bib", "--check", "-"], input=BIB.encode())
    assert r.exit_code == 1 and r.stdout.startswith("-:2: Hu2022: tags missing: +modality:text ") and r.stdout.count("\n") == 1
    r = CliRunner().invoke(cli, ["bib", "--check", "--diff", "-"], input=BIB.encode())
    assert r.exit_code == 1 and "\n--- a/-\n+++ b/-\n" in r.stdout
    for args, why in [(["-", str(p)], "- (standard input) must be the only FILE: "),
                      (["-", "-"], "- (standard input) must be the only FILE: "),
                      (["--diff", "-"], "--diff with - (standard input): standard output holds the tagged BibTeX; "
                                        "use --check --diff")]:
        r = CliRunner().invoke(cli, ["bib", *args], input=BIB.encode())
        assert (r.exit_code, r.stdout) == (2, "") and r.stderr.startswith(f"tagger: error: {why}")
        assert r.stderr.count("\n") == 1


def test_hooks_pick_up_bib_bibtex_and_biblatex():
    import re

    import yaml

    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert [h["id"] for h in hooks] == ["tagger-bib", "tagger-bib-check"]
    for h in hooks:
        assert "types" not in h and h["require_serial"] is True  # identify maps only .bib to `bib`
        pat = re.compile(h["files"])
        assert all(pat.search(n) for n in ("refs.bib", "a/b.bibtex", "x.biblatex", "UP.BIB"))
        assert not any(pat.search(n) for n in ("refs.bib.orig", "bib.txt", "x.bbl"))


@pytest.mark.slow
def test_pre_commit_hooks_end_to_end(tmp_path):
    """`pre-commit try-repo` on this repository: the write hook fails with the file changed
    as expected, the check hook then passes."""
    pre_commit = shutil.which("pre-commit") or os.path.join(os.path.dirname(sys.executable), "pre-commit")
    if not os.path.exists(pre_commit):
        pytest.skip("pre-commit is not installed (pip install '.[test]')")
    if not (ROOT / ".git").exists():
        pytest.skip("try-repo needs this repository as a git checkout")
    repo = tmp_path / "biblio"
    repo.mkdir()
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "cache"), "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@e"}
    env.pop("TAGGER_MODEL", None)
    git = lambda *a: subprocess.run(["git", *a], cwd=repo, check=True, capture_output=True, env=env)  # noqa: E731
    git("init", "-q")
    (repo / "refs.bib").write_text(BIB)
    (repo / "more.bibtex").write_text(BIB.replace("Hu2022", "Hu2022b"))
    git("add", "refs.bib", "more.bibtex")

    def hook(hook_id, *files):
        return subprocess.run([pre_commit, "try-repo", str(ROOT), hook_id, "--files", *files],
                              cwd=repo, capture_output=True, text=True, env=env)

    r = hook("tagger-bib", "refs.bib", "more.bibtex")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "Fixing refs.bib" in r.stdout and "Fixing more.bibtex" in r.stdout and "Failed" in r.stdout
    text = (repo / "refs.bib").read_text()
    assert "Keywords = {to read; NLP; " in text and "method:fine-tuning" in text
    r = hook("tagger-bib-check", "refs.bib", "more.bibtex")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Passed" in r.stdout
    # an unreadable entry fails both hooks, and the hook output names it
    (repo / "broken.biblatex").write_text("@article{bad,\n  publisher = {Taylor {{\\&} Francis},\n}\n\n" + text)
    git("add", "broken.biblatex")
    r = hook("tagger-bib-check", "broken.biblatex")  # (the write hook exits 2 alike: test_bib_run.py)
    assert r.returncode == 1 and "Failed" in r.stdout and "exit code: 2" in r.stdout, r.stdout + r.stderr
    assert "broken.biblatex:1: bad: unreadable: unbalanced braces" in r.stdout
