"""The labelling pipeline as plain functions: records in, predictions or output text out.

The CLI (``tagger label``, ``tagger filter``), the bib hook and the Python API call
:func:`label_stream`, which yields ``(record, Prediction)``; ``tagger label`` with a
per-record output format calls :func:`render_stream`, which yields finished output text.
Both read lazily and work in batches (:class:`BatchJob`), so memory stays flat and the first
results come out before the input ends.  With ``jobs`` > 1 the batches go to worker
processes; for :func:`render_stream` JSON Lines travel as undecoded chunks of lines
(:class:`~tagger.corpus.LineChunk`) and everything but reading bytes and writing text happens
there (decoding, JSON parsing, tagging, rendering), so the reading process stays nearly idle.
"""

from __future__ import annotations

from dataclasses import dataclass

from .corpus import InputError, record_text_error

BATCH_SIZE = 256


class Batch(list):
    """A list of records; ``waits``: the input had gone silent after it (a pipe)."""

    waits = False


def batched(iterable, n, would_wait=None):
    """:class:`Batch` es of up to ``n`` items from ``iterable``; a batch also ends where
    ``would_wait()`` (if given) says that the next item is still to come, and then has
    ``waits`` set.  When reading ``iterable`` raises :class:`InputError`, the items read
    before it come out first, as a shorter batch."""
    batch = Batch()
    try:
        for item in iterable:
            batch.append(item)
            waiting = would_wait is not None and would_wait()
            if waiting or len(batch) >= n:
                batch.waits = waiting
                yield batch
                batch = Batch()
    except InputError:
        if batch:
            yield batch
        raise
    if batch:
        yield batch


@dataclass
class BatchJob:
    """The work on one batch of records, the same in this process or in a worker.

    A batch is a list of :class:`~tagger.corpus.Record` s or a
    :class:`~tagger.corpus.LineChunk` of JSON Lines (decoded and split here).  Parses
    records read lazily from JSON Lines, sets aside those that cannot be tagged
    (``on_error``: ``"fail"`` stops the batch at the first, ``"skip"`` reports each and goes
    on; a line that is not UTF-8 text stops it in any case), tags the rest with
    ``Model.predict(**predict_kw)`` and, when ``render`` (an
    :class:`~tagger.output.Renderer`) is given, renders them.

    Calling it returns ``(result, warnings, failure)``: with ``render``, ``result`` is
    ``(text, n)``, the output of the ``n`` tagged records (for ``json``, the array elements
    joined with ``",\\n"``); else ``[(index in batch, (tags, scores, reason, explanations)),
    ...]``.  ``warnings`` are the messages of skipped records; ``failure`` the message of the
    record that stopped the batch, or None.  Messages name the file and line.  The model sees
    at most ``BATCH_SIZE`` records at a time.
    """

    predict_kw: dict
    text_field: str = "abstract"
    on_error: str = "fail"
    render: object = None

    def __call__(self, model, records):
        from .corpus import LineChunk

        failure = None
        if isinstance(records, LineChunk):
            records, failure = records.split()  # the records before a line that is not text
        good, warnings = [], []
        for i, rec in enumerate(records):
            err = record_text_error(rec, self.text_field)
            if err is None:
                good.append(i)
            elif self.on_error == "skip":
                warnings.append(f"{rec.source}:{rec.line}: {err}; skipped")
            else:
                failure = f"{rec.source}:{rec.line}: {err}"  # the records before it are still tagged
                break
        preds = []
        for k in range(0, len(good), BATCH_SIZE):  # the model's batch size, whatever the task's
            preds += model.predict([records[i].fields for i in good[k:k + BATCH_SIZE]], **self.predict_kw)
        if self.render is None:
            return [(i, (p.tags, p.scores, p.reason, p.explanations)) for i, p in zip(good, preds)], warnings, failure
        render = self.render
        text = (",\n" if render.fmt == "json" else "").join([render(records[i], p) for i, p in zip(good, preds)])
        return (text, len(preds)), warnings, failure


def run_batches(model, job: BatchJob, batches, *, jobs=1, ship=None):
    """``(batch, job(model, batch))`` for each batch of ``batches``, in input order.

    ``jobs`` > 1 runs the job in that many worker processes (:func:`_executor`) while this
    process only reads batches and hands them out, at most ``2 * jobs`` in flight, so
    memory stays flat; after a batch read from a pipe that had gone silent (a
    :class:`~tagger.corpus.LineChunk` or :class:`Batch` whose ``waits`` is set) all results
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

    executor = _executor(model, jobs)
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
            window.append((batch, executor.submit(_in_worker, job, ship(batch) if ship else batch)))
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
                 batch_size=BATCH_SIZE, jobs=1):
    """Tag :class:`~tagger.corpus.Record` s from ``records``, yielding ``(record, Prediction)``
    in input order, ``batch_size`` records per model call.

    A record whose text field is missing or not a string raises :class:`InputError` naming
    its file and line (``on_error="fail"``; the records before it are yielded first), or is
    reported through ``warn(message)`` and left out (``on_error="skip"``).  ``jobs`` > 1
    spreads the batches over worker processes (:func:`run_batches`); the output is the same.
    """
    from .corpus import Record
    from .model import Prediction

    job = BatchJob(_predict_kw(model, text_field, title_field, thresholds, facets, min_words, explain),
                   text_field, on_error)

    def ship(batch):  # a worker needs only the text and title of each record
        return [Record({k: r.fields[k] for k in (text_field, title_field) if k in r.fields}, r.n, r.line, r.source,
                       r.default_id, r.error) for r in batch]

    for batch, (result, warnings, failure) in run_batches(model, job, batched(records, batch_size), jobs=jobs,
                                                          ship=ship):
        for w in warnings:
            if warn:
                warn(w)
        for i, p in result:
            yield batch[i], Prediction(*p)
        if failure is not None:
            raise InputError(failure)


def render_stream(model, batches, render, *, text_field="abstract", title_field="title", thresholds=None,
                  facets=None, min_words=None, explain=0, on_error="fail", warn=None, jobs=1):
    """Like :func:`label_stream`, but over ``batches`` (lists of records, or
    :class:`~tagger.corpus.LineChunk` s of JSON Lines, as :func:`read_batches` gives), and
    yielding ``(text, n)`` per batch: the output of its ``n`` tagged records as rendered by
    ``render`` (:class:`~tagger.output.Renderer`), made in the worker processes when
    ``jobs`` > 1, where JSON Lines are also decoded and parsed."""
    job = BatchJob(_predict_kw(model, text_field, title_field, thresholds, facets, min_words, explain),
                   text_field, on_error, render)
    for _, (result, warnings, failure) in run_batches(model, job, batches, jobs=jobs):
        for w in warnings:
            if warn:
                warn(w)
        yield result
        if failure is not None:
            raise InputError(failure)


def read_batches(path: str, fmt: str | None = None, text_field: str = "abstract", id_field: str = "id",
                 batch_size: int = BATCH_SIZE):
    """The records of ``path`` in batches for :func:`render_stream`: JSON Lines as
    :class:`~tagger.corpus.LineChunk` s (undecoded), other formats as lists of up to
    ``batch_size`` :class:`~tagger.corpus.Record` s (:class:`Batch`); from a pipe, a batch
    also ends where the pipe has gone silent (and then has ``waits`` set), so that records
    typed or trickling in are tagged as they come."""
    from .corpus import detect_format, open_lines, read_jsonl_chunks, read_records

    fmt = detect_format(path, fmt)
    if fmt == "jsonl":
        return read_jsonl_chunks(path)
    lines = open_lines(path)
    return batched(read_records(path, fmt, text_field, id_field, lines), batch_size, lines.would_wait)


def _predict_kw(model, text_field, title_field, thresholds, facets, min_words, explain) -> dict:
    from .model import MIN_WORDS

    return dict(text_field=text_field, title_field=title_field, thresholds=thresholds, facets=facets,
                min_words=MIN_WORDS if min_words is None else min_words, explain=explain)


_POOL: dict = {}  # (model path, jobs) -> executor, one per process


def _executor(model, jobs: int):
    """A pool of ``jobs`` worker processes, each with ``model``, each with one BLAS/OpenMP
    thread (no oversubscription).

    Where the platform can fork (Linux, macOS), the standard library's ProcessPoolExecutor
    forks them from this process after the model is loaded: they start in milliseconds and
    share its memory.  Elsewhere joblib's loky executor spawns them and each loads the model
    from ``model.path`` once.  (loky cannot fork, and spawning costs about 0.4 s per worker
    before the first batch: a fifth of a 20,000-abstract run on 2 cores.)
    """
    import multiprocessing

    key = (str(model.path), jobs)
    if key not in _POOL:
        if "fork" in multiprocessing.get_all_start_methods():
            from concurrent.futures import ProcessPoolExecutor

            _WORKER_MODEL[:] = [model]
            _POOL[key] = ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("fork"),
                                             initializer=_start_worker, initargs=(str(model.path),))
        else:
            import os

            from joblib.externals.loky import get_reusable_executor

            # after Ctrl-C, loky's resource tracker reports the semaphores it cleans up
            os.environ.setdefault("PYTHONWARNINGS", "ignore::UserWarning")
            _POOL[key] = get_reusable_executor(max_workers=jobs, env=dict(_ONE_THREAD), initializer=_start_worker,
                                               initargs=(str(model.path),), reuse=True)
    return _POOL[key]


#: environment that keeps BLAS and OpenMP (LightGBM, for --explain) to one thread per worker
_ONE_THREAD = {v: "1" for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}
_WORKER_MODEL = []


def _start_worker(path: str) -> None:
    """Worker initialiser: have the model (inherited, or loaded once); on Ctrl-C just stop
    (the parent reports it)."""
    import os
    import signal

    # Ctrl-C reaches the whole process group: the parent reports it (exit 130); a worker
    # just stops, without a traceback of its own
    signal.signal(signal.SIGINT, lambda *_: os._exit(130))
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # a forked worker inherits tagger's own handler
    os.environ.update(_ONE_THREAD)  # before anything here loads BLAS or OpenMP
    _die_with_parent()
    if not _WORKER_MODEL:
        from .model import Model

        _WORKER_MODEL[:] = [Model.load(path)]


def _die_with_parent() -> None:
    """On Linux, have the kernel kill this worker when the tagger process that started it
    dies, however it dies (a worker blocked on its task queue would never notice)."""
    import ctypes
    import os
    import signal
    import sys

    if not sys.platform.startswith("linux"):
        return
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() == 1:  # the parent was already gone
        os._exit(1)


def _in_worker(job, batch):
    """Run ``job`` on ``batch`` in a worker, with the model the worker loaded."""
    return job(_WORKER_MODEL[0], batch)


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


def trusted_or_tagged(records, get_model, *, retag=False, need_scores=False, batch_size=BATCH_SIZE, jobs=1, **kw):
    """Like :func:`label_stream`, but a record that already carries ``tags`` (and, when
    ``need_scores``, ``scores``) keeps them unless ``retag``; only the others are tagged, by
    the model that ``get_model()`` returns (called at most once, and only if needed).

    Records are taken ``2 * jobs`` batches at a time, so that the ones to tag fill the
    workers' batches; memory stays bounded by that."""
    from .model import Prediction

    model = None
    for chunk in batched(records, batch_size * 2 * max(jobs, 1)):
        carried = [None if retag else _carried(r.fields, need_scores) for r in chunk]
        todo = [r for r, c in zip(chunk, carried) if c is None]
        tagged, failure = {}, None
        if todo:
            if model is None:
                model = get_model()
            try:
                for rec, pred in label_stream(model, todo, batch_size=batch_size, jobs=jobs, **kw):
                    tagged[id(rec)] = pred
            except InputError as e:  # on_error="fail": the records before the bad one still count
                failure = e
        for rec, c in zip(chunk, carried):
            if c is not None:
                yield rec, Prediction(c[0], c[1])
            elif id(rec) in tagged:
                yield rec, tagged[id(rec)]
            elif failure is not None:  # the bad record: nothing after it
                raise failure
        if failure is not None:
            raise failure
