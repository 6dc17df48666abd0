"""Figures saved by ``tagger evaluate --json``, read back for ``evaluate --figures``.

A nested cross-validation beside the peers takes hours; its ``--json`` holds every figure the
report, the page (``--html``), the per-label table and the model card are made from, so these
can be written anew (a card after the model is retrained on the same corpus with the same
settings) without running it again.
"""

from __future__ import annotations

import json

from ..errors import TaggerError


def load_saved_figures(path: str, taxonomy) -> dict:
    """The result dict in the ``--json`` file ``path``, as
    :func:`tagger.evaluation.crossval.cross_validate` or ``evaluate_model`` returned it.

    Raises :class:`TaggerError` (one line naming ``path``) when the file cannot be read, is not
    JSON, is not the figures of an evaluation, or scores other facets or labels than
    ``taxonomy``'s (when it records the taxonomy's fingerprint, that must match too).
    """
    try:
        with open(path, encoding="utf-8") as fh:
            result = json.load(fh)
    except OSError as e:
        raise TaggerError(f"--figures {path}: cannot read it ({e.strerror or e})") from None
    except (UnicodeDecodeError, ValueError) as e:
        raise TaggerError(f"--figures {path}: not JSON ({e})") from None
    t = result.get("tagger") if isinstance(result, dict) else None
    if not isinstance(t, dict) or not isinstance(t.get("all"), dict) or not isinstance(t.get("per_label"), list) \
            or not isinstance(result.get("documents"), int):
        raise TaggerError(f"--figures {path}: not the figures `tagger evaluate --json` writes "
                          "(no tagger figures, per-label table or document count)")
    facets = [f.id for f in taxonomy.facets]
    labels = sorted(taxonomy.label_ids)
    got_facets = sorted(k for k in t["all"] if k != "all")
    got_labels = sorted(r.get("label") for r in t["per_label"] if isinstance(r, dict))
    fp = result.get("taxonomy_fingerprint")
    if got_facets != sorted(facets) or got_labels != labels or (fp is not None and fp != taxonomy.fingerprint()):
        raise TaggerError(f"--figures {path}: these figures are of another taxonomy than {taxonomy.name!r} "
                          f"(facets {', '.join(got_facets) or 'none'}; {len(got_labels)} labels against "
                          f"{len(labels)}); give evaluate the --taxonomy they were made with")
    return result


def check_figures_fit_model(result: dict, manifest: dict, path: str, card: str) -> str | None:
    """Refuse to write the card of the model in ``card`` (its ``manifest``) from saved figures
    ``result`` (read from ``path``) that are not of its corpus and text-space setting.

    Figures that record their corpus (``corpus_sha256``, written by evaluate since these figures could be read back) must name
    the model's; older ones are checked by their document count, and the returned warning says
    so (``None`` when the corpus hash was checked). Raises :class:`TaggerError`.
    """
    from ..model.space import describe_space, same_setting

    if "folds" not in result:
        raise TaggerError(f"--figures {path}: these are figures on a test file; a card from them is written "
                          f"by `tagger evaluate --test FILE --card {card}`")
    if not same_setting(result.get("space"), manifest.get("space")):
        raise TaggerError(f"--figures {path}: the figures are of a model reading "
                          f"{describe_space(result.get('space'))}, but {card} reads "
                          f"{describe_space(manifest.get('space'))}")
    sha = result.get("corpus_sha256")
    if sha is not None:
        if sha != manifest.get("corpus_sha256"):
            raise TaggerError(f"--figures {path}: the figures are of another corpus (sha256 {str(sha)[:12]}) "
                              f"than {card} was trained on ({str(manifest.get('corpus_sha256'))[:12]})")
        return None
    if result["documents"] != manifest.get("corpus_size"):
        raise TaggerError(f"--figures {path}: the figures are of {result['documents']} documents, but {card} "
                          f"was trained on {manifest.get('corpus_size')}")
    return (f"--figures {path} does not record its corpus's sha256 (an older tagger wrote it); "
            f"checked by its document count ({result['documents']}) only")
