"""What an annotation session does, apart from the screen: the records still to tag, the
labels on screen, saving, going back, skipping and undoing.  ``tui`` draws it and maps keys
to these methods; tests drive it directly.

- **done** saves the record on screen (appended when new; an earlier record whose labels
  changed is rewritten in place, atomically) and shows the next one;
- **skip** leaves the record unsaved and puts it at the end of the queue;
- **back** shows the record done before (the corpus file's rows, so also those of earlier
  runs); **done** there saves any change and goes forward again;
- **undo** takes back the last label toggle on screen, or, when there is none, the last
  save: a new record is removed from the file and shown again, an edit is reverted;
- a label of an exclusive facet is a radio button: choosing it clears the facet's others,
  choosing it again clears it.
"""

from __future__ import annotations

import datetime as _dt
import string

from ..errors import TaggerError
from .pool import text_key

#: the keys that toggle labels, in taxonomy order
LABEL_KEYS = string.digits[1:] + "0" + string.ascii_lowercase + string.ascii_uppercase


def label_keys(taxonomy) -> dict[str, str]:
    """``{key: label id}`` for every label of ``taxonomy``, in order (1-9, 0, a-z, A-Z).
    Raises TaggerError when the taxonomy has more labels than keys."""
    ids = taxonomy.label_ids
    if len(ids) > len(LABEL_KEYS):
        raise TaggerError(f"{taxonomy.path or 'taxonomy'}: {len(ids)} labels, but one screen has keys for "
                          f"{len(LABEL_KEYS)}; annotate with a taxonomy of fewer labels")
    return dict(zip(LABEL_KEYS, ids))


def now_iso() -> str:
    """The current time, ISO 8601 in UTC to the second (``2026-12-01T09:30:00Z``)."""
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


class Session:
    """One annotator working through pool rows into a :class:`~tagger.annotate.store.CorpusStore`.

    ``rows``: pool rows in the order to show them; those already in the store (by id, else
    by text) and repeats are left out.  ``sample``: the ``sample`` field of new rows unless a
    pool row has its own (the order used); ``licence``: the ``licence`` of new rows unless a
    pool row has its own.  ``suggest(row)``: the labels to start a new record from, or None.
    """

    def __init__(self, taxonomy, store, rows, annotator, sample, licence="unknown", suggest=None, clock=now_iso):
        self.taxonomy, self.store, self.annotator = taxonomy, store, annotator
        self.sample, self.licence, self.suggest, self.clock = sample, licence, suggest, clock
        self.order = {lb: i for i, lb in enumerate(taxonomy.label_ids)}
        self.exclusive = {f.id for f in taxonomy.facets if f.kind == "exclusive"}
        self.pending: list[dict] = []
        seen_ids, seen_keys = set(), set()
        for r in rows:
            key = text_key(r["abstract"])
            if store.find(r["id"], r["abstract"]) is not None or r["id"] in seen_ids or key in seen_keys:
                continue
            seen_ids.add(r["id"])
            seen_keys.add(key)
            self.pending.append(r)
        self.skipped: list[str] = []  # ids skipped, in order: they stay at the end of the queue
        self.back_pos: int | None = None  # index into store.rows while going back, else None (the queue's front)
        self.changes: list[tuple] = []  # saves to undo: ("new", id, pool row) or ("edit", id, old row)
        self.added = 0  # new records saved in this run (minus those undone)
        self.message = ""
        self._show()

    # -- what is on screen ----------------------------------------------------------------
    def _show(self, labels=None, suggested=False):
        """Put the current record's labels on screen: ``labels`` if given, else its saved
        ones, else a suggestion, else none."""
        self.toggles: list[list[str]] = []
        self.suggested = suggested
        row = self.current
        if row is None:
            self.labels = []
        elif labels is not None:
            self.labels = list(labels)
        elif self.back_pos is not None:
            self.labels = list(row.get("labels", []))
            self.suggested = bool(row.get("suggested"))
        else:
            self.labels = []
            if self.suggest:
                s = self.suggest(row)
                if s is not None:
                    self.labels, self.suggested = self._sorted(s), True

    @property
    def current(self) -> dict | None:
        """The record on screen (a store row while going back, else the queue's front), or None when all are done."""
        if self.back_pos is not None:
            return self.store.rows[self.back_pos]
        return self.pending[0] if self.pending else None

    @property
    def finished(self) -> bool:
        return self.current is None

    def position(self) -> tuple[int, int]:
        """``(n, total)``: the record on screen is the n-th of the corpus rows plus the queue."""
        done = len(self.store.rows)
        n = self.back_pos + 1 if self.back_pos is not None else done + 1
        return n, done + len(self.pending)

    def _sorted(self, labels):
        return sorted(dict.fromkeys(lb for lb in labels if lb in self.order), key=self.order.__getitem__)

    # -- actions --------------------------------------------------------------------------
    def toggle(self, label: str) -> None:
        """Turn ``label`` on or off on screen (a radio button in an exclusive facet)."""
        if self.current is None:
            return
        self.toggles.append(list(self.labels))
        facet = label.split(":", 1)[0]
        if label in self.labels:
            self.labels = [lb for lb in self.labels if lb != label]
        else:
            if facet in self.exclusive:
                self.labels = [lb for lb in self.labels if lb.split(":", 1)[0] != facet]
            self.labels = self._sorted(self.labels + [label])
        self.message = ""

    def _row(self, base: dict) -> dict:
        row = {"id": base["id"], "title": base.get("title", ""), "abstract": base["abstract"],
               "labels": self._sorted(self.labels), "annotator": self.annotator,
               "source": base.get("source", ""), "sample": base.get("sample") or self.sample}
        if base.get("year") is not None:
            row["year"] = base["year"]
        row["licence"] = base.get("licence") or base.get("license") or self.licence
        row["tagged_at"] = self.clock()
        if self.suggested:
            row["suggested"] = True
        return row

    def done(self) -> None:
        """Save the record on screen and show the next one."""
        row = self.current
        if row is None:
            return
        if self.back_pos is not None:
            old = self.store.rows[self.back_pos]
            if self._sorted(old.get("labels", [])) != self._sorted(self.labels):
                new = {**old, "labels": self._sorted(self.labels), "annotator": self.annotator,
                       "tagged_at": self.clock()}
                self.store.replace(self.back_pos, new)
                self.changes.append(("edit", old["id"], old))
                self.message = f"{old['id']}: changed"
            self.back_pos = self.back_pos + 1 if self.back_pos + 1 < len(self.store.rows) else None
        else:
            self.store.append(self._row(row))
            self.pending.pop(0)
            self.changes.append(("new", row["id"], row))
            self.added += 1
            self.message = ""
        self._show()

    def skip(self) -> None:
        """Leave the record on screen unsaved; a queued one goes to the end of the queue."""
        if self.current is None:
            return
        if self.back_pos is not None:
            self.back_pos = self.back_pos + 1 if self.back_pos + 1 < len(self.store.rows) else None
        else:
            row = self.pending.pop(0)
            self.pending.append(row)
            if row["id"] not in self.skipped:
                self.skipped.append(row["id"])
            self.message = f"{row['id']}: skipped; it comes back at the end"
        self._show()

    def back(self) -> None:
        """Show the record done before the one on screen (unsaved toggles are dropped)."""
        if self.back_pos is None:
            if not self.store.rows:
                self.message = "nothing before this one"
                return
            self.back_pos = len(self.store.rows) - 1
        elif self.back_pos == 0:
            self.message = "this is the first record"
            return
        else:
            self.back_pos -= 1
        self.message = ""
        self._show()

    def undo(self) -> None:
        """Take back the last toggle on screen, else the last save."""
        if self.toggles:
            self.labels = self.toggles.pop()
            self.message = "toggle undone"
            return
        if not self.changes:
            self.message = "nothing to undo"
            return
        kind, rid, before = self.changes.pop()
        i = self.store.by_id[str(rid)]
        if kind == "new":
            saved = self.store.rows[i]
            self.store.replace(i, None)
            self.pending.insert(0, before)
            self.added -= 1
            self.back_pos = None
            self._show(saved["labels"], bool(saved.get("suggested")))
            self.message = f"{rid}: taken out of the corpus; tag it again"
        else:
            self.store.replace(i, before)
            self.back_pos = i
            self._show()
            self.message = f"{rid}: change undone"

    def reorder(self, uncertainty: dict) -> None:
        """Rank the queue by ``uncertainty`` (id -> float, highest first); the record on
        screen stays, skipped ones stay at the end, unknown ids after the known."""
        if len(self.pending) < 2:
            return
        head = [] if self.back_pos is not None else self.pending[:1]
        rest = self.pending[len(head):]
        skipped = [r for r in rest if r["id"] in self.skipped]
        others = [r for r in rest if r["id"] not in self.skipped]
        others.sort(key=lambda r: -uncertainty.get(r["id"], float("-inf")))
        skipped.sort(key=lambda r: self.skipped.index(r["id"]))
        self.pending = head + others + skipped
