"""Reading tagged batches: JSON Lines files of hand-tagged rows (``id``, ``labels``,
``annotator`` and any other fields), as ``tagger annotate`` writes them and as
``tagger corpus merge`` and ``tagger corpus agreement`` read them.
"""

from __future__ import annotations

from ..corpus import InputError, read_jsonl


def read_tagged(path: str, need_annotator: bool = True) -> list[dict]:
    """The rows of a tagged batch, in file order, each a dict of its fields plus ``_line``
    (the 1-based line it is on) and ``_file`` (``path``).

    Every row needs ``id`` (a non-empty string), ``labels`` (a list of strings) and, with
    ``need_annotator``, ``annotator`` (a non-empty string); an id may appear once.

    Raises :class:`tagger.corpus.InputError` naming ``FILE:LINE``, the id and what is wrong,
    for a missing file, a line that is not a JSON object or a row that breaks these rules.
    """
    rows, seen = [], {}
    for rec in read_jsonl(path):
        f = rec.fields
        where = f"{path}:{rec.line}"
        rid = f.get("id")
        if rec.id_added or not isinstance(rid, str) or not rid:
            raise InputError(f"{where}: a row needs 'id', a non-empty string")
        labels = f.get("labels")
        if not isinstance(labels, list) or not all(isinstance(x, str) for x in labels):
            raise InputError(f"{where}: {rid}: needs 'labels', a list of label ids")
        if need_annotator and not (isinstance(f.get("annotator"), str) and f["annotator"].strip()):
            raise InputError(f"{where}: {rid}: no 'annotator' (who read and tagged it)")
        if rid in seen:
            raise InputError(f"{where}: {rid}: duplicate id (first at line {seen[rid]})")
        seen[rid] = rec.line
        rows.append({**f, "_line": rec.line, "_file": path})
    return rows


def public(row: dict) -> dict:
    """``row`` without the ``_line``/``_file`` bookkeeping of :func:`read_tagged`."""
    return {k: v for k, v in row.items() if not k.startswith("_")}
