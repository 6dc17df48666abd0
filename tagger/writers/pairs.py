"""Annif-style pairs: one ``id<TAB>label<TAB>score`` row per tag, as Annif prints suggestions;
a record without tags gets one row with an empty label and score.  Ids are escaped as in TSV."""

from __future__ import annotations

from .table import tsv_escape

FORMATS = ("pairs",)


def render(rec, pred, renderer) -> str:
    """The rows of one record."""
    rid = tsv_escape(rec.id(renderer.id_field))
    if pred.tags:
        return "".join(f"{rid}\t{t}\t{pred.scores[t]:.4f}\n" for t in pred.tags)
    return f"{rid}\t\t\n"
