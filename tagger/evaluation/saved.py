"""Figures saved by ``tagger evaluate --json``, read back for ``evaluate --figures``.

A nested cross-validation beside the peers takes hours; its ``--json`` holds every figure the
report, the page (``--html``), the per-label table and the model card are made from, so these
can be written anew (a card after the model is retrained on the same corpus with the same
settings) without running it again.
"""

from __future__ import annotations

import json

from ..errors import TaggerError

#: keys whose values are rates in [0, 1] (per facet, per label, ranking, threshold curves)
_RATES = ("f1", "precision", "recall", "ndcg")


def load_saved_figures(path: str, taxonomy) -> dict:
    """The result dict in the ``--json`` file ``path`` (gzip or not), as
    :func:`tagger.evaluation.crossval.cross_validate` or ``evaluate_model`` returned it.

    Raises :class:`TaggerError` (one line naming ``path``) when the file cannot be read, is not
    JSON, is not the figures of an evaluation (types, NaN or a rate outside [0, 1]), or scores
    other facets or labels than ``taxonomy``'s (its recorded fingerprint must match too).
    """
    if not path:
        raise TaggerError("--figures: empty file name; give the --json file of an earlier `tagger evaluate`")
    where = f"--figures {path}"
    try:
        with open(path, "rb") as fh:
            data = fh.read()
        if data[:2] == b"\x1f\x8b":
            import gzip

            data = gzip.decompress(data)
    except OSError as e:
        raise TaggerError(f"{where}: cannot read it ({e.strerror or e})") from None
    try:
        result = json.loads(data.decode("utf-8"), parse_constant=_no_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise TaggerError(f"{where}: not JSON ({str(e) or type(e).__name__})") from None
    problem = _shape_problem(result)
    if problem:
        raise TaggerError(f"{where}: not the figures `tagger evaluate --json` writes ({problem})")
    _check_taxonomy(result, taxonomy, where)
    return result


def _no_constant(name):
    raise ValueError(f"{name} is not a figure")


def _shape_problem(result) -> str | None:
    """What is wrong with the outline of a result dict, or None."""
    t = result.get("tagger") if isinstance(result, dict) else None
    if not isinstance(t, dict) or not isinstance(t.get("all"), dict) or not isinstance(t.get("per_label"), list):
        return "no tagger figures or per-label table"
    n = result.get("documents")
    if not _count(n) or n < 1:
        return f"documents is {n!r}, not a positive count"
    if "folds" in result and (not _count(result["folds"]) or result["folds"] < 2):
        return f"folds is {result['folds']!r}, not a count of 2 or more"
    if not all(isinstance(r, dict) and isinstance(r.get("label"), str) for r in t["per_label"]):
        return "a per-label row without its label"
    if not isinstance(t["all"].get("all"), dict) or t["all"]["all"].get("documents") != n:
        return "the whole corpus's figures do not count its documents"
    sp = result.get("space")
    if sp is not None and not (isinstance(sp, dict) and isinstance(sp.get("sha256"), str)):
        return f"space is {sp!r}, not a recorded text space"
    return _bad_rate(result, "")


def _count(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _bad_rate(node, at: str) -> str | None:
    """The first rate (a key starting with f1, precision, recall or ndcg) that is not a number
    in [0, 1], as "KEY is VALUE", searched depth-first."""
    if isinstance(node, dict):
        for k, v in node.items():
            if isinstance(k, str) and k.startswith(_RATES):
                for x in (v if isinstance(v, list) else [v]):
                    if isinstance(x, bool) or not isinstance(x, (int, float)) or not 0 <= x <= 1:
                        return f"{at}{k} is {x!r}, not a rate in [0, 1]"
            else:
                found = _bad_rate(v, f"{at}{k}.")
                if found:
                    return found
    elif isinstance(node, list):
        for v in node:
            found = _bad_rate(v, at)
            if found:
                return found
    return None


def _check_taxonomy(result: dict, taxonomy, where: str) -> None:
    t = result["tagger"]
    facets = sorted(f.id for f in taxonomy.facets)
    got_facets = sorted(k for k in t["all"] if k != "all")
    labels, got = set(taxonomy.label_ids), {r["label"] for r in t["per_label"]}
    # a test file's table leaves out the labels it never holds; a cross-validation's has all
    missing = sorted(labels - got) if "folds" in result else []
    extra = sorted(got - labels)
    fp = result.get("taxonomy_fingerprint")
    if got_facets == facets and not missing and not extra and (fp is None or fp == taxonomy.fingerprint()):
        return
    if got_facets != facets:
        what = f"facets {', '.join(got_facets) or 'none'} against {', '.join(facets)}"
    elif missing or extra:
        what = "; ".join(f"{n} {', '.join(x[:3])}{' ...' if len(x) > 3 else ''}"
                         for n, x in (("no figures for", missing), ("figures for unknown", extra)) if x)
    else:
        what = "the same labels, but another taxonomy fingerprint: label order, facet kinds or thresholds differ"
    raise TaggerError(f"{where}: these figures are of another taxonomy than {taxonomy.name!r} ({what}); "
                      "give evaluate the --taxonomy they were made with")


def check_figures_fit_model(result: dict, manifest: dict, path: str, card: str) -> str | None:
    """Refuse to write the card of the model in ``card`` (its ``manifest``) from saved figures
    ``result`` (read from ``path``) that are not of its corpus and text-space setting.

    The document count must be the model's corpus size; figures that record their corpus
    (``corpus_sha256``) must name the model's. When either side does not record it, the count
    alone is checked and the returned warning says so (``None`` when the hash was checked).
    Raises :class:`TaggerError`.
    """
    from ..model.space import describe_space, same_setting

    where = f"--figures {path}"
    if "folds" not in result:
        raise TaggerError(f"{where}: these are figures on a test file; a card from them is written "
                          f"by `tagger evaluate --test FILE --card {card}`")
    if not same_setting(result.get("space"), manifest.get("space")):
        raise TaggerError(f"{where}: the figures are of a model reading {describe_space(result.get('space'))}, "
                          f"but {card} reads {describe_space(manifest.get('space'))}")
    if result["documents"] != manifest.get("corpus_size"):
        raise TaggerError(f"{where}: the figures are of {result['documents']} documents, but {card} "
                          f"was trained on {manifest.get('corpus_size')}")
    sha, theirs = result.get("corpus_sha256"), manifest.get("corpus_sha256")
    if sha is not None and theirs is not None:
        if sha != theirs:
            raise TaggerError(f"{where}: the figures are of another corpus (sha256 {str(sha)[:12]}) "
                              f"than {card} was trained on ({str(theirs)[:12]})")
        return None
    who = f"{where} does not" if sha is None else f"{card}'s manifest does not"
    return (f"{who} record its corpus's sha256 (an older tagger wrote it); "
            f"checked by its document count ({result['documents']}) only")

