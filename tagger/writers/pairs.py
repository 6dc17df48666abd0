"""Annif-style pairs: one ``id<TAB>label<TAB>score`` row per tag, as Annif prints suggestions;
a record without tags gets one row with an empty label and score, and a tag trusted from the
record without a score of its own (``tagger filter`` of tagged records) an empty score.  Ids
are escaped as in TSV."""

from __future__ import annotations

from .table import tsv_escape

FORMATS = ("pairs",)


def render(rec, pred, renderer) -> str:
    """The rows of one record."""
    rid = tsv_escape(rec.id(renderer.id_field))
    if pred.tags:
        return "".join(f"{rid}\t{t}\t{_score(pred.scores.get(t))}\n" for t in pred.tags)
    return f"{rid}\t\t\n"


def _score(v) -> str:
    return f"{v:.4f}" if isinstance(v, (int, float)) and not isinstance(v, bool) else ""
