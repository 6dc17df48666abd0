"""Reading inputs into batches: :class:`Batch` es of records (a batch from a pipe that went
silent says so) and, for JSON Lines, undecoded chunks of lines; :data:`BATCH_SIZE` records
at a time go to the model."""

from __future__ import annotations

from ..readers.base import InputError

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


def read_batches(path: str, fmt: str | None = None, opts=None, batch_size: int = BATCH_SIZE):
    """The records of ``path`` in batches for :func:`render_stream`: JSON Lines as
    :class:`~tagger.readers.jsonl.LineChunk` s (undecoded), other formats as lists of up to
    ``batch_size`` :class:`~tagger.readers.Record` s (:class:`Batch`); from a pipe, a batch
    also ends where the pipe has gone silent (and then has ``waits`` set), so that records
    typed or trickling in are tagged as they come.  ``opts``: a
    :class:`~tagger.readers.ReadOptions`."""
    from ..readers import ReadOptions, detect_format, open_reader
    from ..readers.jsonl import read_jsonl_chunks

    opts = opts or ReadOptions()
    fmt = detect_format(path, fmt)
    if fmt == "jsonl":
        return read_jsonl_chunks(path, encoding=opts.encoding, limit=opts.max_record_size)
    reader = open_reader(path, fmt, opts)
    return batched(reader, batch_size, getattr(reader, "would_wait", None))
