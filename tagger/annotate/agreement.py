"""Inter-annotator agreement between two tagged batches (``tagger corpus agreement``).

Over the ids both files hold, each file's labels make a 0/1 matrix (ids x labels); with
one file taken as reference and the other as prediction (the figures are symmetric):

- **micro-F1** over all labels, and per facet (the labels whose id starts ``facet:``),
  scikit-learn's ``f1_score(average="micro")``: pooled over every (id, label) decision;
  undefined (None, printed ``n/a``) where neither file gives any label of the facet;
- **Cohen's kappa** per label, scikit-learn's ``cohen_kappa_score``: agreement on the label's
  yes/no decisions corrected for the agreement expected by chance from each annotator's
  rate of yes; undefined where both annotators give the label to every id or to none.

``by`` splits every figure by a field of the rows (``sample``): one group per value, beside
the group ``all``.
"""

from __future__ import annotations

import json

from .batches import public

ALL = "all"


def _facet(label: str) -> str:
    return label.split(":", 1)[0]


def _figures(A, B, labels) -> dict:
    """micro-F1 overall and per facet, kappa and positive counts per label, for 0/1 arrays
    ``A``, ``B`` (n_ids, n_labels)."""
    import warnings

    import numpy as np
    from sklearn.metrics import cohen_kappa_score, f1_score

    def micro(cols):
        a, b = A[:, cols], B[:, cols]
        if not a.any() and not b.any():
            return None
        if len(cols) == 1:  # scikit-learn would read one column as binary classes; a zero column changes nothing
            a, b = np.hstack([a, np.zeros_like(a)]), np.hstack([b, np.zeros_like(b)])
        return float(f1_score(a, b, average="micro", zero_division=0))

    facets = list(dict.fromkeys(_facet(lb) for lb in labels))
    out = {"ids": int(A.shape[0]), "identical": int((A == B).all(axis=1).sum()),
           "micro_f1": {ALL: micro(list(range(len(labels))))}, "labels": {}}
    for f in facets:
        out["micro_f1"][f] = micro([i for i, lb in enumerate(labels) if _facet(lb) == f])
    for i, lb in enumerate(labels):
        a, b = A[:, i], B[:, i]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            k = cohen_kappa_score(a, b, labels=[0, 1])
        out["labels"][lb] = {"kappa": None if np.isnan(k) else float(k), "a": int(a.sum()), "b": int(b.sum()),
                             "both": int((a & b).sum())}
    return out


def agreement(a_rows: list[dict], b_rows: list[dict], labels: list[str] | None = None,
              by: str | None = None) -> dict:
    """Agreement of two annotators' rows (dicts with ``id`` and ``labels``, as
    :func:`tagger.annotate.batches.read_tagged` returns them) over the ids both hold.

    ``labels``: the label ids to compare, in order (a taxonomy's); default: every label
    either file uses, sorted.  ``by``: a field to split by (the A row's value, else B's;
    ``(none)`` where neither has it).

    Returns ``{"ids_both", "only_a", "only_b", "labels": [...], "groups": {name: figures}}``
    where figures are ``{"ids", "identical", "micro_f1": {"all"|facet: float|None},
    "labels": {label: {"kappa": float|None, "a", "b", "both"}}}`` (counts of ids).
    Raises ValueError when the files share no id.
    """
    import numpy as np

    b_by = {r["id"]: r for r in b_rows}
    a_ids = {r["id"] for r in a_rows}
    common = [r for r in a_rows if r["id"] in b_by]
    if not common:
        raise ValueError("the two files have no id in common")
    if labels is None:
        labels = sorted({lb for r in common for lb in r["labels"]} | {lb for r in common for lb in b_by[r["id"]]["labels"]})
    col = {lb: i for i, lb in enumerate(labels)}

    def matrix(rows):
        M = np.zeros((len(rows), len(labels)), dtype=np.int8)
        for n, r in enumerate(rows):
            for lb in r["labels"]:
                if lb in col:
                    M[n, col[lb]] = 1
        return M

    A, B = matrix(common), matrix([b_by[r["id"]] for r in common])
    groups = {ALL: _figures(A, B, labels)}
    if by:
        keys = []
        for r in common:
            v = r.get(by, b_by[r["id"]].get(by))
            keys.append("(none)" if v in (None, "") else str(v))
        for g in dict.fromkeys(keys):
            idx = [i for i, k in enumerate(keys) if k == g]
            groups[g] = _figures(A[idx], B[idx], labels)
    return {"ids_both": len(common), "only_a": len(a_ids - set(b_by)), "only_b": len(set(b_by) - a_ids),
            "labels": list(labels), "groups": groups}


def disagreements(a_rows: list[dict], b_rows: list[dict]) -> list[dict]:
    """The ids both hold whose label sets differ, in A's order, ready for adjudication:
    ``{"id", "title", "abstract" (when either row has them), "a": {"file", "annotator",
    "labels"}, "b": {...}, "only_a": [...], "only_b": [...]}`` (labels sorted)."""
    b_by = {r["id"]: r for r in b_rows}
    out = []
    for a in a_rows:
        b = b_by.get(a["id"])
        if b is None or set(a["labels"]) == set(b["labels"]):
            continue
        row = {"id": a["id"]}
        for k in ("title", "abstract"):
            v = a.get(k) or b.get(k)
            if v:
                row[k] = v
        for name, r in (("a", a), ("b", b)):
            row[name] = {"file": r.get("_file"), "annotator": r.get("annotator"), "labels": sorted(set(r["labels"]))}
        row["only_a"] = sorted(set(a["labels"]) - set(b["labels"]))
        row["only_b"] = sorted(set(b["labels"]) - set(a["labels"]))
        out.append(public(row))
    return out


def _num(v, digits=3) -> str:
    return "n/a" if v is None else f"{v:.{digits}f}"


def format_agreement(result: dict, a_name: str, b_name: str) -> str:
    """The figures of :func:`agreement` as plain-text tables: a header line, micro-F1 per
    facet and Cohen's kappa per label, one column per group."""
    groups = result["groups"]
    names = list(groups)
    heads = [f"{g} ({groups[g]['ids']})" for g in names]
    L = [f"{a_name} vs {b_name}: {result['ids_both']} ids in both (only in the first: {result['only_a']}, "
         f"only in the second: {result['only_b']}); identical label sets: {groups[ALL]['identical']} of "
         f"{groups[ALL]['ids']}", ""]
    facets = list(groups[ALL]["micro_f1"])
    w0 = max(len("micro-F1"), *(len(f) for f in facets))
    widths = [max(7, len(h)) for h in heads]
    L.append("  ".join(["micro-F1".ljust(w0)] + [h.rjust(w) for h, w in zip(heads, widths)]))
    for f in facets:
        L.append("  ".join([f.ljust(w0)] + [_num(groups[g]["micro_f1"][f]).rjust(w) for g, w in zip(names, widths)]))
    L.append("")
    labels = result["labels"]
    w0 = max(len("Cohen's kappa"), *(len(lb) for lb in labels)) if labels else len("Cohen's kappa")
    L.append("  ".join(["Cohen's kappa".ljust(w0)] + [h.rjust(w) for h, w in zip(heads, widths)]
                       + ["first", "second", "both"]))
    for lb in labels:
        c = groups[ALL]["labels"][lb]
        L.append("  ".join([lb.ljust(w0)] + [_num(groups[g]["labels"][lb]["kappa"]).rjust(w) for g, w in zip(names, widths)]
                           + [str(c["a"]).rjust(5), str(c["b"]).rjust(6), str(c["both"]).rjust(4)]))
    L.append("")
    L.append("first/second/both: ids given the label by the first file, the second, both (all ids in both files)")
    return "\n".join(L) + "\n"


def to_json(result: dict) -> str:
    """The figures of :func:`agreement` as one JSON document."""
    return json.dumps(result, indent=1, ensure_ascii=False) + "\n"
