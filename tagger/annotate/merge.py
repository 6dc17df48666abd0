"""Merging tagged batches into one corpus (``tagger corpus merge``).

Rules, for rows of the same id in several files (hands):

- the same set of labels: one row, ``annotator`` naming every hand, ``A+B``;
- different label sets: refused (:class:`MergeConflict`, every such id listed), unless the
  adjudication file has a row for the id; then that row's labels are kept and ``annotator``
  is ``A+B, adjudicated C`` (the wording of ``fixtures/corpus.jsonl``);
- an adjudication row also settles an id the hands agree on, or one that only one hand
  tagged; one for an id that no file holds is reported and ignored;
- the other fields (``title``, ``abstract``, ``source``, ...) come from the first hand that
  has them; two hands giving the same id different abstracts is an error (two records
  under one id, not a disagreement about labels); ``suggested`` is true when any hand's
  row was suggested by a model.

Labels of merged rows are sorted, rows keep the order in which their id first appears
(file by file, line by line).
"""

from __future__ import annotations

import re

from ..errors import TaggerError
from .batches import public, read_tagged


class MergeConflict(TaggerError):
    """Ids whose hands gave different label sets and no adjudication settles; ``ids`` lists
    them in order of first appearance.  The message names the first :data:`SHOWN_IDS` of
    them and how many more there are, so that it stays one readable line."""

    #: how many of the ids the message names
    SHOWN_IDS = 10

    def __init__(self, ids: list[str], files: list[str]):
        self.ids = ids
        shown = ", ".join(ids[:self.SHOWN_IDS])
        if len(ids) > self.SHOWN_IDS:
            shown += f" and {len(ids) - self.SHOWN_IDS} more"
        super().__init__(
            f"{len(ids)} id{'s' if len(ids) != 1 else ''} tagged with different labels in "
            f"{' and '.join(files) if len(files) <= 3 else 'different files'}, not settled by --adjudicated: "
            f"{shown} (tagger corpus agreement A B --disagreements FILE writes them out for adjudication)")


def _fold(text) -> str:
    return re.sub(r"\s+", " ", text).strip().lower() if isinstance(text, str) else ""


def _hands(names: list[str]) -> str:
    """Distinct annotator names, in order, joined by ``+``."""
    out = []
    for n in names:
        if n not in out:
            out.append(n)
    return "+".join(out)


def merge_batches(paths: list[str], adjudicated: str | None = None, warn=None) -> list[dict]:
    """The merged corpus rows of the tagged batches ``paths`` (see the module docstring).

    ``adjudicated``: a file of rows ``id``, ``labels``, ``annotator`` (the format of
    ``fixtures/agreement/adjudicated.jsonl``).  ``warn(msg)`` receives one line per
    adjudication row that settles no id of the inputs.

    Returns the rows as dicts (field order of the first hand; ``labels`` and ``annotator``
    replaced).  Raises :class:`MergeConflict` for unsettled disagreements and
    :class:`tagger.corpus.InputError` for unreadable files, bad rows, duplicate ids within
    one file, or one id with two different abstracts.
    """
    by_id: dict[str, list[dict]] = {}
    for p in paths:
        for row in read_tagged(p):
            by_id.setdefault(row["id"], []).append(row)
    settled = {r["id"]: r for r in read_tagged(adjudicated)} if adjudicated else {}
    for rid, r in settled.items():
        if rid not in by_id and warn:
            warn(f"{adjudicated}:{r['_line']}: {rid}: in none of the files merged; ignored")
    out, conflicts = [], []
    for rid, rows in by_id.items():
        texts = [(r, _fold(r.get("abstract"))) for r in rows if _fold(r.get("abstract"))]
        for r, t in texts[1:]:
            if t != texts[0][1]:
                first = texts[0][0]
                raise TaggerError(f"{r['_file']}:{r['_line']}: {rid}: a different abstract from the one at "
                                  f"{first['_file']}:{first['_line']} (two records under one id)")
        merged: dict = {}
        for r in rows:
            for k, v in public(r).items():
                if k not in merged or merged[k] in (None, ""):
                    merged[k] = v
        hands = _hands([r["annotator"] for r in rows])
        label_sets = {frozenset(r["labels"]) for r in rows}
        if rid in settled:
            adj = settled[rid]
            merged["labels"] = sorted(set(adj["labels"]))
            merged["annotator"] = f"{hands}, adjudicated {adj['annotator']}"
        elif len(label_sets) > 1:
            conflicts.append(rid)
            continue
        else:
            merged["labels"] = sorted(label_sets.pop())
            merged["annotator"] = hands
        if any(r.get("suggested") is True for r in rows):
            merged["suggested"] = True
        out.append(merged)
    if conflicts:
        raise MergeConflict(conflicts, list(paths))
    return out
