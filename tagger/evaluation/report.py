"""Reports of evaluation figures: the Annif-style text report, the per-label TSV and the model card.

Inputs are the result dicts of :func:`tagger.evaluation.crossval.cross_validate` and
:func:`tagger.evaluation.crossval.evaluate_model`.
"""

from __future__ import annotations

from ..wording import plural

#: Annif's names for the figures (``annif eval``), beside our JSON keys
ANNIF_NAMES = [
    ("precision_samples", "Precision (doc avg)"), ("recall_samples", "Recall (doc avg)"),
    ("f1_samples", "F1 score (doc avg)"), ("precision_macro", "Precision (subj avg)"),
    ("recall_macro", "Recall (subj avg)"), ("f1_macro", "F1 score (subj avg)"),
    ("precision_micro", "Precision (microavg)"), ("recall_micro", "Recall (microavg)"),
    ("f1_micro", "F1 score (microavg)"), ("f1@5", "F1@5"), ("ndcg", "NDCG"),
    ("precision@1", "Precision@1"), ("precision@3", "Precision@3"), ("precision@5", "Precision@5"),
]

def _parts(block: dict) -> dict:
    """``{part name: figures}`` of every reported part of one system's result, in report order:
    "whole corpus", "sample <name>"..., "era <name>"..., "bib-eval"."""
    out = {"whole corpus": block.get("all")}
    out.update({f"sample {n}": f for n, f in (block.get("samples") or {}).items()})
    out.update({f"era {n}": f for n, f in (block.get("eras") or {}).items()})
    out.update(block.get("rows") or {})
    out["bib-eval"] = block.get("bib_eval")
    out.update({f"bib-eval {n}": f for n, f in (block.get("bib_eval_parts") or {}).items()})
    return {k: v for k, v in out.items() if v}


#: the systems of a result, in report order: the tagger, the tuned baseline, the pinned peers
SYSTEMS = ("tagger", "baseline", "plain_lr", "svm")


#: the columns of :func:`format_report`: (figure key, heading)
REPORT_COLUMNS = [("f1_micro", "F1 micro"), ("f1_macro", "F1 macro"), ("f1_samples", "F1 docs"),
                  ("precision_micro", "P micro"), ("recall_micro", "R micro"), ("ndcg", "NDCG"),
                  ("precision@1", "P@1")]
#: the widest line :func:`format_report` writes
REPORT_WIDTH = 100


def report_parts(result: dict) -> list[tuple[str, str]]:
    """The parts of ``result`` a report shows, as ``(path, title)``: the whole corpus, then
    each sample and era (``samples``/``eras`` blocks), or else the uniform sample, then the
    bib-eval entries, as far as the result has them."""
    t = result["tagger"]
    out = [("all", "whole corpus")]
    if t.get("samples"):
        out += [(f"samples/{n}", f"sample {n}") for n in t["samples"]]
        out += [(f"eras/{n}", f"era {n}") for n in t.get("eras") or {}]
        out += [(f"rows/{n}", n) for n in t.get("rows") or {}]
    elif t.get("uniform"):
        out.append(("uniform", "uniform random arXiv sample only"))
    if t.get("bib_eval"):
        out.append(("bib_eval", "bib-eval: entries of real .bib files, never trained on"))
        out += [(f"bib_eval_parts/{n}", f"bib-eval, {n} papers") for n in t.get("bib_eval_parts") or {}]
    return out


def format_comparisons(result: dict) -> list[str]:
    """Lines of the report saying, per pinned peer and part, the tagger's micro-F1 minus the
    peer's with its 95% paired bootstrap interval (empty without ``comparisons``)."""
    comp = result.get("comparisons") or {}
    if not comp:
        return []
    lines = ["== tagger minus peer, micro-F1 [95% paired bootstrap interval]",
             f"{'part':<28}" + "".join(f"{p:>24}" for p in comp)]
    for part in next(iter(comp.values())):
        cells = []
        for p in comp:
            c = comp[p].get(part)
            cells.append(f"{c['diff']:+.3f} [{c['lo']:+.3f}, {c['hi']:+.3f}]" if c else "")
        lines.append(f"{part[:27]:<28}" + "".join(f"{x:>24}" for x in cells))
    return lines + [""]


def _block(result: dict, system: str, path: str):
    node = result.get(system)
    for part in path.split("/"):
        node = (node or {}).get(part) if isinstance(node, dict) else None
    return node


def format_report(result: dict, taxonomy) -> str:
    """The text report: per part of the corpus (:func:`report_parts`), a heading with its
    documents, then one row per facet (``all`` first) and system (tagger, then the baseline
    when there is one) with the figures of :data:`REPORT_COLUMNS`; the bib-eval note last.
    No line is wider than :data:`REPORT_WIDTH` (``--json`` has every figure)."""
    systems = [s for s in SYSTEMS if result.get(s)]
    facets = ["all"] + [f.id for f in taxonomy.facets]
    room = REPORT_WIDTH - 9 - 10 * len(REPORT_COLUMNS)  # what is left for the facet column
    fw = min(max(len(f) for f in facets) + 2, room)
    from ..model.space import describe_space

    lines = [f"The tagger read {describe_space(result['space'])}.", ""] if result.get("space") else []
    for path, title in report_parts(result):
        top = _block(result, "tagger", path)
        if not top:
            continue
        how = ""
        if "folds" in result and path == "all":
            how = f", {result['folds']}-fold cross-validation"
        elif "folds" in result and path == "bib_eval":
            how = ", scored by a model trained on the whole corpus"
        head = f"== {title}: {plural(top['all']['documents'], 'document')}{how}"
        lines.append(head if len(head) <= REPORT_WIDTH else head[:REPORT_WIDTH - 1] + "…")
        lines.append(f"{'facet':<{fw}}{'system':<9}" + "".join(f"{h:>10}" for _, h in REPORT_COLUMNS))
        for f in facets:
            for i, s in enumerate(systems):
                block = _block(result, s, path)
                if not block or f not in block:
                    continue
                name = (f if len(f) <= fw - 1 else f[:fw - 2] + "…") if i == 0 else ""
                lines.append(f"{name:<{fw}}{s:<9}" + "".join(f"{block[f][k]:>10.4f}" for k, _ in REPORT_COLUMNS))
        lines.append("")
    note = (result.get("bib_eval") or {}).get("note")
    if note:
        lines.append(note)
        lines.append("")
    macro = [(title, _block(result, "tagger", path)["all"]) for path, title in report_parts(result)
             if (_block(result, "tagger", path) or {}).get("all", {}).get("macro_of")]
    if macro:  # a test file and bib-eval: macro-F1 over the labels the set holds
        said = ", ".join(f"{t.split(':')[0]} {b['macro_labels']} of {b['macro_of']}" for t, b in macro[:3])
        line = f"macro-F1 of a test set and of bib-eval: over the labels present in it ({said})"
        lines.append(line if len(line) <= REPORT_WIDTH else line[:REPORT_WIDTH - 2] + "…)")
    n_absent = (result.get("tagger") or {}).get("labels_without_support")
    if n_absent:
        lines.append(f"per-label table: {plural(n_absent, 'label')} with no support in the test set left out")
    if macro or n_absent:
        lines.append("")
    lines += format_comparisons(result)
    return "\n".join(lines)


def write_per_label(fh, rows) -> None:
    """The per-label table as TSV to the text file object ``fh``: label, support, tp, fp, fn,
    precision, recall, f1."""
    import csv

    w = csv.writer(fh, delimiter="\t", lineterminator="\n")
    keys = ["label", "support", "tp", "fp", "fn", "precision", "recall", "f1"]
    w.writerow(keys)
    for r in rows:
        w.writerow([r[k] for k in keys])


def model_card(manifest: dict, result: dict, taxonomy) -> str:
    """The model card (``models/README.md``) as Markdown: corpus, figures per facet and per
    label beside the baseline, thresholds, parameters, date and versions."""
    import json

    t, b = result["tagger"], result.get("baseline")
    L = []
    L.append(f"# Model card: {manifest.get('taxonomy_name', taxonomy.name)}\n")
    from ..model.modeldir import card_header

    created, sizes = card_header(manifest)
    L.append(created)
    L.append(sizes + "\n")
    if "folds" in result:
        L.append(f"## Cross-validated figures ({result['folds']} folds, {plural(result['documents'], 'document')})\n")
        L.append("Everything that learns (vectorizer, boosters, thresholds) was fitted inside each training "
                 "fold. Baseline: one-vs-rest logistic regression, `class_weight='balanced'`, C per label from "
                 "{0.1, 1, 10, 100} by inner cross-validation, thresholds tuned the same way, same folds and features.\n")
    else:
        L.append(f"## Figures on a separate hand-tagged test file ({plural(result['documents'], 'document')})\n")
    for part, title in (("all", "Whole corpus"), ("uniform", "Uniform random arXiv sample only")):
        if not t.get(part):
            continue
        L.append(f"### {title} ({plural(t[part]['all']['documents'], 'document')})\n")
        L.append("| facet | micro-F1 | macro-F1 | samples-F1 | precision (micro) | recall (micro) |"
                 + (" baseline micro-F1 | baseline macro-F1 |" if b else ""))
        L.append("|---|---:|---:|---:|---:|---:|" + ("---:|---:|" if b else ""))
        for f in ["all"] + [x.id for x in taxonomy.facets]:
            r = t[part][f]
            row = f"| {f} | {r['f1_micro']:.3f} | {r['f1_macro']:.3f} | {r['f1_samples']:.3f} | {r['precision_micro']:.3f} | {r['recall_micro']:.3f} |"
            if b:
                row += f" {b[part][f]['f1_micro']:.3f} | {b[part][f]['f1_macro']:.3f} |"
            L.append(row)
        r = t[part]["all"]
        L.append(f"\nRanking (all labels): F1@5 {r['f1@5']:.3f}, NDCG {r['ndcg']:.3f}, precision@1/3/5 "
                 f"{r['precision@1']:.3f} / {r['precision@3']:.3f} / {r['precision@5']:.3f}.\n")
    parts = _parts(t)
    if len(parts) > 1:
        facets = [x.id for x in taxonomy.facets]
        rows_part = "".join(f", the {n}" for n in t.get("rows") or {})  # evaluate --first
        L.append(f"### By part: each sample, each era (by `year`){rows_part}, bib-eval\n")
        L.append("micro-F1 overall and per facet, macro-F1" + (" (tagger / baseline)" if b else "") + "; bib-eval "
                 "(entries of real .bib files, never trained on) is scored by a model trained on the whole corpus.\n")
        L.append("| part | documents | micro-F1 | " + " | ".join(facets) + " | macro-F1 |")
        L.append("|---|---:|---:|" + "---:|" * len(facets) + "---:|")
        bparts = _parts(b) if b else {}
        for name, r in parts.items():
            def cell(get):
                return f"{get(r):.3f}" + (f" / {get(bparts[name]):.3f}" if name in bparts else "")
            L.append(f"| {name} | {r['all']['documents']} | {cell(lambda x: x['all']['f1_micro'])} | "
                     + " | ".join(cell(lambda x, f=f: x[f]["f1_micro"]) for f in facets)
                     + f" | {cell(lambda x: x['all']['f1_macro'])} |")
        L.append("")
    comp = result.get("comparisons")
    if comp:
        peer_parts = {name: {p: _parts(result[p]).get(name) for p in comp} for name in parts}
        L.append("### Beside two pinned peers\n")
        L.append("`plain_lr`: TF-IDF (1-2-grams, min_df 2, sublinear, English stop words) + one logistic regression "
                 "per label (C=10, balanced), threshold 0.5. `svm`: word 1-2-gram + char_wb 2-5-gram TF-IDF, one "
                 "LinearSVC per label (C=1, balanced), one global threshold by out-of-fold micro-F1. Same folds; "
                 "micro-F1, and the tagger's lead with its 95% paired bootstrap interval.\n")
        L.append("| part | tagger | " + " | ".join(f"{p} | lead over {p}" for p in comp) + " |")
        L.append("|---|---:|" + "---:|---:|" * len(comp))
        keys = {"whole corpus": "corpus", "bib-eval": "bib-eval"}
        for name, r in parts.items():
            key = keys.get(name, name.split(" ", 1)[1] if name.startswith(("sample ", "era ")) else name)
            cells = []
            for p in comp:
                pr, c = peer_parts[name].get(p), comp[p].get(key)
                cells.append((f"{pr['all']['f1_micro']:.3f}" if pr else "") + " | "
                             + (f"{c['diff']:+.3f} [{c['lo']:+.3f}, {c['hi']:+.3f}]" if c else ""))
            L.append(f"| {name} | {r['all']['f1_micro']:.3f} | " + " | ".join(cells) + " |")
        L.append("")
    L.append("## Per label (whole corpus)\n")
    L.append("| label | support | precision | recall | F1 |" + (" baseline F1 |" if b else "") + " threshold |")
    L.append("|---|---:|---:|---:|---:|" + ("---:|" if b else "") + "---:|")
    bl = {r["label"]: r for r in b["per_label"]} if b else {}
    for r in t["per_label"]:
        row = f"| {r['label']} | {r['support']} | {r['precision']:.3f} | {r['recall']:.3f} | {r['f1']:.3f} |"
        if b:
            row += f" {bl[r['label']]['f1']:.3f} |"
        row += f" {manifest.get('thresholds', {}).get(r['label'], float('nan')):.3f} |"
        L.append(row)
    L.append("\n## Parameters\n")
    L.append("```json\n" + json.dumps(manifest.get("parameters", {}), indent=1, sort_keys=True) + "\n```\n")
    L.append("Thresholds: per label, tuned on out-of-fold scores of the training corpus to maximise F1 and shrunk "
             "toward the facet's threshold with weight n_pos / (n_pos + 10); `tagger label --threshold` overrides them.\n")
    return "\n".join(L)
