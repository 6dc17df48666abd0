"""``tagger evaluate --html``: one self-contained page drawn from the result of
:func:`tagger.evaluation.crossval.cross_validate` or :func:`~tagger.evaluation.crossval.evaluate_model`.

The page has no script, no link and no address: styles are inline, plots are SVG written
here from the figures, fonts are the reader's own.  Every figure printed in it carries
``data-fig``, the path of that figure in ``evaluate --json`` (keys joined by ``/``; per-label
rows named by their label, other list items by their index), so a test can check the page
against the JSON; bars carry the same path and are ``value * data-scale`` pixels long.
"""

from __future__ import annotations

import json
from html import escape

from ..errors import TaggerError

SYSTEM_COLOURS = {"tagger": "#2b6cb0", "baseline": "#a0aec0", "plain_lr": "#dd6b20", "svm": "#38a169"}
LINE_COLOURS = ("#2b6cb0", "#2c9c8f", "#d69e2e", "#9f7aea", "#e53e3e", "#718096", "#38a169")
MARK = "#dd6b20"
BAR = 190  # pixels of a bar at 1.0
CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;color:#1a202c;
 background:#fff;margin:0 auto;max-width:1120px;padding:16px 24px;line-height:1.4}
h1{font-size:1.5em;margin:.2em 0}h2{font-size:1.2em;margin:1.6em 0 .3em;border-bottom:1px solid #e2e8f0}
h3{font-size:1em;margin:1em 0 .2em}p.note,.note{color:#4a5568;font-size:.9em}
.head{display:flex;gap:28px;flex-wrap:wrap;margin:.6em 0}.big{font-size:1.9em;font-weight:600}
.key{display:inline-block;width:.9em;height:.9em;vertical-align:-.1em;margin:0 .3em 0 .8em}
svg text{font-size:12px;fill:#1a202c}svg text.val{paint-order:stroke;stroke:#fff;stroke-width:3px}svg text.note{fill:#718096;font-size:11px}
svg .grid{stroke:#e2e8f0}svg .axis{fill:#718096;font-size:10px}
.curves{display:flex;flex-wrap:wrap;gap:6px}
table{border-collapse:collapse;font-size:.92em}td,th{padding:2px 10px;text-align:left}
td.n{text-align:right}tr:nth-child(even){background:#f7fafc}
"""


def load_learning_curve(path: str) -> list[dict]:
    """The learning curve in ``path``: JSON Lines as ``benchmarks/learning_curve.py`` prints
    them (or one JSON array of such objects), each with ``documents`` (int > 0), ``f1_micro``
    and optionally ``f1_macro`` and ``<facet>_f1_micro`` (numbers in [0, 1]).  Returns the rows
    sorted by ``documents``.  Raises TaggerError naming the file and line of a bad row."""
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except (OSError, UnicodeDecodeError) as e:
        raise TaggerError(f"{path}: cannot read: {getattr(e, 'strerror', None) or e}") from None
    if text.lstrip().startswith("["):
        try:
            items = [(1, r) for r in json.loads(text)]
        except json.JSONDecodeError as e:
            raise TaggerError(f"{path}:{e.lineno}: not JSON: {e.msg}") from None
    else:
        items = []
        for n, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    items.append((n, json.loads(line)))
                except json.JSONDecodeError as e:
                    raise TaggerError(f"{path}:{n}: not JSON: {e.msg}") from None
    rows = []
    for n, r in items:
        if not isinstance(r, dict):
            raise TaggerError(f"{path}:{n}: a learning-curve row must be a JSON object")
        docs = r.get("documents")
        if not isinstance(docs, int) or isinstance(docs, bool) or docs <= 0:
            raise TaggerError(f"{path}:{n}: 'documents' must be a positive integer")
        for k, v in r.items():
            if k.startswith("f1") or k.endswith("_f1_micro"):
                if not isinstance(v, (int, float)) or isinstance(v, bool) or not 0 <= v <= 1:
                    raise TaggerError(f"{path}:{n}: {k!r} must be a number in [0, 1]")
        if "f1_micro" not in r:
            raise TaggerError(f"{path}:{n}: 'f1_micro' is missing")
        rows.append(r)
    if not rows:
        raise TaggerError(f"{path}: no learning-curve rows")
    return sorted(rows, key=lambda r: r["documents"])


def _f(v) -> str:
    return "–" if v is None else f"{v:.3f}"


def _fig(path, v, cls="val", x=None, y=None, anchor=None) -> str:
    """A printed figure: SVG text at (x, y), or an HTML span when x is None."""
    attrs = f'class="{cls}" data-fig="{escape(path)}"'
    if x is None:
        return f"<span {attrs}>{escape(str(v) if isinstance(v, int) else _f(v))}</span>"
    a = f' text-anchor="{anchor}"' if anchor else ""
    return f'<text {attrs} x="{x:.1f}" y="{y:.1f}"{a}>{escape(str(v) if isinstance(v, int) else _f(v))}</text>'


def _bars(rows, metrics, systems) -> str:
    """Horizontal bars: a row per ``rows`` item ``(name, note, {system: (block, path)})``, a
    panel per ``metrics`` item ``(key, heading)``, one bar per system (tagger first)."""
    panel, bar_h, pad = BAR + 60, 11, 8
    name_w = max(150, 7 * max(len(r[0]) for r in rows) + 16)
    row_h = max(bar_h * len(systems) + pad + 4, 32)  # room for the name and its note
    W, top = name_w + panel * len(metrics), 22
    H = top + row_h * len(rows) + 16
    out = [f'<svg class="chart" width="{W}" height="{H}" data-scale="{BAR}" role="img">']
    for m, (_, heading) in enumerate(metrics):
        x0 = name_w + m * panel
        out.append(f'<text x="{x0}" y="14" font-weight="600">{escape(heading)}</text>')
        for t in (0, 0.25, 0.5, 0.75, 1):
            x = x0 + t * BAR
            out.append(f'<line class="grid" x1="{x}" x2="{x}" y1="{top - 4}" y2="{H - 14}"/>'
                       f'<text class="axis" x="{x}" y="{H - 3}" text-anchor="middle">{t:g}</text>')
    for i, (name, note, blocks) in enumerate(rows):
        y = top + i * row_h
        out.append(f'<g class="row" data-row="{escape(name)}"><text class="name" x="0" y="{y + 11}">{escape(name)}</text>'
                   f'<text class="note" x="0" y="{y + 24}">{escape(note)}</text>')
        for m, (key, _) in enumerate(metrics):
            x0 = name_w + m * panel
            for s, system in enumerate(systems):
                if system not in blocks:
                    continue
                block, path = blocks[system]
                v, yb = block[key], y + s * bar_h
                p = f"{path}/{key}"
                out.append(f'<rect class="bar {system}" data-fig="{escape(p)}" x="{x0}" y="{yb}" width="{v * BAR:.1f}" '
                           f'height="{bar_h - 2}" fill="{SYSTEM_COLOURS[system]}"/>')
                out.append(_fig(p, v, x=x0 + v * BAR + 4, y=yb + 9))
        out.append("</g>")
    out.append("</svg>")
    return "".join(out)


def _legend(systems) -> str:
    return "<p class='note'>" + "".join(f"<span class='key' style='background:{SYSTEM_COLOURS[s]}'></span>{s}"
                                        for s in systems) + "</p>"


def _curve(label, curves, systems) -> str:
    """One label's F1 against threshold (each system's pooled scores), the chosen threshold marked."""
    W, H, x0, y0, w, h = 268, 176, 30, 22, 228, 118
    grid = curves["tagger"]["grid"]
    c = curves["tagger"]["labels"][label]
    small = ' font-size="10.5"' if len(label) > 30 else ""
    out = [f'<svg class="curve" width="{W}" height="{H}" data-plot="{x0} {y0} {w} {h}" role="img">'
           f'<text x="{x0}" y="13" font-weight="600"{small}>{escape(label)}</text>']
    for t in (0, 0.5, 1):
        out.append(f'<line class="grid" x1="{x0}" x2="{x0 + w}" y1="{y0 + (1 - t) * h}" y2="{y0 + (1 - t) * h}"/>'
                   f'<text class="axis" x="{x0 - 4}" y="{y0 + (1 - t) * h + 3}" text-anchor="end">{t:g}</text>'
                   f'<text class="axis" x="{x0 + t * w}" y="{y0 + h + 12}" text-anchor="middle">{t:g}</text>')
    for system in reversed(systems):
        f1 = curves[system]["labels"][label]["f1"]
        pts = " ".join(f"{x0 + t * w:.1f},{y0 + (1 - v) * h:.1f}" for t, v in zip(grid, f1))
        dash = ' stroke-dasharray="4 3"' if system != "tagger" else ""
        out.append(f'<polyline class="{system}" data-fig="{escape(f"{system}/threshold_curves/labels/{label}/f1")}" '
                   f'points="{pts}" fill="none" stroke="{SYSTEM_COLOURS[system]}" stroke-width="2"{dash}/>')
    tx, ty = x0 + c["threshold"] * w, y0 + (1 - c["f1_at_threshold"]) * h
    p = f"tagger/threshold_curves/labels/{label}"
    out.append(f'<line x1="{tx:.1f}" x2="{tx:.1f}" y1="{y0}" y2="{y0 + h}" stroke="{MARK}" stroke-width="1.5"/>'
               f'<circle cx="{tx:.1f}" cy="{ty:.1f}" r="3.5" fill="{MARK}"/>'
               f'<text class="note" x="{x0}" y="{H - 4}">threshold</text>'
               + _fig(f"{p}/threshold", c["threshold"], x=x0 + 56, y=H - 4)
               + f'<text class="note" x="{x0 + 110}" y="{H - 4}">F1 there</text>'
               + _fig(f"{p}/f1_at_threshold", c["f1_at_threshold"], x=x0 + 160, y=H - 4) + "</svg>")
    return "".join(out)


def _learning(rows, facets) -> str:
    """Micro- and macro-F1 (and each facet's micro-F1, thin) against corpus size."""
    W, H, x0, y0, w, h = 820, 300, 46, 16, 540, 240
    keys = [("f1_micro", "micro-F1", 3), ("f1_macro", "macro-F1", 3)] + [(f"{f}_f1_micro", f"{f} micro-F1", 1.2) for f in facets]
    keys = [k for k in keys if all(k[0] in r for r in rows)]
    vals = [r[k] for r in rows for k, _, _ in keys]
    lo, hi = max(0.0, int(min(vals) * 10) / 10), min(1.0, int(max(vals) * 10 + 1) / 10)
    xmax = max(r["documents"] for r in rows)

    def X(d):
        return x0 + d / xmax * w

    def Y(v):
        return y0 + (hi - v) / (hi - lo) * h

    out = [f'<svg class="chart" width="{W}" height="{H}" role="img">']
    t = lo
    while t <= hi + 1e-9:
        out.append(f'<line class="grid" x1="{x0}" x2="{x0 + w}" y1="{Y(t):.1f}" y2="{Y(t):.1f}"/>'
                   f'<text class="axis" x="{x0 - 5}" y="{Y(t) + 3:.1f}" text-anchor="end">{t:.1f}</text>')
        t += 0.1
    for r in rows:
        out.append(f'<text class="axis" x="{X(r["documents"]):.1f}" y="{y0 + h + 14}" text-anchor="middle">'
                   f'{r["documents"]:,}</text>')
    out.append(f'<text class="axis" x="{x0 + w / 2}" y="{H - 2}" text-anchor="middle">hand-tagged abstracts</text>')
    for n, (key, name, width) in reversed(list(enumerate(keys))):  # the thick lines last, on top
        colour = LINE_COLOURS[n % len(LINE_COLOURS)]
        pts = " ".join(f"{X(r['documents']):.1f},{Y(r[key]):.1f}" for r in rows)
        out.append(f'<polyline points="{pts}" fill="none" stroke="{colour}" stroke-width="{width}"/>')
        ly = y0 + 10 + n * 16
        out.append(f'<line x1="{x0 + w + 14}" x2="{x0 + w + 30}" y1="{ly - 4}" y2="{ly - 4}" stroke="{colour}" '
                   f'stroke-width="{width}"/><text x="{x0 + w + 34}" y="{ly}">{escape(name)}</text>')
    for n, (key, name, width) in enumerate(keys):
        colour = LINE_COLOURS[n % len(LINE_COLOURS)]
        if width > 2:
            for i, r in enumerate(rows):
                out.append(f'<circle cx="{X(r["documents"]):.1f}" cy="{Y(r[key]):.1f}" r="3" fill="{colour}"/>'
                           + _fig(f"learning_curve/{i}/{key}", r[key], x=X(r["documents"]), y=Y(r[key]) - 7, anchor="middle"))
    out.append("</svg>")
    return "".join(out)


def _parts(result, systems) -> list:
    """Rows of the sample/era chart: ``(name, note, {system: (block, path)})``, whole corpus first."""
    t = result["tagger"]
    named = [("all", "whole corpus", "all")]
    if t.get("samples"):
        named += [(f"samples/{s}", f"sample: {s}", None) for s in t["samples"]]
        named += [(f"eras/{e}", f"era: {e}", None) for e in t.get("eras") or {}]
        named += [(f"rows/{n}", n, None) for n in t.get("rows") or {}]
    elif t.get("uniform"):
        named.append(("uniform", "sample: uniform", None))
    if t.get("bib_eval"):
        named.append(("bib_eval", "bib-eval (real .bib entries)", None))
    rows = []
    for key, name, _ in named:
        blocks = {}
        for s in systems:
            node = result[s]
            for part in key.split("/"):
                node = (node or {}).get(part)
            if node:
                blocks[s] = (node["all"], f"{s}/{key}/all")
        docs = blocks["tagger"][0]["documents"]
        rows.append((name, f"{docs:,} document" + ("" if docs == 1 else "s"), blocks))
    return rows


def render_html(result: dict, taxonomy, title: str = "") -> str:
    """The evaluation page (a str of HTML) for ``result`` (``evaluate --json``'s dict: a
    ``tagger`` block with ``all``, ``per_label``, ``threshold_curves`` and ``confusions``;
    optionally ``baseline``, ``samples``/``eras``/``bib_eval`` or ``uniform`` blocks, and a
    ``learning_curve`` list as :func:`load_learning_curve` returns).  ``taxonomy`` gives the
    facets and label order; ``title`` names what was evaluated."""
    systems = [s for s in SYSTEM_COLOURS if result.get(s)]
    t, facets = result["tagger"], [f.id for f in taxonomy.facets]
    from ..model.space import describe_space

    how = (f"{result['folds']}-fold cross-validation on {result['documents']:,} hand-tagged abstracts"
           + (f", the tagger reading {describe_space(result['space'])}" if result.get("space") else "")
           if "folds" in result else f"a trained model scored on {result['documents']:,} hand-tagged abstracts")
    H = ["<!doctype html><html lang='en'><head><meta charset='utf-8'>",
         f"<title>tagger evaluation{': ' + escape(title) if title else ''}</title><style>{CSS}</style></head><body>",
         f"<h1>tagger evaluation{': ' + escape(title) if title else ''}</h1>",
         f"<p>{escape(how)}; taxonomy <b>{escape(taxonomy.name)}</b>, {len(taxonomy.label_ids)} labels in "
         f"{len(facets)} facets.</p><div class='head'>"]
    for s in systems:
        a = result[s]["all"]["all"]
        H.append(f"<div><div class='note'>{s} micro-F1 / macro-F1</div><div class='big'>"
                 f"{_fig(f'{s}/all/all/f1_micro', a['f1_micro'])} / {_fig(f'{s}/all/all/f1_macro', a['f1_macro'])}</div></div>")
    H.append("</div>")
    H.append("<h2>Per facet</h2>" + _legend(systems))
    rows = [(f, "all labels" if f == "all" else f"{len(taxonomy.facet(f).labels)} labels",
             {s: (result[s]["all"][f], f"{s}/all/{f}") for s in systems}) for f in ["all"] + facets]
    H.append(_bars(rows, [("f1_micro", "micro-F1"), ("f1_macro", "macro-F1"), ("precision_micro", "precision (micro)"),
                          ("recall_micro", "recall (micro)")][: 2 if len(systems) > 1 else 4], systems))
    H.append("<h2>By sample and era</h2>")
    parts = _parts(result, systems)
    if len(parts) == 1:
        H.append("<p class='note'>This corpus has no <code>sample</code> or <code>year</code> field to split it by.</p>")
    else:
        H.append("<p class='note'>Each part of the corpus by its <code>sample</code> field, and by era from "
                 "<code>year</code>" + "".join(f"; the {escape(n)} (<code>--first</code>)" for n in result["tagger"].get("rows") or {})
                 + ("; rows found by search inflate the labels they were searched for, so the uniform "
                                        "random sample is the fairer estimate" if any(n == "sample: uniform" for n, *_ in parts)
                                        else "") + ".</p>" + _bars(parts, [("f1_micro", "micro-F1"), ("f1_macro", "macro-F1")], systems))
    note = (result.get("bib_eval") or {}).get("note")
    if note:
        H.append(f"<p class='note'>{escape(note)}</p>")
    H.append("<h2>Per label, worst first</h2><p class='note'>Sorted by F1; support is the number of hand-tagged "
             "abstracts with the label.</p>" + _legend(systems))
    base = {r["label"]: r for r in result["baseline"]["per_label"]} if "baseline" in systems else {}
    rows = [(r["label"], f"support {r['support']:,}",
             {"tagger": (r, f"tagger/per_label/{r['label']}"),
              **({"baseline": (base[r["label"]], f"baseline/per_label/{r['label']}")} if r["label"] in base else {})})
            for r in sorted(t["per_label"], key=lambda r: (r["f1"], r["label"]))]
    H.append(_bars(rows, [("precision", "precision"), ("recall", "recall"), ("f1", "F1")], systems))
    H.append("<h2>Label pairs most often confused</h2><p class='note'>Abstracts where the model gave the first "
             "label but not the second, and the hand tags had the second but not the first (pairs within a facet).</p>")
    conf = t.get("confusions") or []
    if conf:
        top = max(c["documents"] for c in conf)
        H.append("<table><tr><th>predicted</th><th>hand-tagged</th><th>abstracts</th><th></th></tr>")
        for i, c in enumerate(conf):
            H.append(f"<tr><td>{escape(c['predicted'])}</td><td>{escape(c['gold'])}</td><td class='n'>"
                     f"{_fig(f'tagger/confusions/{i}/documents', c['documents'])}</td><td><svg width='160' height='10'>"
                     f"<rect width='{150 * c['documents'] / top:.1f}' height='10' fill='{MARK}'/></svg></td></tr>")
        H.append("</table>")
    else:
        H.append("<p>No confusions.</p>")
    H.append("<h2>Threshold against F1</h2><p class='note'>Each label's F1 as its threshold moves, from the "
             + ("pooled out-of-fold scores; the mark is the threshold chosen inside the training folds (their mean)"
                if "folds" in result else "test scores; the mark is the model's threshold")
             + (", the dashed line the baseline" if "baseline" in systems else "") + ".</p>")
    scored = [s for s in systems if s in ("tagger", "baseline")]  # the peers give decisions, not scores
    curves = {s: result[s]["threshold_curves"] for s in scored}
    for f in taxonomy.facets:
        H.append(f"<h3>{escape(f.id)}</h3><div class='curves'>"
                 + "".join(_curve(lb.id, curves, scored) for lb in f.labels) + "</div>")
    H.append("<h2>Learning curve</h2>")
    if result.get("learning_curve"):
        H.append("<p class='note'>Cross-validated F1 on growing subsets of the corpus.</p>"
                 + _learning(result["learning_curve"], facets))
    else:
        H.append("<p class='note'>Not known for this corpus: give <code>--learning-curve FILE</code>, JSON Lines of "
                 "<code>documents</code> and <code>f1_micro</code> (<code>benchmarks/learning_curve.py</code> writes "
                 "them for the shipped corpus).</p>")
    H.append("</body></html>\n")
    return "\n".join(H)
