"""The labelling pipeline as a plain function: records in, ``(record, prediction)`` out.

The CLI (``tagger label``, ``tagger filter``), the bib hook and the Python API all call
:func:`label_stream`; it reads lazily and predicts in batches, so memory stays flat and the
first results come out before the input ends.
"""

from __future__ import annotations

from itertools import islice

from .corpus import InputError, record_text_error

BATCH_SIZE = 256


def batched(iterable, n):
    """Lists of up to ``n`` items from ``iterable``."""
    it = iter(iterable)
    while True:
        chunk = list(islice(it, n))
        if not chunk:
            return
        yield chunk


def label_stream(model, records, *, text_field="abstract", title_field="title", thresholds=None,
                 facets=None, min_words=None, explain=0, on_error="fail", warn=None,
                 batch_size=BATCH_SIZE, jobs=1):
    """Tag :class:`~tagger.corpus.Record` s from ``records``, yielding ``(record, Prediction)``
    in input order, ``batch_size`` records per model call.

    A record whose text field is missing or not a string raises :class:`InputError` naming
    its file and line (``on_error="fail"``), or is reported through ``warn(message)`` and
    left out (``on_error="skip"``).

    ``jobs`` > 1 spreads batches over that many worker processes (joblib's loky backend, one
    BLAS/OpenMP thread each); each worker loads the model from ``model.path`` once.  Results
    are gathered in input order, so the output is the same as with ``jobs=1``.
    """
    from .model import MIN_WORDS

    kw = dict(text_field=text_field, title_field=title_field, thresholds=thresholds, facets=facets,
              min_words=MIN_WORDS if min_words is None else min_words, explain=explain)

    def chunks():
        for chunk in batched(records, batch_size):
            good, failure = [], None
            for rec in chunk:
                err = record_text_error(rec, text_field)
                if err is None:
                    good.append(rec)
                elif on_error == "skip":
                    if warn:
                        warn(f"{rec.source}:{rec.line}: {err}; skipped")
                else:
                    failure = InputError(f"{rec.source}:{rec.line}: {err}")
                    break
            yield good, failure  # the records before a bad one are still tagged and written
            if failure is not None:
                return

    if jobs <= 1:
        for good, failure in chunks():
            if good:
                yield from zip(good, model.predict([r.fields for r in good], **kw))
            if failure is not None:
                raise failure
        return

    import os
    import warnings

    from joblib import Parallel, delayed, parallel_config

    # a reader that stops early (`| head`) cancels queued batches, and after Ctrl-C loky's
    # resource tracker reports the semaphores it cleans up: neither is worth a warning
    warnings.filterwarnings("ignore", message=r".*tasks? .*cancelled", category=UserWarning)
    if "PYTHONWARNINGS" not in os.environ:  # inherited by loky's helper processes
        os.environ["PYTHONWARNINGS"] = "ignore::UserWarning"
    path = str(model.path)
    with parallel_config(backend="loky", n_jobs=jobs, inner_max_num_threads=1):
        par = Parallel(return_as="generator")
        for group in batched(chunks(), jobs * 4):  # bounded look-ahead keeps memory flat
            results = par(delayed(_predict_in_worker)(path, [r.fields for r in good], kw) for good, _ in group)
            for (good, failure), preds in zip(group, results):
                yield from zip(good, preds)
                if failure is not None:
                    raise failure


_WORKER_MODELS: dict = {}


def _predict_in_worker(path, fields, kw):
    """Predict in a worker process, loading (once per process) the model at ``path``."""
    from .model import Model

    if not fields:
        return []
    model = _WORKER_MODELS.get(path)
    if model is None:
        import os
        import signal

        # Ctrl-C reaches the whole process group: the parent reports it (exit 130); a worker
        # just stops, without a traceback of its own
        signal.signal(signal.SIGINT, lambda *_: os._exit(130))
        model = _WORKER_MODELS[path] = Model.load(path)
    return model.predict(fields, **kw)


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


def trusted_or_tagged(records, get_model, *, retag=False, need_scores=False, batch_size=BATCH_SIZE, **kw):
    """Like :func:`label_stream`, but a record that already carries ``tags`` (and, when
    ``need_scores``, ``scores``) keeps them unless ``retag``; only the others are tagged, by
    the model that ``get_model()`` returns (called at most once, and only if needed)."""
    from .model import Prediction

    model = None
    for chunk in batched(records, batch_size):
        carried = [None if retag else _carried(r.fields, need_scores) for r in chunk]
        todo = [r for r, c in zip(chunk, carried) if c is None]
        tagged = {}
        if todo:
            if model is None:
                model = get_model()
            for rec, pred in label_stream(model, todo, batch_size=batch_size, **kw):
                tagged[id(rec)] = pred
        for rec, c in zip(chunk, carried):
            if c is not None:
                yield rec, Prediction(c[0], c[1])
            elif id(rec) in tagged:
                yield rec, tagged[id(rec)]
