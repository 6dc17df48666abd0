"""``tagger evaluate --html``: the curves and confusions --json carries, the page's figures
against --json, and the page as headless Chromium draws it."""

import functools
import json
import re
from html.parser import HTMLParser

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from sklearn.metrics import f1_score

from tagger.cli import cli
from tagger.evaluation.metrics import CURVE_GRID, confused_pairs, decide, threshold_curves
from tagger.taxonomy import parse_taxonomy

from conftest import ROOT, write_jsonl
from screenshot import read_png, screenshot

TAX = parse_taxonomy("""\
version: 1
name: small
facets:
  - id: topic
    kind: exclusive
    labels: [{id: topic:a}, {id: topic:b}, {id: topic:c}]
  - id: kind
    labels: [{id: kind:x}, {id: kind:y}]
""")
LEARNING = ROOT / "fixtures" / "learning-curve.jsonl"


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_threshold_curves_are_the_f1_each_threshold_gives(data):
    n = data.draw(st.integers(3, 25))
    Y = data.draw(arrays(np.int8, (n, 5), elements=st.integers(0, 1)))
    P = data.draw(arrays(np.float64, (n, 5), elements=st.floats(0, 1)))
    chosen = dict(zip(TAX.label_ids, data.draw(st.lists(st.floats(0.05, 0.95), min_size=5, max_size=5))))
    c = threshold_curves(Y, P, chosen, TAX)
    assert c["grid"] == list(CURVE_GRID) and c["grid"][0] == 0.05 and c["grid"][-1] == 0.95 and len(c["grid"]) == 37
    def f1(y, t):  # by hand; scikit-learn's f1_score checks the chosen threshold below
        tp, fp, fn = int((y & t).sum()), int((~y & t).sum()), int((y & ~t).sum())
        return 2 * tp / (2 * tp + fp + fn) if tp else 0.0

    decided = [decide(P, t, TAX).astype(bool) for t in CURVE_GRID]
    for j, lb in enumerate(TAX.label_ids):
        want = [f1(Y[:, j].astype(bool), D[:, j]) for D in decided]
        assert c["labels"][lb]["f1"] == pytest.approx(want, abs=6e-5)
        at = f1_score(Y[:, j], decide(P, chosen, TAX)[:, j], zero_division=0)
        assert c["labels"][lb]["f1_at_threshold"] == pytest.approx(at, abs=6e-5)
        assert c["labels"][lb]["threshold"] == pytest.approx(chosen[lb], abs=6e-5)


@settings(max_examples=60, deadline=None)
@given(arrays(np.int8, st.tuples(st.integers(1, 30), st.just(5)), elements=st.integers(0, 1)), st.data())
def test_confused_pairs_count_a_given_wrongly_where_b_was_missed(Y, data):
    T = data.draw(arrays(np.int8, Y.shape, elements=st.integers(0, 1)))
    got = confused_pairs(Y, T, TAX, top=100)
    labels, want = TAX.label_ids, {}
    for f in TAX.facets:
        for a in f.labels:
            for b in f.labels:
                i, j = labels.index(a.id), labels.index(b.id)
                n = sum(1 for y, t in zip(Y, T) if t[i] and not y[i] and y[j] and not t[j])
                if a.id != b.id and n:
                    want[(a.id, b.id)] = n
    assert {(r["predicted"], r["gold"]): r["documents"] for r in got} == want
    assert [r["documents"] for r in got] == sorted(want.values(), reverse=True)
    assert confused_pairs(Y, T, TAX, top=2) == got[:2]


def test_confused_pairs_by_hand():
    #          a  b  c  x  y
    Y = np.array([[0, 1, 0, 1, 0], [0, 1, 0, 0, 1], [1, 0, 0, 0, 1]])
    T = np.array([[1, 0, 0, 0, 1], [1, 0, 0, 0, 1], [1, 0, 0, 1, 0]])
    assert confused_pairs(Y, T, TAX) == [{"predicted": "topic:a", "gold": "topic:b", "documents": 2},
                                         {"predicted": "kind:x", "gold": "kind:y", "documents": 1},
                                         {"predicted": "kind:y", "gold": "kind:x", "documents": 1}]


class _Page(HTMLParser):
    """Elements with ``data-fig`` (tag, attributes, text), the per-label rows and what the page links to."""

    def __init__(self):
        super().__init__()
        self.figs, self.rows, self.stack, self.svg, self.open = [], [], [], {}, None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "svg":
            self.svg = a
        if tag == "g" and "data-row" in a:
            self.rows.append([a["data-row"], []])
        if "data-fig" in a:
            self.figs.append([tag, a, "", self.svg])
            if "row" in self.stack:
                self.rows[-1][1].append(a["data-fig"])
            self.open = len(self.stack)  # the figure's text runs until this element closes
        self.stack.append("row" if tag == "g" and "data-row" in a else tag)

    def handle_endtag(self, tag):
        self.stack.pop()
        if self.open == len(self.stack):
            self.open = None

    def handle_data(self, data):
        if self.open is not None:
            self.figs[-1][2] += data


def _at(result, path):
    """The value at ``path`` (keys joined by '/'; per-label rows by label, list items by index)."""
    node = result
    for part in path.split("/"):
        if isinstance(node, list):
            node = next(r for r in node if r.get("label") == part) if part not in map(str, range(len(node))) \
                else node[int(part)]
        else:
            node = node[part]
    return node


def _shown(v):
    return str(v) if isinstance(v, int) else f"{v:.3f}"


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory, corpus_sample):
    """``tagger evaluate --baseline --json --html --learning-curve`` on a 16th of the seeded corpus sample
    (2 folds, 10 boosting rounds): (json dict, page path)."""
    import tagger.evaluation.crossval as ev

    tmp = tmp_path_factory.mktemp("html")
    corpus = write_jsonl(tmp / "c.jsonl", corpus_sample[::16])
    (tmp / "old.html").write_text("an older page")
    (tmp / "r.html").symlink_to("old.html")  # written as -o writes: through the link, which stays one
    quick = functools.partial(ev.cross_validate, inner_k=2, num_rounds=10)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ev, "cross_validate", quick)
        r = CliRunner().invoke(cli, ["evaluate", "--corpus", str(corpus), "--folds", "2", "--baseline", "--json",
                                     str(tmp / "f.json"), "--html", str(tmp / "r.html"), "--learning-curve",
                                     str(LEARNING)])
    assert r.exit_code == 0, r.output
    assert f"evaluation page written to {tmp / 'r.html'}" in r.output
    assert (tmp / "r.html").is_symlink() and (tmp / "old.html").read_text().startswith("<!doctype html>")
    return json.loads((tmp / "f.json").read_text()), tmp / "r.html"


def test_json_carries_the_curves_and_confusions(evaluated, taxonomy):
    result, _ = evaluated
    for s in ("tagger", "baseline"):
        curves = result[s]["threshold_curves"]
        assert curves["grid"] == list(CURVE_GRID) and list(curves["labels"]) == taxonomy.label_ids
        for lb, c in curves["labels"].items():
            assert len(c["f1"]) == 37 and all(0 <= v <= 1 for v in c["f1"])
            assert c["threshold"] == result[s]["thresholds_mean"][lb]
        conf = result[s]["confusions"]
        assert 0 < len(conf) <= 20 and [c["documents"] for c in conf] == sorted((c["documents"] for c in conf), reverse=True)
        facet = {lb: lb.split(":")[0] for lb in taxonomy.label_ids}
        assert all(facet[c["predicted"]] == facet[c["gold"]] and c["predicted"] != c["gold"] for c in conf)
        per = {r["label"]: r for r in result[s]["per_label"]}  # a pair can be no commoner than either error
        assert all(c["documents"] <= min(per[c["predicted"]]["fp"], per[c["gold"]]["fn"]) for c in conf)
    assert [r["documents"] for r in result["learning_curve"]] == [1259, 2518, 3776, 5035]
    assert result["learning_curve"][-1]["f1_micro"] == 0.7914


def test_page_figures_equal_the_json(evaluated, taxonomy):
    result, page = evaluated
    html = page.read_text(encoding="utf-8")
    # self-contained: nothing fetched, nothing run
    assert not re.search(r"<script|<link|<img|<iframe|@import|url\(|src=|href=|https?:", html, re.I)
    p = _Page()
    p.feed(html)
    printed = {}
    for tag, attrs, text, svg in p.figs:
        path, want = attrs["data-fig"], _at(result, attrs["data-fig"])
        if tag in ("text", "span"):
            assert text == _shown(want), path
            printed[path] = text
        elif tag == "rect":  # a bar: value * data-scale pixels
            assert float(attrs["width"]) == pytest.approx(want * float(svg["data-scale"]), abs=0.06), path
        elif tag == "polyline":  # a threshold curve: x the grid, y the F1, in the plot's box
            x0, y0, w, h = map(float, svg["data-plot"].split())
            pts = [tuple(map(float, xy.split(","))) for xy in attrs["points"].split()]
            assert [(x - x0) / w for x, _ in pts] == pytest.approx(CURVE_GRID, abs=1e-3), path
            assert [1 - (y - y0) / h for _, y in pts] == pytest.approx(want, abs=1e-3), path
    labels, facets = taxonomy.label_ids, [f.id for f in taxonomy.facets]
    expected = {f"{s}/per_label/{lb}/{k}" for s in ("tagger", "baseline") for lb in labels for k in ("precision", "recall", "f1")}
    parts = [("all", ["all"] + facets)] + ([(f"samples/{n}", ["all"]) for n in result["tagger"]["samples"]]
                                           + [(f"eras/{n}", ["all"]) for n in result["tagger"]["eras"]]
                                           if result["tagger"].get("samples") else [("uniform", ["all"])])
    assert "samples/uniform" in dict(parts)  # each sample and era is drawn, the uniform one among them
    expected |= {f"{s}/{part}/{f}/{k}" for s in ("tagger", "baseline") for part, fs in parts
                 for f in fs for k in ("f1_micro", "f1_macro")}
    expected |= {f"tagger/threshold_curves/labels/{lb}/{k}" for lb in labels for k in ("threshold", "f1_at_threshold")}
    expected |= {f"tagger/confusions/{i}/documents" for i in range(len(result["tagger"]["confusions"]))}
    expected |= {f"learning_curve/{i}/{k}" for i in range(4) for k in ("f1_micro", "f1_macro")}
    assert expected <= set(printed), sorted(expected - set(printed))[:5]
    assert sum(t == "polyline" for t, *_ in p.figs) == 2 * len(labels)
    # per label: worst first, each row's figures are its own label's
    label_rows = [(name, paths) for name, paths in p.rows if name in labels]
    assert [n for n, _ in label_rows] == [r["label"] for r in sorted(result["tagger"]["per_label"], key=lambda r: (r["f1"], r["label"]))]
    assert all(path.split("/")[2] == name for name, paths in label_rows for path in paths)
    assert printed["tagger/per_label/" + label_rows[0][0] + "/f1"] == _shown(min(r["f1"] for r in result["tagger"]["per_label"]))
    # the confusions table in the JSON's order, with the labels beside their counts
    conf = result["tagger"]["confusions"]
    cells = re.findall(r"<tr><td>([^<]+)</td><td>([^<]+)</td><td class='n'><span[^>]*>(\d+)</span>", html)
    assert cells == [(c["predicted"], c["gold"], str(c["documents"])) for c in conf]


def test_page_shows_samples_eras_and_bib_eval_when_the_result_has_them(evaluated, taxonomy, tmp_path):
    from tagger.evaluation.html import render_html

    result = json.loads(json.dumps(evaluated[0]))
    for s in ("tagger", "baseline"):  # the shape of evaluate --json with per-sample and era figures
        blk = result[s]["all"]
        result[s]["samples"] = {"uniform": result[s]["uniform"], "seed": json.loads(json.dumps(blk).replace("0.", "0.1"))}
        result[s]["eras"] = {"2019 on": blk}
        result[s]["bib_eval"] = json.loads(json.dumps(blk).replace("0.", "0.2"))
    result["bib_eval"] = {"documents": 7, "note": "bib-eval: 7 entries of real .bib files"}
    del result["learning_curve"]
    html = render_html(result, taxonomy, "x")
    p = _Page()
    p.feed(html)
    shown = {a["data-fig"]: text for tag, a, text, _ in p.figs if tag == "text"}
    for s in ("tagger", "baseline"):
        for part in ("samples/uniform", "samples/seed", "eras/2019 on", "bib_eval"):
            for k in ("f1_micro", "f1_macro"):
                path = f"{s}/{part}/all/{k}"
                assert shown[path] == _shown(_at(result, path))
    names = [n for n, _ in p.rows]
    assert names[names.index("whole corpus"):][:5] == ["whole corpus", "sample: uniform", "sample: seed", "era: 2019 on",
                                                        "bib-eval (real .bib entries)"]
    assert "bib-eval: 7 entries of real .bib files" in html and "Not known for this corpus" in html
    for s in ("tagger", "baseline"):  # a corpus without sample or year fields: said, not drawn
        for part in ("samples", "eras", "bib_eval", "uniform"):
            result[s].pop(part)
    html = render_html(result, taxonomy, "x")
    assert "no <code>sample</code> or <code>year</code> field" in html and "whole corpus" not in html


def test_test_file_page_without_baseline(tmp_path, corpus_sample, small_model_dir):
    test = write_jsonl(tmp_path / "t.jsonl", corpus_sample[3::40])
    r = CliRunner().invoke(cli, ["evaluate", "--test", str(test), "--model", str(small_model_dir), "--json",
                                 str(tmp_path / "f.json"), "--html", str(tmp_path / "r.html")])
    assert r.exit_code == 0, r.output
    result, html = json.loads((tmp_path / "f.json").read_text()), (tmp_path / "r.html").read_text()
    manifest = json.loads((small_model_dir / "manifest.json").read_text())
    th = result["tagger"]["threshold_curves"]["labels"]
    assert {lb: c["threshold"] for lb, c in th.items()} == pytest.approx(manifest["thresholds"], abs=6e-5)
    # one threshold set on one file: the F1 at the mark is the per-label table's F1
    table = {r["label"]: r["f1"] for r in result["tagger"]["per_label"]}  # labels with support only
    assert {lb: c["f1_at_threshold"] for lb, c in th.items() if lb in table} == table
    assert "baseline" not in html and "the mark is the model's threshold" in html


def test_bad_learning_curve_and_html_paths_fail_before_the_work(tmp_path, monkeypatch):
    import tagger.evaluation.crossval as ev

    monkeypatch.setattr(ev, "cross_validate", lambda *a, **k: pytest.fail("cross-validated despite bad options"))
    corpus = str(ROOT / "fixtures" / "corpus.jsonl")
    bad = tmp_path / "lc.jsonl"
    bad.write_text('{"documents": 10, "f1_micro": 0.5}\n{"documents": 20, "f1_micro": 1.5}\n')
    for args, message in [
        (["--learning-curve", str(bad)], f"{bad}:2: 'f1_micro' must be a number in [0, 1]"),
        (["--learning-curve", str(tmp_path / "none.jsonl")], f"{tmp_path / 'none.jsonl'}: cannot read"),
        (["--html", "-"], "standard output carries the text report"),
        (["--html", str(tmp_path / "no" / "r.html")], "no such directory"),
        (["--html", str(tmp_path)], "is a directory"),
    ]:
        r = CliRunner().invoke(cli, ["evaluate", "--corpus", corpus, *args])
        assert r.exit_code == 2 and message in r.output and "Traceback" not in r.output, (args, r.output)
        assert len(r.output.strip().splitlines()) == 1


def test_learning_curve_reads_json_lines_or_an_array(tmp_path):
    from tagger.evaluation.html import load_learning_curve

    rows = [json.loads(line) for line in LEARNING.read_text().splitlines()]
    arr = tmp_path / "lc.json"
    arr.write_text(json.dumps(rows[::-1]))
    assert load_learning_curve(str(arr)) == load_learning_curve(str(LEARNING)) == rows


def test_chromium_draws_the_page(evaluated, tmp_path):
    """The page as headless Chromium renders it: not blank, and its bars drawn in the tagger's colour."""
    from tagger.evaluation.html import SYSTEM_COLOURS

    png = tmp_path / "page.png"
    screenshot(evaluated[1], png, 1100, 1400)
    w, h, rows = read_png(png)
    assert (w, h) == (1100, 1400)
    colours = {}
    for row in rows:
        for i in range(0, len(row), 3):
            px = row[i:i + 3]
            colours[px] = colours.get(px, 0) + 1
    white = colours.get(b"\xff\xff\xff", 0)
    assert rows[0][:3] == b"\xff\xff\xff" and white < 0.97 * w * h  # a white page with things on it
    blue = bytes.fromhex(SYSTEM_COLOURS["tagger"][1:])
    grey = bytes.fromhex(SYSTEM_COLOURS["baseline"][1:])
    assert colours.get(blue, 0) > 2000 and colours.get(grey, 0) > 2000  # the bars, not only text
    assert len(colours) > 20
