"""The labelling pipeline as plain functions: records in, predictions or output text out.

The commands (``tagger label``, ``tagger filter``, through :mod:`tagger.pipeline.tagging`),
the bib hook and the Python API call :func:`label_stream`, which yields
``(record, Prediction)``; ``tagger label`` with a per-record output format calls
:func:`render_stream`, which yields finished output text.
Both read lazily and work in batches (:class:`BatchJob`), so memory stays flat and the first
results come out before the input ends.  With ``jobs`` > 1 the batches go to worker
processes; for :func:`render_stream` JSON Lines travel as undecoded chunks of lines
(:class:`~tagger.corpus.LineChunk`) and everything but reading bytes and writing text happens
there (decoding, JSON parsing, tagging, rendering), so the reading process stays nearly idle.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..readers.base import InputError
from ..readers.fields import FieldCheck, FieldWatch
from .batches import BATCH_SIZE, batched
from .workers import in_worker, pool


@dataclass
class BatchJob:
    """The work on one batch of records, the same in this process or in a worker.

    A batch is a list of :class:`~tagger.readers.Record` s or a
    :class:`~tagger.readers.jsonl.LineChunk` of JSON Lines (decoded and split here).  Parses
    records read lazily from JSON Lines, finds each record's title and abstract
    (:func:`tagger.readers.fields.document`; a record without text gets the reason "no
    abstract" and is not shown to the model), sets aside those that cannot be tagged
    (``on_error``: ``"fail"`` stops the batch at the first, ``"skip"`` reports each and goes
    on), tags the rest with ``Model.predict(**predict_kw)`` and, when ``render`` (an
    :class:`~tagger.writers.Renderer`) is given, renders them.

    Calling it returns ``(result, warnings, failure, check)``: with ``render``, ``result`` is
    ``(text, n)``, the output of the ``n`` tagged records (for ``json``, the array elements
    joined with ``",\\n"``); else ``[(index in batch, (tags, scores, reason, explanations)),
    ...]``.  ``warnings`` are the messages of skipped records; ``failure`` the message of the
    record that stopped the batch, or None; ``check`` a :class:`FieldCheck`.  Messages name
    the file and line.  The model sees at most ``BATCH_SIZE`` records at a time.
    """

    predict_kw: dict
    text_field: str = "abstract"
    on_error: str = "fail"
    render: object = None
    title_field: str = "title"
    id_field: str = "id"

    def __call__(self, model, records):
        from ..model import Prediction
        from ..readers.fields import NO_ABSTRACT, document
        from ..readers.jsonl import LineChunk, parse_json_record

        failure, source = None, None
        if isinstance(records, LineChunk):
            source = records.source
            records, failure = records.split(lenient=self.on_error == "skip")  # the records before a line that is not text
        good, warnings, first, fields, parsed = [], [], None, None, 0
        for i, rec in enumerate(records):
            if rec.fields is None:
                parse_json_record(rec, self.id_field)
            err = rec.error
            if err is None:
                parsed += 1
                doc = document(rec.fields, self.text_field, self.title_field)
                if fields is None:
                    fields = _own_fields(rec)
                if first is None and doc.has_field:
                    first = parsed - 1
                if doc.error:
                    err = f"record {rec.n}: {doc.error}"
            if err is None:
                good.append((i, doc))
            elif self.on_error == "skip":
                warnings.append(f"{rec.source}:{rec.line}: {err}; skipped")
            else:
                failure = f"{rec.source}:{rec.line}: {err}"  # the records before it are still tagged
                break
        check = FieldCheck(records[0].source if records else source, first, parsed, fields)
        todo = [d for _, d in good if d.reason is None]
        preds = []
        for k in range(0, len(todo), BATCH_SIZE):  # the model's batch size, whatever the task's
            preds += model.predict([{"abstract": d.text, "title": d.title} for d in todo[k:k + BATCH_SIZE]],
                                   text_field="abstract", title_field="title", **self.predict_kw)
        it = iter(preds)
        preds = [Prediction([], {}, NO_ABSTRACT) if d.reason else next(it) for _, d in good]
        if self.render is None:
            return ([(i, (p.tags, p.scores, p.reason, p.explanations, p.note)) for (i, _), p in zip(good, preds)],
                    warnings, failure, check)
        render = self.render
        text = (",\n" if render.fmt == "json" else "").join([render(records[i], p) for (i, _), p in zip(good, preds)])
        return (text, len(preds)), warnings, failure, check


def run_batches(model, job: BatchJob, batches, *, jobs=1, ship=None):
    """``(batch, job(model, batch))`` for each batch of ``batches``, in input order.

    ``jobs`` > 1 runs the job in that many worker processes (:func:`tagger.pipeline.workers.pool`) while this
    process only reads batches and hands them out, at most ``2 * jobs`` in flight, so
    memory stays flat; after a batch read from a pipe that had gone silent (a
    :class:`~tagger.corpus.LineChunk` or :class:`~tagger.pipeline.batches.Batch` whose ``waits`` is set) all results
    so far come out.
    ``ship(batch)`` gives what is sent to a worker (default: the batch itself).  An
    :class:`InputError` from ``batches`` (a file that cannot be read on) is raised after the
    results of the batches before it.  (Tagging batches in this process as
    well, between hand-outs, was measured no faster: its busy main thread then delays the
    executor's own threads.)
    """
    if jobs <= 1:
        for batch in batches:
            yield batch, job(model, batch)
        return
    from collections import deque

    executor = pool(model, jobs)
    window: deque = deque()  # (batch, future), in input order
    unread = None
    try:
        it = iter(batches)
        while True:
            try:
                batch = next(it)
            except StopIteration:
                break
            except InputError as e:
                unread = e
                break
            window.append((batch, executor.submit(in_worker, job, ship(batch) if ship else batch)))
            # a pipe gone silent (batch.waits): out with what is done before waiting for more
            while len(window) > 2 * jobs or (window and getattr(batch, "waits", False)):
                b, fut = window.popleft()
                yield b, fut.result()
        while window:
            b, fut = window.popleft()
            yield b, fut.result()
    finally:
        for _, fut in window:  # the reader stopped early (`| head`), or an error
            fut.cancel()
    if unread is not None:
        raise unread


def label_stream(model, records, *, text_field="abstract", title_field="title", thresholds=None,
                 facets=None, min_words=None, explain=0, on_error="fail", warn=None,
                 batch_size=BATCH_SIZE, jobs=1, id_field="id", field_check=True):
    """Tag :class:`~tagger.readers.Record` s from ``records``, yielding ``(record, Prediction)``
    in input order, ``batch_size`` records per model call.

    A record without text (its text field null, absent or blank) gets the reason "no
    abstract"; but when none of a file's first 1,000 records has the field,
    :class:`InputError` says so.  A record that cannot be read, or whose text field holds
    something other than text, raises :class:`InputError` naming its file and line
    (``on_error="fail"``; the records before it are yielded first), or is reported through
    ``warn(message)`` and left out (``on_error="skip"``).  ``jobs`` > 1 spreads the batches
    over worker processes (:func:`run_batches`); the output is the same.  ``field_check``
    False: no check that the text field occurs (the caller checks).
    """
    from ..model import Prediction
    from ..readers import Record
    from ..readers.fields import text_fields

    job = BatchJob(_predict_kw(model, thresholds, facets, min_words, explain), text_field, on_error, None,
                   title_field, id_field)
    needed = text_fields(text_field, title_field)

    def ship(batch):  # a worker needs only the text and title of each record
        return [Record({k: r.fields[k] for k in needed if k in r.fields}, r.n, r.line, r.source,
                       r.default_id, r.error) for r in batch]

    watch = FieldWatch(text_field)
    results = run_batches(model, job, batched(records, batch_size), jobs=jobs, ship=ship)
    try:
        for batch, (result, warnings, failure, check) in results:
            for w in warnings:
                if warn:
                    warn(w)
            if not field_check:
                ready = [(batch, result)]
            elif failure is None:
                ready = watch.feed(check, (batch, result))
            else:
                ready = watch.release() + [(batch, result)]
            for b, res in ready:
                for i, p in res:
                    yield b[i], Prediction(*p)
            if failure is not None:
                raise InputError(failure)
    except InputError:
        for b, res in watch.release():
            for i, p in res:
                yield b[i], Prediction(*p)
        raise
    watch.finish()


def render_stream(model, batches, render, *, text_field="abstract", title_field="title", thresholds=None,
                  facets=None, min_words=None, explain=0, on_error="fail", warn=None, jobs=1, id_field="id"):
    """Like :func:`label_stream`, but over ``batches`` (lists of records, or
    :class:`~tagger.readers.jsonl.LineChunk` s of JSON Lines, as :func:`~tagger.pipeline.batches.read_batches` gives),
    and yielding ``(text, n)`` per batch: the output of its ``n`` tagged records as rendered
    by ``render`` (:class:`~tagger.writers.Renderer`), made in the worker processes when
    ``jobs`` > 1, where JSON Lines are also decoded and parsed."""
    job = BatchJob(_predict_kw(model, thresholds, facets, min_words, explain), text_field, on_error, render,
                   title_field, id_field)
    watch = FieldWatch(text_field)
    try:
        for _, (result, warnings, failure, check) in run_batches(model, job, batches, jobs=jobs):
            for w in warnings:
                if warn:
                    warn(w)
            yield from watch.feed(check, result) if failure is None else watch.release() + [result]
            if failure is not None:
                raise InputError(failure)
    except InputError:
        yield from watch.release()
        raise
    watch.finish()


def _predict_kw(model, thresholds, facets, min_words, explain) -> dict:
    from ..model.abstain import MIN_WORDS

    return dict(thresholds=thresholds, facets=facets,
                min_words=MIN_WORDS if min_words is None else min_words, explain=explain)


def _own_fields(rec) -> list:
    """The field names the record came with (not the ``id`` the reader gave it)."""
    return [k for k in rec.fields if not (k == "id" and rec.id_added)]
