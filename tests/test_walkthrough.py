"""README.md's walk-through, "Your own taxonomy in an afternoon": every command of it, in
order, in a scratch directory; `tagger annotate` through a pseudo-terminal, typing the tags of
examples/robotics/hand-tags.jsonl; the figures the README quotes checked against the run."""

import json
import os
import re
import shlex
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT
from terminal import CTRL_C, ENTER, Terminal

SECTION = "## Your own taxonomy in an afternoon"
ROBOTICS = ROOT / "examples" / "robotics"


def walkthrough():
    """``(sh lines, yaml text, prose)`` of the README section."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index(SECTION)
    section = text[start:text.index("\n## ", start + len(SECTION))]
    blocks = re.findall(r"```(sh|yaml)\n(.*?)```", section, re.S)
    lines = [ln for kind, body in blocks if kind == "sh" for ln in body.splitlines() if ln.strip()]
    yaml = [body for kind, body in blocks if kind == "yaml"]
    assert len(yaml) == 1
    return lines, yaml[0], section


def type_the_tags(args, cwd):
    """Run ``tagger annotate ARGS`` and tag every abstract with its hand tags."""
    from tagger.annotate.session import label_keys
    from tagger.taxonomy import load_taxonomy

    key_of = {lb: k for k, lb in label_keys(load_taxonomy(ROBOTICS / "taxonomy.yaml")).items()}
    tags = [json.loads(line) for line in open(ROBOTICS / "hand-tags.jsonl", encoding="utf-8")]
    t = Terminal(args, cwd)
    for n, row in enumerate(tags, 1):
        t.wait(f"[{n}/60] {row['id']} ")
        t.press(*[key_of[lb] for lb in row["labels"]], ENTER)
    t.wait("all 60 records are done")
    t.press(CTRL_C)
    assert t.finish() == 0
    assert "60 records tagged in this run, 60 in the file, 0 left in the pool" in t.output
    return tags


@pytest.mark.slow
def test_walkthrough(tmp_path):
    lines, yaml, prose = walkthrough()
    bindir = os.path.dirname(sys.executable)
    for tool in ("tagger", "pre-commit"):
        if not os.path.exists(os.path.join(bindir, tool)) and not shutil.which(tool):
            pytest.skip(f"the {tool} command is not installed in this environment (pip install '.[test]')")
    if not (ROOT / ".git").exists():
        pytest.skip("the hook step installs this repository from its git checkout, and this is none")
    rev = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
    work = tmp_path / "work"
    work.mkdir()
    (work / "examples").symlink_to(ROOT / "examples")
    env = {k: v for k, v in os.environ.items() if k not in ("TAGGER_MODEL", "TAGGER_TAXONOMY")}
    env.update(PATH=bindir + os.pathsep + env.get("PATH", ""), PRE_COMMIT_HOME=str(tmp_path / "pre-commit"),
               GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@e", GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@e")

    annotate = [i for i, ln in enumerate(lines) if ln.startswith("tagger annotate ")]
    assert len(annotate) == 1
    before, after = lines[:annotate[0]], lines[annotate[0] + 1:]

    def shell(cmds):
        """Run the lines in one bash, each one's output kept apart; the outputs."""
        script = ["set -e"] + [f"{{ {c} ; }} > {tmp_path}/out.{i} 2>&1" for i, c in enumerate(cmds)]
        r = subprocess.run(["bash", "-c", "\n".join(script)], cwd=work, env=env, capture_output=True, text=True)
        outs = [(tmp_path / f"out.{i}").read_text() if (tmp_path / f"out.{i}").exists() else "" for i in range(len(cmds))]
        assert r.returncode == 0, f"{r.stderr}\n" + "\n".join(f"$ {c}\n{o}" for c, o in zip(cmds, outs))
        return dict(zip(cmds, outs))

    out = shell(before)
    assert "examples/robotics/taxonomy.yaml: ok (3 facets, 14 labels)" in out[before[0]]

    tags = type_the_tags(shlex.split(lines[annotate[0]])[1:], work)
    corpus = [json.loads(line) for line in open(work / "robotics.jsonl", encoding="utf-8")]
    assert [(r["id"], r["labels"]) for r in corpus] == [(t["id"], t["labels"]) for t in tags]
    assert {r["annotator"] for r in corpus} == {"me"} and {r["licence"] for r in corpus} == {"CC0-1.0 (arXiv metadata)"}

    out = shell(after)
    get = lambda prefix: next(v for k, v in out.items() if k.startswith(prefix))  # noqa: E731
    assert "robotics.jsonl: ok (60 examples)" in get("tagger corpus check")
    assert "trained 14 labels on 60 abstracts" in get("tagger train")
    assert "\nThe tagger read text space ppmi " in get("tagger evaluate")  # the packaged one, by default
    report = next(p for p in get("tagger evaluate").split("\n\n")  # the whole corpus: a row per facet and system
                  if p.startswith("== whole corpus")).splitlines()
    rows = {ln.split()[0]: ln.split() for ln in report[2:] if len(ln.split()) > 2 and ln.split()[1] == "tagger"}
    figures = [f"{float(rows[f][2]):.3f}" for f in ("all", "platform", "task", "approach")]  # micro-F1
    assert f"micro-F1 {figures[0]} over all labels" in prose, figures
    assert f"platform {figures[1]}, task {figures[2]}, approach {figures[3]}" in prose, figures
    page = (work / "robotics-report.html").read_text(encoding="utf-8")
    assert f'data-fig="tagger/all/all/f1_micro">{figures[0]}<' in page and "task:navigation" in page
    blocks = get("tagger label").strip().split("\n\n")
    assert len(blocks) == 20 and blocks[0].splitlines()[0] == "arxiv:1401.5224"
    kept = [ln.split("\t") for ln in get("tagger filter").splitlines()]
    assert kept and all({"platform:aerial", "task:navigation"} & set(found.split(";")) for _, found in kept)
    bib = (work / "refs.bib").read_text()
    # the user's own keyword first, then the model's tags, in the separator style of the file
    assert re.search(r"keywords = \{to read[;,] platform:aerial[;,] ", bib) and bib.count("keywords = {") == 5
    assert re.search(r"tag \.bib entries \(tagger\)\.+Passed", out[after[-1]]), out[after[-1]]
    assert (work / "biblio" / "refs.bib").read_text() == bib  # already current: the hook changed nothing
    # the README's printf wrote the file it shows, with this clone's path and commit
    assert (work / ".pre-commit-config.yaml").read_text() == (
        yaml.replace("/path/of/this/clone", str(ROOT.resolve())).replace("0123456789abcdef0123456789abcdef01234567", rev))
