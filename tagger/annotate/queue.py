"""The records a model is least sure about: uncertainty sampling for active learning.

The measure is **margin sampling against the decision thresholds** (uncertainty sampling,
Settles 2009, "Active Learning Literature Survey", section 3.1, margin of Scheffer et al.
2001, taken per label for a multi-label model): a label's decision is "yes" when its
probability ``p`` reaches its threshold ``t``, so its margin is how far ``p`` is from ``t``,
as a share of the room on that side: ``(p - t) / (1 - t)`` above, ``(t - p) / t`` below
(0 at the threshold, 1 at certainty).  A record's uncertainty is ``1 - `` its smallest
margin over all labels: 1 when some label sits exactly on its threshold.  Records are
ranked by uncertainty, highest first, ties in pool order.

Records the model abstains on (too short, not English) are never queued: a label for them
would teach it nothing it uses.
"""

from __future__ import annotations

import heapq
import itertools

BATCH = 256


def margins(proba, thresholds):
    """Per-label margins (see the module docstring) of probabilities ``proba`` (n, L)
    against ``thresholds`` (L,): an (n, L) float array in [0, 1]."""
    import numpy as np

    t = np.clip(np.asarray(thresholds, dtype=float), 1e-6, 1 - 1e-6)
    above = proba >= t
    return np.where(above, (proba - t) / (1 - t), (t - proba) / t).clip(0.0, 1.0)


def score_rows(model, rows, min_words=None):
    """Score pool rows (dicts with ``abstract`` and ``title``) with ``model``.

    Returns one entry per row, in order: None where the model abstains, else
    ``(uncertainty, nearest_label, proba)`` with ``proba`` the (L,) probabilities in
    ``model.labels`` order.
    """
    from ..model.abstain import MIN_WORDS, not_english_reason, too_short_reason
    from ..text import document_text

    min_words = MIN_WORDS if min_words is None else min_words
    out = [None] * len(rows)
    todo = [i for i, r in enumerate(rows) if not too_short_reason(r["abstract"], min_words)]
    if not todo:
        return out
    batch = model.transform([document_text(rows[i], "abstract", "title") for i in todo])
    proba = model._link(model.raw_scores_of(batch))  # one transform serves the language test and the scores
    m = margins(proba, model.thresholds)
    nearest = m.argmin(axis=1)
    for k, i in enumerate(todo):
        if not_english_reason(int(batch.n_tokens[k]), int(batch.n_function_words[k])):
            continue
        out[i] = (float(1.0 - m[k, nearest[k]]), model.labels[int(nearest[k])], proba[k])
    return out


def queue(model, rows, n, exclude_ids=(), exclude_keys=(), min_words=None):
    """The ``n`` pool rows the model is least sure about, most uncertain first.

    ``rows``: an iterable of pool rows (:func:`tagger.annotate.pool.pool_rows`), read once,
    in batches (memory holds ``n`` rows plus one batch).  Rows whose id is in
    ``exclude_ids`` or whose :func:`~tagger.annotate.pool.text_key` is in
    ``exclude_keys`` are left out, and so is a row repeating an earlier one (same id or same
    text).  Returns ``(chosen, counts)``: ``chosen`` a list of ``(row, uncertainty,
    nearest_label, proba)``, ``counts`` ``{"read", "excluded", "abstained"}``.
    """
    from .pool import text_key

    seen_ids, seen_keys = set(exclude_ids), set(exclude_keys)
    heap: list = []  # (uncertainty, -order, entry): the n most uncertain so far, least uncertain on top
    counts = {"read": 0, "excluded": 0, "abstained": 0}
    order = itertools.count()
    it = iter(rows)
    while chunk := list(itertools.islice(it, BATCH)):
        batch = []
        for r in chunk:
            key = text_key(r["abstract"])
            if r["id"] in seen_ids or key in seen_keys:
                counts["excluded"] += 1
                continue
            seen_ids.add(r["id"])
            seen_keys.add(key)
            batch.append(r)
        counts["read"] += len(chunk)
        for r, s in zip(batch, score_rows(model, batch, min_words)):
            k = next(order)
            if s is None:
                counts["abstained"] += 1
                continue
            item = (s[0], -k, (r, *s))
            if len(heap) < n:
                heapq.heappush(heap, item)
            elif n and item[:2] > heap[0][:2]:
                heapq.heapreplace(heap, item)
    chosen = [e for _, _, e in sorted(heap, key=lambda x: (-x[0], -x[1]))]
    return chosen, counts
