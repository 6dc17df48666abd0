"""``tagger filter``'s records: those that carry tags keep them (unless retagged), the
others are tagged on the fly (:func:`trusted_or_tagged`)."""

from __future__ import annotations

from ..readers.base import InputError
from ..readers.fields import FieldCheck, FieldWatch
from .batches import BATCH_SIZE, batched
from .labeling import _own_fields, label_stream


def _carried(fields: dict, need_scores: bool):
    """The ``(tags, scores)`` a record already carries, or None when it must be tagged.

    JSON records carry a list and a dict; CSV/TSV rows carry ``a;b`` and a JSON string.
    """
    import json

    tags, scores = fields.get("tags"), fields.get("scores")
    if isinstance(tags, str):
        tags = [t for t in tags.split(";") if t]
    if isinstance(scores, str):
        try:
            scores = json.loads(scores) if scores.strip() else {}
        except ValueError:
            scores = None
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        return None
    if scores is not None and not (isinstance(scores, dict) and all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in scores.values())):
        scores = None
    if need_scores and scores is None:
        return None
    return tags, dict(scores or {})


def _carried_bib(fields: dict, vocab, need_scores: bool):
    """The tags of a BibTeX record: the taxonomy's label ids in its ``keywords`` (None when
    there are none, or when scores are needed: keywords carry none)."""
    if need_scores or vocab is None:
        return None
    from ..bib.merge import tool_terms

    tags = tool_terms(fields.get("keywords") or "", vocab)
    return (tags, {}) if tags else None


def trusted_or_tagged(records, get_model, *, retag=False, need_scores=False, batch_size=BATCH_SIZE, jobs=1,
                      vocabulary=None, **kw):
    """Like :func:`label_stream`, but a record that already carries ``tags`` (and, when
    ``need_scores``, ``scores``) keeps them unless ``retag``; only the others are tagged, by
    the model that ``get_model()`` returns (called at most once, and only if needed).  A
    record read from BibTeX carries the taxonomy's label ids found in its ``keywords``
    (``vocabulary``: a :class:`tagger.bib.Vocabulary` of the model's facets).

    Records are taken ``2 * jobs`` batches at a time, so that the ones to tag fill the
    workers' batches; memory stays bounded by that."""
    from ..model import Prediction
    from ..readers.fields import document

    model = None
    watch = FieldWatch(kw.get("text_field", "abstract"))
    text_field, title_field = kw.get("text_field", "abstract"), kw.get("title_field", "title")
    for chunk in batched(records, batch_size * 2 * max(jobs, 1)):
        carried = [None if retag else (_carried_bib(r.fields, vocabulary, need_scores) if r.entry is not None
                                       else _carried(r.fields, need_scores)) for r in chunk]
        todo = [r for r, c in zip(chunk, carried) if c is None]
        tagged, failure = {}, None
        if todo:
            if model is None:
                model = get_model()
            try:
                for rec, pred in label_stream(model, todo, batch_size=batch_size, jobs=jobs, field_check=False, **kw):
                    tagged[id(rec)] = pred
            except InputError as e:  # on_error="fail": the records before the bad one still count
                failure = e
        out = []
        for rec, c in zip(chunk, carried):
            if c is not None:
                out.append((rec, Prediction(c[0], c[1])))
            elif id(rec) in tagged:
                out.append((rec, tagged[id(rec)]))
            elif failure is not None:  # the bad record: nothing after it
                break
        if failure is not None:
            for ready in watch.release() + [out]:
                yield from ready
            raise failure
        readable = [r for r in todo if not r.error]
        first = next((i for i, r in enumerate(readable) if document(r.fields, text_field, title_field).has_field), None)
        check = FieldCheck(chunk[0].source, first if readable else 0, len(readable),
                           _own_fields(readable[0]) if readable else None)
        for ready in watch.feed(check, out):
            yield from ready
    watch.finish()
