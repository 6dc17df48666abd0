import csv
import functools
import io
import json
import os
import shutil
import subprocess
import sys

import pytest
from click.testing import CliRunner
from hypothesis import given, settings, strategies as st

from tagger.cli import cli

from conftest import EXAMPLES, ROOT, write_jsonl

ABSTRACT = ("We fine-tune a large language model with LoRA adapters on instruction data and evaluate it "
            "on reasoning benchmarks, where it outperforms strong baselines by a wide margin.")


def run(*args, input=None):
    return CliRunner().invoke(cli, list(args), input=input)


def test_label_seed_file_text_output():
    r = run("label", str(EXAMPLES / "iclr-2026-abstracts.txt"), "-f", "text")
    assert r.exit_code == 0, r.output
    blocks = r.output.strip().split("\n\n")
    assert len(blocks) == 19
    assert [b.splitlines()[0] for b in blocks] == [f"iclr-2026-abstracts:{n}" for n in range(1, 20)]
    assert "ICLR 2026 Papers" not in r.output
    facet_lines = [[line.split(":")[0].strip() for line in b.splitlines()[1:]] for b in blocks]
    assert all(lines and set(lines) <= {"modality", "method", "evaluation", "contribution"} for lines in facet_lines)


def test_jsonl_keeps_fields_and_replaces_tags(tmp_path):
    p = write_jsonl(tmp_path / "in.jsonl", [
        {"id": "x1", "title": "LoRA", "abstract": ABSTRACT, "year": 2025, "tags": ["old"], "scores": {"old": 1}}])
    r = run("label", str(p), "-f", "jsonl")
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert list(out) == ["id", "title", "abstract", "year", "tags", "scores"]
    assert out["year"] == 2025 and "old" not in out["tags"]
    assert "method:fine-tuning" in out["tags"] and "modality:text" in out["tags"]
    assert set(out["scores"]) == set(out["tags"]) and all(0 < v <= 1 for v in out["scores"].values())


def test_output_formats_agree(tmp_path):
    p = write_jsonl(tmp_path / "in.jsonl", [{"id": "a", "abstract": ABSTRACT}, {"id": "b", "abstract": "Too short."}])
    js = json.loads(run("label", str(p), "-f", "json").output)
    tsv = run("label", str(p), "-f", "tsv").output.splitlines()
    pairs = [line.split("\t") for line in run("label", str(p), "-f", "pairs").output.splitlines()]
    assert [r["id"] for r in js] == ["a", "b"]
    assert tsv[0] == "a\t" + ";".join(js[0]["tags"]) and tsv[1] == "b\t"
    assert [p[1] for p in pairs if p[0] == "a"] == js[0]["tags"]
    assert ["b", "", ""] in pairs
    assert js[1]["tags"] == [] and js[1]["scores"] == {} and js[1]["reason"].startswith("too short")
    rows = list(csv.DictReader(io.StringIO(run("label", str(p), "-f", "csv").output)))
    assert rows[0]["tags"] == ";".join(js[0]["tags"]) and json.loads(rows[0]["scores"]) == js[0]["scores"]


def test_stdin_and_empty_input():
    r = run("label", "-", "--input-format", "jsonl", "-f", "jsonl", input=json.dumps({"abstract": ABSTRACT}) + "\n")
    assert r.exit_code == 0 and json.loads(r.output)["id"] == "stdin:1"
    r = run("label", "-f", "jsonl", input="")
    assert r.exit_code == 0 and r.stdout == "" and r.stderr == "tagger: no records read from standard input\n"
    r = run("label", "-f", "json", input="")
    assert r.exit_code == 0 and json.loads(r.stdout) == []


def test_facet_and_threshold_options(tmp_path):
    p = write_jsonl(tmp_path / "in.jsonl", [{"abstract": ABSTRACT}])
    only = json.loads(run("label", str(p), "-f", "jsonl", "--facet", "method").output)
    assert only["tags"] and all(t.startswith("method:") for t in only["tags"])
    low = json.loads(run("label", str(p), "-f", "jsonl", "--threshold", "0.01").output)
    high = json.loads(run("label", str(p), "-f", "jsonl", "--threshold", "0.99").output)
    assert len(low["tags"]) > len(high["tags"])
    assert all(v >= 0.01 for v in low["scores"].values())


@pytest.mark.parametrize("setup, args, message", [
    (None, ["nope.txt"], "nope.txt: no such file"),
    ("dir", ["d"], "d: is a directory"),
    ("binary", ["b.txt"], "b.txt:1: binary data"),
    ("latin1", ["l.txt"], "l.txt:1: not UTF-8 text"),
    ("badjson", ["j.jsonl"], "j.jsonl:2: invalid JSON"),
    ("numberabstract", ["n.jsonl"], "n.jsonl:2: record 2: 'abstract' must be a string, not int (1 record was written before it)"),
    ("numberabstract", ["n.jsonl", "-o", "kept.jsonl"],
     "n.jsonl:2: record 2: 'abstract' must be a string, not int (kept.jsonl left as it was; 1 record had been tagged before it)"),
    ("nofield", ["n.jsonl"], "n.jsonl: the field 'abstract' is in none of its 2 records (the fields there: 'text'); "
                             "name the field of abstracts with --text-field"),
    (None, ["x.txt", "--facet", "colour"], "unknown facet 'colour'"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, monkeypatch, setup, args, message):
    monkeypatch.chdir(tmp_path)
    if setup == "dir":
        os.mkdir("d")
    elif setup == "binary":
        open("b.txt", "wb").write(b"\x00\x01\x02abc")
    elif setup == "latin1":
        open("l.txt", "wb").write("café".encode("latin-1"))
    elif setup == "badjson":
        open("j.jsonl", "w").write(json.dumps({"abstract": ABSTRACT}) + "\n{oops\n")
    elif setup == "numberabstract":
        open("n.jsonl", "w").write(json.dumps({"abstract": ABSTRACT}) + "\n" + json.dumps({"abstract": 12345}) + "\n")
    elif setup == "nofield":
        open("n.jsonl", "w").write(json.dumps({"text": ABSTRACT}) + "\n" + json.dumps({"text": "x"}) + "\n")
    if "kept.jsonl" in args:
        open("kept.jsonl", "w").write("old\n")
    if "x.txt" in args:
        open("x.txt", "w").write(ABSTRACT)
    r = CliRunner().invoke(cli, ["label", "-f", "jsonl"] + args)
    assert r.exit_code == 2
    assert r.exception is None or isinstance(r.exception, SystemExit)
    err = [line for line in r.output.splitlines() if line.startswith("tagger: error:")]
    assert len(err) == 1 and message in err[0], r.output
    if "kept.jsonl" in args:
        assert open("kept.jsonl").read() == "old\n" and sorted(os.listdir(".")) == ["kept.jsonl", "n.jsonl"]


def test_on_error_skip_warns_and_counts(tmp_path):
    p = tmp_path / "n.jsonl"
    p.write_text(json.dumps({"abstract": ABSTRACT}) + "\n" + json.dumps({"abstract": {"x": 1}}) + "\n" + json.dumps({"abstract": ABSTRACT}) + "\n")
    r = run("label", str(p), "-f", "tsv", "--on-error", "skip")
    assert r.exit_code == 0
    assert [line.split("\t")[0] for line in r.output.splitlines() if line.startswith("n:")] == ["n:1", "n:3"]
    assert "n.jsonl:2: record 2: 'abstract' must be a string, not dict; skipped" in r.output
    assert "1 bad record skipped, 2 written" in r.output


def test_output_file_is_atomic(tmp_path):
    good = write_jsonl(tmp_path / "g.jsonl", [{"abstract": ABSTRACT}])
    bad = tmp_path / "b.jsonl"
    bad.write_text(json.dumps({"abstract": ABSTRACT}) + "\n{bad\n")
    out = tmp_path / "out.jsonl"
    assert run("label", str(good), "-o", str(out)).exit_code == 0
    before = out.read_bytes()
    assert json.loads(before)["tags"]
    assert run("label", str(bad), "-o", str(out)).exit_code == 2
    assert out.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.jsonl", "g.jsonl", "out.jsonl"]


def test_taxonomy_and_corpus_commands(tmp_path):
    r = run("taxonomy", "show")
    assert r.exit_code == 0 and "modality:text" in r.output and "contribution:tool" in r.output
    r = run("taxonomy", "check", str(ROOT / "taxonomy.yaml"))
    assert r.exit_code == 0 and "ok (4 facets, 40 labels)" in r.output
    bad = tmp_path / "t.yaml"
    bad.write_text("facets:\n  - id: a\n    labels:\n      - id: b:c\n")
    r = run("taxonomy", "check", str(bad))
    assert r.exit_code == 2 and f"{bad}:4: label id 'b:c' does not start with its facet 'a:'" in r.output
    c = write_jsonl(tmp_path / "c.jsonl", [{"id": "1", "abstract": "x", "labels": ["modality:nope"], "annotator": "me"}])
    r = run("corpus", "check", str(c))
    assert r.exit_code == 1 and "unknown label 'modality:nope'" in r.output
    r = run("corpus", "check", "--labels-only", str(ROOT / "fixtures" / "corpus.jsonl"))
    assert r.exit_code == 0 and "ok (" in r.output
    good = {"id": "1", "abstract": "x", "labels": ["modality:text"], "annotator": "me", "sample": "uniform",
            "source": "arxiv-2025-uniform.jsonl.gz", "licence": "CC0-1.0", "year": 2025}
    rows = [good, {**good, "id": "2", "abstract": "y", "year": "2025", "sample": "random"}]
    c = write_jsonl(tmp_path / "p.jsonl", rows)
    r = run("corpus", "check", "--provenance", str(c))
    assert r.exit_code == 1, r.output
    assert r.output.splitlines()[:2] == [f"{c}:2: 2: 'year' must be an integer, not '2025'",
                                         f"{c}:2: 2: 'sample' is 'random', not one of seed, uniform, "
                                         "rare-label-search, older-uniform, active, field-uniform"]
    r = run("corpus", "check", "--labels-only", str(c))
    assert r.exit_code == 0 and "ok (2 examples)" in r.output
    r = run("corpus", "check", str(c))  # a corpus of one's own: labels only
    assert r.exit_code == 0 and "ok (2 examples)" in r.output
    (tmp_path / "fixtures").mkdir()
    c = write_jsonl(tmp_path / "fixtures" / "corpus.jsonl", [{k: v for k, v in x.items() if k != "licence"} for x in rows])
    r = run("corpus", "check", str(c))  # the project's corpus: its rules apply
    assert r.exit_code == 1 and f"{c}:1: 1: no 'licence' (the text's licence)" in r.output


def test_model_and_taxonomy_from_environment(tmp_path, monkeypatch, small_model_dir):
    p = write_jsonl(tmp_path / "in.jsonl", [{"abstract": ABSTRACT}])
    monkeypatch.setenv("TAGGER_MODEL", str(tmp_path / "missing"))
    r = run("label", str(p))
    assert r.exit_code == 2 and "not a tagger model directory" in r.output
    monkeypatch.setenv("TAGGER_MODEL", str(small_model_dir))
    assert run("label", str(p), "-f", "jsonl").exit_code == 0
    other = tmp_path / "t.yaml"
    other.write_text("facets:\n  - id: a\n    labels:\n      - id: a:b\n")
    r = run("label", str(p), "--taxonomy", str(other))
    assert r.exit_code == 2 and "trained for another taxonomy" in r.output and "retrain" in r.output


def _modules_after(code):
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    return set(out.stdout.split())


def test_label_imports_neither_sklearn_nor_nltk(tmp_path):
    p = tmp_path / "one.txt"
    p.write_text(ABSTRACT + "\n")
    mods = _modules_after(
        "import sys\nfrom tagger.cli import main\n"
        f"try:\n    main(['label', {str(p)!r}, '-f', 'jsonl'])\nexcept SystemExit:\n    pass\n"
        "print(' '.join(sys.modules))")
    assert "tagger.model" in mods and "numpy" in mods
    assert not {m for m in mods if m.split(".")[0] in ("sklearn", "nltk", "lightgbm", "scipy", "joblib")}
    assert not {"tagger.model.training", "tagger.model.modeldir", "tagger.evaluation"} & mods  # inference only


def test_help_imports_no_heavy_library():
    mods = _modules_after(
        "import sys\nfrom tagger.cli import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "print(' '.join(sys.modules))")
    assert not {m for m in mods if m.split(".")[0] in ("sklearn", "nltk", "lightgbm", "scipy", "numpy", "joblib")}


def test_installed_command_in_a_real_subprocess(tmp_path):
    exe = shutil.which("tagger") or os.path.join(os.path.dirname(sys.executable), "tagger")
    if not os.path.exists(exe):
        pytest.skip("the tagger console script is not installed in this environment (pip install .)")
    r = subprocess.run([exe, "label", str(EXAMPLES / "iclr-2026-abstracts.txt"), "-f", "tsv"],
                       capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    rows = r.stdout.splitlines()
    assert len(rows) == 19 and all(row.split("\t")[1] for row in rows)
    r = subprocess.run([exe, "label", "missing.txt"], capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 2 and r.stderr.strip() == "tagger: error: missing.txt: no such file"


def test_filter_trusts_carried_tags_and_follows_grep(tmp_path):
    p = write_jsonl(tmp_path / "t.jsonl", [
        {"id": "a", "abstract": "x", "tags": ["modality:image", "method:cnn"], "scores": {"modality:image": 0.9, "method:cnn": 0.6}},
        {"id": "b", "abstract": "x", "tags": ["modality:image"], "scores": {"modality:image": 0.55}},
        {"id": "c", "abstract": "x", "tags": ["modality:text"], "scores": {"modality:text": 0.8}},
    ])
    ids = lambda r: [line.split("\t")[0] for line in r.output.splitlines()]  # noqa: E731
    r = run("filter", "modality:image and not method:cnn", str(p), "-f", "tsv")
    assert r.exit_code == 0 and ids(r) == ["b"]
    r = run("filter", "-v", "modality:image and not method:cnn", str(p), "-f", "tsv")
    assert r.exit_code == 0 and ids(r) == ["a", "c"]
    r = run("filter", "-c", "modality:*", str(p))
    assert r.exit_code == 0 and r.output == "3\n"
    r = run("filter", "--min-score", "0.6", "modality:image", str(p), "-f", "tsv")
    assert ids(r) == ["a"]
    r = run("filter", "modality:audio", str(p), "-f", "jsonl")
    assert r.exit_code == 1 and r.output == ""
    r = run("filter", "modality:imag", str(p))
    assert r.exit_code == 2 and "did you mean modality:image?" in r.output


def test_filter_tags_untagged_records_on_the_fly(tmp_path):
    p = write_jsonl(tmp_path / "u.jsonl", [{"id": "a", "abstract": ABSTRACT}])
    r = run("filter", "method:fine-tuning", str(p), "-f", "jsonl")
    assert r.exit_code == 0 and "method:fine-tuning" in json.loads(r.output)["tags"]
    q = write_jsonl(tmp_path / "q.jsonl", [{"id": "a", "abstract": ABSTRACT, "tags": []}])
    assert run("filter", "method:fine-tuning", str(q)).exit_code == 1
    assert run("filter", "--retag", "method:fine-tuning", str(q)).exit_code == 0


def test_train_never_replaces_what_is_not_a_model(tmp_path, monkeypatch):
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "notes.txt").write_text("keep")
    (tmp_path / "afile").write_text("keep")
    for out in (str(precious), str(tmp_path / "afile"), "."):
        monkeypatch.chdir(tmp_path)
        r = run("train", "--corpus", str(ROOT / "fixtures" / "corpus.jsonl"), "--out", out)
        assert r.exit_code == 2 and "tagger: error:" in r.output, r.output
    assert (precious / "notes.txt").read_text() == "keep" and (tmp_path / "afile").read_text() == "keep"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile", "precious"]


def test_output_file_mode_and_bad_targets(tmp_path):
    good = write_jsonl(tmp_path / "g.jsonl", [{"abstract": ABSTRACT}])
    old = os.umask(0o022)
    try:
        assert run("label", str(good), "-o", str(tmp_path / "o.jsonl")).exit_code == 0
    finally:
        os.umask(old)
    assert (tmp_path / "o.jsonl").stat().st_mode & 0o777 == 0o644
    os.chmod(tmp_path / "o.jsonl", 0o640)
    assert run("label", str(good), "-o", str(tmp_path / "o.jsonl")).exit_code == 0
    assert (tmp_path / "o.jsonl").stat().st_mode & 0o777 == 0o640
    r = run("label", str(good), "-o", str(tmp_path))
    assert r.exit_code == 2 and "is a directory" in r.output
    r = run("label", str(good), "-o", str(tmp_path / "missing" / "x.jsonl"))
    assert r.exit_code == 2 and "no such directory" in r.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.jsonl", "o.jsonl"]
    assert run("label", str(good), "-o", str(tmp_path / "o.csv")).exit_code == 0
    assert (tmp_path / "o.csv").read_text().startswith("id,tags,scores\n")


def test_on_error_skip_skips_lines_that_are_not_records(tmp_path):
    p = tmp_path / "b.jsonl"
    p.write_text(json.dumps({"id": "ok", "abstract": ABSTRACT}) + "\n{bad\n[1, 2]\n")
    r = run("label", str(p), "-f", "tsv", "--on-error", "skip")
    assert r.exit_code == 0 and r.output.count("skipped") >= 2
    assert "b.jsonl:2: invalid JSON" in r.output and "b.jsonl:3: expected a JSON object, found array" in r.output


#: JSON values that are not objects, and what the bad-record message calls them
SCALARS = [(5, "number"), (3.5, "number"), (-0.0, "number"), (True, "boolean"), (False, "boolean"),
           (None, "null"), ("x", "string"), ([1, {"abstract": "a"}], "array")]


@functools.lru_cache(maxsize=None)
def _tags_of(abstract):
    r = run("label", "-", "--input-format", "jsonl", "-f", "jsonl", input=json.dumps({"abstract": abstract}) + "\n")
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)["tags"]


@pytest.mark.parametrize("value, kind", SCALARS)
@pytest.mark.parametrize("fmt", ["json", "jsonl"])
@pytest.mark.parametrize("command", [["label", "-f", "jsonl"], ["label", "-f", "jsonl", "--jobs", "2"],
                                     ["filter", "not modality:image", "-f", "jsonl"]])
@pytest.mark.parametrize("stdin", [False, True])
def test_a_record_that_is_not_an_object_is_a_bad_record(tmp_path, value, kind, fmt, command, stdin):
    """A number, boolean, null, string or array where a record should be: the one-line bad-record
    error (exit 2) naming the file, line and JSON kind; skipped with --on-error skip, the good
    records around it tagged and written."""
    good = [{"id": "g1", "abstract": ABSTRACT}, {"id": "g2", "abstract": ABSTRACT}]
    if fmt == "json":
        text = "[\n" + ",\n".join(json.dumps(v) for v in [good[0], value, good[1]]) + "\n]\n"
    else:
        text = "".join(json.dumps(v) + "\n" for v in [good[0], value, good[1]])
    f = tmp_path / f"j.{fmt}"
    f.write_text(text)
    src, name = (["-", "--input-format", fmt], "-") if stdin else ([str(f)], str(f))
    line = 3 if fmt == "json" else 2  # the json array opens on a line of its own
    r = CliRunner().invoke(cli, command + src, input=text if stdin else None)
    assert r.exit_code == 2, r.output
    assert r.stderr == (f"tagger: error: {name}:{line}: expected a JSON object, found {kind} "
                        "(1 record was written before it)\n")
    assert [json.loads(line)["id"] for line in r.stdout.splitlines()] == ["g1"]
    r = CliRunner().invoke(cli, command + src + ["--on-error", "skip"], input=text if stdin else None)
    assert r.exit_code == 0, r.output
    kept = "kept" if command[0] == "filter" else "written"
    assert r.stderr.splitlines() == [f"tagger: warning: {name}:{line}: expected a JSON object, found {kind}; skipped",
                                     f"tagger: 1 bad record skipped, 2 {kept}"]
    out = [json.loads(line) for line in r.stdout.splitlines()]
    assert [o["id"] for o in out] == ["g1", "g2"]
    assert all(o["tags"] == _tags_of(ABSTRACT) for o in out)


@pytest.mark.parametrize("text, kind", [("42", "number"), ("null", "null"), ("true", "boolean"), ('"x"', "string"),
                                        ("[1, 2, \"x\"]", "number"), ("[null]", "null"), ("[3.5]", "number")])
def test_a_json_file_of_no_object_is_refused(tmp_path, text, kind):
    f = tmp_path / "s.json"
    f.write_text(text)
    r = run("label", str(f))
    assert r.exit_code == 2 and r.stderr == (f"tagger: error: {f}:1: expected a JSON object, found {kind} "
                                             "(0 records were written before it)\n")
    r = run("label", str(f), "--on-error", "skip")
    assert r.exit_code == 2 and r.stdout == "" and "Traceback" not in r.output
    assert r.stderr.splitlines()[0] == f"tagger: warning: {f}:1: expected a JSON object, found {kind}; skipped"
    assert r.stderr.splitlines()[-1].startswith("tagger: error: no record written: ")


_SHORT = "We study graphs."
_scalar = st.one_of(st.none(), st.booleans(), st.integers(-10**20, 10**20),
                    st.floats(allow_nan=False, allow_infinity=False),
                    st.text(st.characters(blacklist_characters="[{"), max_size=5),  # no JSON in a string
                    st.lists(st.integers(0, 9), max_size=2))
_element = st.one_of(_scalar, st.sampled_from([{"abstract": ABSTRACT}, {"abstract": _SHORT}, {"title": "no abstract"}]))


@settings(max_examples=40, deadline=None)
@given(st.lists(_element, max_size=8), st.sampled_from(["json", "jsonl"]))
def test_mixed_scalars_and_objects_never_crash(elements, fmt):
    """Any mix of JSON values where records should be: exit 0 or 2, never a traceback or an
    internal error; with --on-error skip, every object with an abstract is tagged, in order, and
    every scalar is one warning naming its kind."""
    from tagger.readers.jsonl import json_kind

    rows = [dict(e, id=f"r{i}") if isinstance(e, dict) else e for i, e in enumerate(elements)]
    text = json.dumps(rows) if fmt == "json" else "".join(json.dumps(v) + "\n" for v in rows)
    objects = [r for r in rows if isinstance(r, dict)]
    bad = [r for r in rows if not isinstance(r, dict)]
    for strict in (True, False):
        r = run("label", "-", "--input-format", fmt, "-f", "jsonl", *([] if strict else ["--on-error", "skip"]),
                input=text)
        assert r.exit_code in (0, 2), r.output
        assert "Traceback" not in r.output and "internal error" not in r.output
        assert all(line.startswith("tagger: ") for line in r.stderr.splitlines())
        if strict and bad:
            assert r.exit_code == 2
            assert f"expected a JSON object, found {json_kind(bad[0])} " in r.stderr
            assert len(r.stderr.splitlines()) == 1
        if not strict:
            warned = [line for line in r.stderr.splitlines() if "expected a JSON object" in line]
            assert [line.rsplit("found ", 1)[1] for line in warned] == [f"{json_kind(b)}; skipped" for b in bad]
            if any("abstract" in o for o in objects):
                assert r.exit_code == 0
                out = {o["id"]: o for o in map(json.loads, r.stdout.splitlines())}
                assert list(out) == [o["id"] for o in objects]
                for o in objects:
                    if o.get("abstract") == ABSTRACT:
                        assert out[o["id"]]["tags"] == _tags_of(ABSTRACT) != []
                    else:
                        assert out[o["id"]]["tags"] == [] and out[o["id"]]["reason"]
            else:  # nothing at all: nothing to do; else no record to tag (bad ones, or none with an abstract)
                assert r.exit_code == (2 if rows else 0) and r.stdout == ""


def test_explain_and_evaluate_with_an_exclusive_facet_model(tmp_path, monkeypatch):
    from test_model import test_a_different_taxonomy_trains_and_predicts

    test_a_different_taxonomy_trains_and_predicts(tmp_path)  # trains tmp_path/mini
    vision = "We segment images and photos with a convolutional network on pixels " * 3
    p = write_jsonl(tmp_path / "v.jsonl", [{"id": "v", "abstract": vision, "labels": ["topic:vision"], "annotator": "me"}])
    r = run("label", str(p), "--model", str(tmp_path / "mini"), "--explain", "-f", "jsonl", "--min-words", "0")
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert out["tags"][0] == "topic:vision" and out["explanations"]["topic:vision"]
    monkeypatch.chdir(ROOT)  # where the default bib-eval set, tagged with the shipped taxonomy, is found
    case = ROOT / "tests" / "bib_eval_case"
    monkeypatch.setenv("TAGGER_SHARED", str(case / "shared"))
    r = run("evaluate", "--test", str(p), "--model", str(tmp_path / "mini"))
    assert r.exit_code == 0 and "F1 micro" in r.output, r.output
    if (ROOT / "fixtures" / "bib-eval.jsonl").exists():
        assert "bib-eval: skipped (" in r.output and "tagged with another taxonomy" in r.output
    r = run("evaluate", "--test", str(p), "--model", str(tmp_path / "mini"), "--bib-eval", str(case / "bib-eval.jsonl"))
    assert r.exit_code == 2 and "bib-eval.jsonl:1: unknown label 'modality:image'" in r.output, r.output


def test_filter_threshold_retags(tmp_path):
    p = write_jsonl(tmp_path / "t.jsonl", [{"id": "a", "abstract": ABSTRACT, "tags": ["method:cnn"], "scores": {"method:cnn": 1.0}}])
    assert run("filter", "method:cnn", str(p), "-c").output == "1\n"
    assert run("filter", "method:cnn", str(p), "-c", "--threshold", "0.5").output == "0\n"


def test_train_keeps_foreign_files(tmp_path, small_model_dir):
    import shutil

    d = tmp_path / "m"
    shutil.copytree(small_model_dir, d)
    (d / "NOTES.txt").write_text("mine")
    r = run("train", "--corpus", str(ROOT / "fixtures" / "corpus.jsonl"), "--out", str(d))
    assert r.exit_code == 2 and "NOTES.txt" in r.output and (d / "NOTES.txt").read_text() == "mine"


def test_damaged_model_is_one_line(tmp_path, small_model_dir):
    import shutil

    d = tmp_path / "m"
    shutil.copytree(small_model_dir, d)
    m = json.loads((d / "manifest.json").read_text())
    m["labels"] = m["labels"][:-1]
    (d / "manifest.json").write_text(json.dumps(m))
    good = write_jsonl(tmp_path / "g.jsonl", [{"abstract": ABSTRACT}])
    r = run("label", str(good), "--model", str(d))
    assert r.exit_code == 2 and "damaged model files" in r.output


@pytest.mark.parametrize("command", ["evaluate", "train"])
def test_the_default_corpus_missing_says_how_to_name_one(tmp_path, monkeypatch, command):
    monkeypatch.chdir(tmp_path)  # not the repository root
    r = CliRunner().invoke(cli, [command, "--out", str(tmp_path / "m")] if command == "train" else [command])
    assert r.exit_code == 2 and r.output.strip() == (
        "tagger: error: fixtures/corpus.jsonl: no such file (the default, relative to the repository root; "
        "name a hand-tagged corpus with --corpus FILE)")
    assert not (tmp_path / "m").exists()


def test_help_summaries_are_whole_sentences():
    """Every command's one-line summary in the lists of ``--help`` is a whole sentence, not cut."""
    for group in ([], ["corpus"], ["taxonomy"]):
        out = run(*group, "--help").output
        listed = out.split("Commands:\n", 1)[1].strip().splitlines()
        assert len(listed) >= (9 if not group else 2)
        for line in listed:
            summary = line.split(None, 1)[1]
            assert summary.endswith(".") and not summary.endswith("..."), line


def test_counts_take_their_number(tmp_path):
    from test_model import MINI

    (tmp_path / "mini.yaml").write_text(MINI)  # 2 facets: topic with 2 labels, kind with 1
    out = run("taxonomy", "show", str(tmp_path / "mini.yaml")).output
    assert "kind (multi-label, 1 label)\n" in out and "topic (at most one label, 2 labels)\n" in out
    out = run("taxonomy", "check", str(tmp_path / "mini.yaml")).output
    assert out == f"{tmp_path / 'mini.yaml'}: ok (2 facets, 3 labels)\n"


def test_taxonomy_show_follows_tagger_model(tmp_path, monkeypatch):
    from test_model import test_a_different_taxonomy_trains_and_predicts

    test_a_different_taxonomy_trains_and_predicts(tmp_path)
    monkeypatch.delenv("TAGGER_TAXONOMY", raising=False)
    monkeypatch.setenv("TAGGER_MODEL", str(tmp_path / "mini"))
    r = run("taxonomy", "show")
    assert r.exit_code == 0, r.output
    assert r.output.splitlines()[1:] == ["mini: 2 facets, 3 labels", "topic (at most one label, 2 labels)",
                                         "  topic:vision", "  topic:language", "kind (multi-label, 1 label)",
                                         "  kind:empirical"]
    monkeypatch.setenv("TAGGER_MODEL", str(ROOT / "models"))  # the shipped model: the packaged taxonomy, described
    r = run("taxonomy", "show")
    assert r.output.startswith("ml-abstracts: 4 facets, 40 labels\n") and "modality:text  Natural language" in r.output
    monkeypatch.setenv("TAGGER_MODEL", str(tmp_path / "nowhere"))
    r = run("taxonomy", "show")
    assert r.exit_code == 2 and f"{tmp_path / 'nowhere' / 'manifest.json'}: no such file" in r.output
    monkeypatch.setenv("TAGGER_MODEL", str(tmp_path / "mini" / "manifest.json"))  # a file, not the directory
    for args in (["taxonomy", "show"], ["label", "-"]):
        r = run(*args, input=ABSTRACT)
        assert r.exit_code == 2 and r.output.startswith(
            f"tagger: error: {tmp_path / 'mini' / 'manifest.json'}: a file, not a model directory ("), r.output


def test_an_unquoted_filter_expression_is_told_to_quote(tmp_path):
    p = write_jsonl(tmp_path / "t.jsonl", [{"id": "a", "abstract": ABSTRACT}])
    r = run("filter", "method:fine-tuning", "and", "not", "modality:image", str(p))
    assert r.exit_code == 2
    assert r.output == (f"tagger: error: and: no such file; the shell split the expression: quote it whole, as in "
                        f"tagger filter [OPTIONS] 'method:fine-tuning and not modality:image' {p}\n")
    r = run("filter", "method:fine-tuning", "modality:image", str(p))  # no operator: no hint to quote
    assert r.exit_code == 2 and r.output == "tagger: error: modality:image: no such file\n"
    r = run("filter", "method:fine-tuning", str(tmp_path / "missing.jsonl"))
    assert r.exit_code == 2 and r.output == f"tagger: error: {tmp_path / 'missing.jsonl'}: no such file\n"


def test_label_waiting_on_a_terminal_says_how_to_end():
    pexpect = pytest.importorskip("pexpect", reason="pexpect (the test extra) drives a pseudo-terminal")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    child = pexpect.spawn(sys.executable, ["-m", "tagger", "label", "-f", "jsonl"], env=env, timeout=60,
                          encoding="utf-8")
    child.expect("reading abstracts from the terminal, one per paragraph; end with Ctrl-D")
    child.sendline(ABSTRACT)
    child.sendeof()
    child.expect(r'"tags": \[')
    child.expect(pexpect.EOF)  # one Ctrl-D typed right after the line ends the input (not a second one)
    child.close()
    assert child.exitstatus == 0
    child = pexpect.spawn(sys.executable, ["-m", "tagger", "label"], env=env, timeout=60, encoding="utf-8")
    child.expect("end with Ctrl-D")
    child.sendeof()  # nothing typed at all
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    r = run("label", "-", "-f", "jsonl", input=ABSTRACT)  # not a terminal: no hint
    assert r.exit_code == 0 and "terminal" not in r.output


def test_a_field_option_on_text_input_is_not_silently_ignored(tmp_path):
    txt = tmp_path / "a.txt"
    txt.write_text(ABSTRACT + "\n")
    r = run("label", str(txt), "--text-field", "body")
    assert r.exit_code == 2
    assert r.output == (f"tagger: error: --text-field does not apply to {txt}: it is read as text (one abstract per "
                        "paragraph), which has no fields; name its format with --input-format jsonl, json or csv "
                        "if it has them\n")
    js = write_jsonl(tmp_path / "b.jsonl", [{"id": "b", "body": ABSTRACT}])
    r = run("label", str(txt), str(js), "--text-field", "body", "-f", "jsonl")  # some inputs have fields: a warning
    assert r.exit_code == 0 and r.output.startswith("tagger: warning: --text-field does not apply to ")
    assert [json.loads(x)["id"] for x in r.output.splitlines()[1:]] == ["a:1", "b"]
    assert run("label", str(txt), "-f", "jsonl").exit_code == 0  # the defaults say nothing
