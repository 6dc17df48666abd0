"""Tagging a Dask DataFrame or bag, partition by partition, on any Dask scheduler.

>>> import dask.dataframe as dd, tagger.dask
>>> ddf = dd.read_parquet("works/")                                       # doctest: +SKIP
>>> tagged = tagger.dask.tag(ddf, text="abstract", title="title")         # lazy, as ever
>>> tagged.to_parquet("tagged/")                                          # doctest: +SKIP

Each worker process loads the model once, the first time one of its tasks needs it, and
keeps it (:func:`worker_tagger`); a task carries only the model's path and the options
(:class:`TagSpec`, a few hundred bytes), never the model.  Where the model comes from:
``model=None`` uses each worker's own packaged model (the tagger installed there), checked
against the client's by a hash of its manifest, so a cluster with another tagger version is
an error rather than other tags; ``model=DIR`` a directory every worker can read (a shared
file system), or ``$TAGGER_MODEL`` set on the client.  Needs Dask and pyarrow: ``pip install '.[dask]'`` in a checkout.

The tags are those of :meth:`tagger.api.Tagger.tag_frame` (and so of ``tagger label``).
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass

from .errors import TaggerError

_LOCK = threading.Lock()
_TAGGERS: dict = {}  # (model directory, taxonomy) -> Tagger, one per worker process
_LOADS = [0]
_LOAD_SECONDS: list = []  # wall time of each load in this process (imports included)


@dataclass(frozen=True)
class TagSpec:
    """What a task needs to tag a partition: ``model`` (a directory, or None: the worker's
    packaged model), ``taxonomy`` (a file, or None), ``model_id`` (hash of the client's
    ``manifest.json``, or None: not checked), the field names ``text``/``title`` and the
    options of :meth:`tagger.api.Tagger.tag` (``facets`` a tuple, ``thresholds`` a float or
    a tuple of (label, float) pairs)."""

    model: str | None = None
    taxonomy: str | None = None
    model_id: str | None = None
    text: str = "abstract"
    title: str = "title"
    facets: tuple | None = None
    thresholds: object = None
    min_words: int | None = None

    def tag_kw(self) -> dict:
        th = dict(self.thresholds) if isinstance(self.thresholds, tuple) else self.thresholds
        return dict(text=self.text, title=self.title, facets=list(self.facets) if self.facets else None,
                    thresholds=th, min_words=self.min_words)


def manifest_id(model_dir) -> str | None:
    """sha256 (hex) of ``model_dir/manifest.json``, None when it cannot be read here."""
    from pathlib import Path

    try:
        return hashlib.sha256((Path(model_dir) / "manifest.json").read_bytes()).hexdigest()
    except OSError:
        return None


def make_spec(model=None, taxonomy=None, *, text="abstract", title="title", facets=None, thresholds=None,
              min_words=None) -> TagSpec:
    """The :class:`TagSpec` of these options, made on the client: the model is resolved as
    :func:`tagger.load` resolves it, and its options checked there (an unknown facet or
    label raises TaggerError before any task runs)."""
    import os

    from .api import load
    from .resources import model_dir

    chosen = model if model is not None else os.environ.get("TAGGER_MODEL")
    path = model_dir(None if chosen is None else str(chosen))
    mid = manifest_id(path)
    if mid is not None:  # the client has the model: check the options against it
        t = load(path, taxonomy)
        facets = t.check_facets(facets)
        t.model.threshold_vector(thresholds)
    th = tuple(sorted(thresholds.items())) if isinstance(thresholds, dict) else thresholds
    return TagSpec(None if chosen is None else str(path), None if taxonomy is None else str(taxonomy), mid,
                   text, title, tuple(facets) if facets else None, th, min_words)


def worker_tagger(spec: TagSpec):
    """This process's :class:`~tagger.api.Tagger` for ``spec``: loaded on first use, then
    kept (one load per worker process, whatever the number of tasks or threads).  Raises
    TaggerError when the model differs from the client's (``spec.model_id``)."""
    from .resources import model_dir

    key = (str(model_dir(spec.model).resolve()), spec.taxonomy)  # the same model by any name: one load
    with _LOCK:
        t = _TAGGERS.get(key)
        if t is None:
            import time

            from .api import load

            t0 = time.perf_counter()
            t = load(spec.model, spec.taxonomy)
            _LOAD_SECONDS.append(time.perf_counter() - t0)
            _LOADS[0] += 1
            _TAGGERS[key] = t
    if spec.model_id is not None and manifest_id(t.model.path) != spec.model_id:
        import socket

        raise TaggerError(f"the model on worker {socket.gethostname()} ({t.model.path}) is not the client's: "
                          "install the same tagger there, or pass model=/--model a directory every worker reads")
    return t


def loads() -> int:
    """How many times this process has loaded a model (for tests: ``client.run(loads)``)."""
    return _LOADS[0]


def load_seconds() -> list[float]:
    """Wall time of each model load in this process, in seconds, the imports it made
    included (for benchmarks: ``client.run(load_seconds)``)."""
    return list(_LOAD_SECONDS)


def _tag_frame_partition(df, spec: TagSpec):
    return worker_tagger(spec).tag_frame(df, **spec.tag_kw())


def _tag_records_partition(records, spec: TagSpec):
    kw = spec.tag_kw()
    return list(worker_tagger(spec).tag_records(records, **kw))


def _tag_partition(src: str, dst: str, job):
    """The task of ``tagger label --dask``: one partition file, with this worker's tagger."""
    from .pipeline.partitions import tag_partition

    return tag_partition(worker_tagger(job.spec), src, dst, job)


def label_partitions(address: str, patterns, out_dir: str, job, echo) -> int:
    """Tag the partitions of ``patterns`` into ``out_dir`` on the Dask scheduler at
    ``address`` (``tcp://host:8786``), one task per partition
    (:mod:`tagger.pipeline.partitions`; ``job`` a :class:`~tagger.pipeline.partitions.PartitionJob`);
    ``echo(line)`` reports on stderr.  Partitions whose
    output exists are skipped.  Returns the exit status: 0, or 2 when a partition failed
    (each failure reported; the others are written).  Raises TaggerError when the
    scheduler cannot be reached or the inputs are wrong."""
    import os

    from .pipeline.partitions import plan

    if os.path.exists(out_dir) and not os.path.isdir(out_dir):
        raise TaggerError(f"{out_dir}: not a directory (with --dask, -o names the output directory)")
    todo = plan(patterns, out_dir)
    for _, dst in todo:
        os.makedirs(os.path.dirname(dst), exist_ok=True)
    done = [p for p in todo if os.path.exists(p[1])]
    todo = [p for p in todo if not os.path.exists(p[1])]
    if done:
        echo(f"tagger: {_n(len(done), 'partition')} already complete, skipped")
    if not todo:
        return 0
    try:
        from distributed import Client, as_completed
    except ImportError:
        raise TaggerError("--dask needs Dask: pip install 'dask[dataframe,distributed]' pyarrow (in a checkout of tagger: pip install '.[dask]')") from None
    try:
        client = Client(address, timeout="20s")
    except (OSError, TimeoutError, ValueError) as e:
        raise TaggerError(f"cannot reach the Dask scheduler at {address}: {e}") from None
    failed, written = 0, 0
    try:
        futures = {client.submit(_tag_partition, src, dst, job, pure=False, key=f"tagger-{os.path.basename(src)}-"
                                 f"{os.urandom(4).hex()}"): src for src, dst in todo}
        for fut in as_completed(futures):
            src = futures[fut]
            try:
                n, warnings = fut.result()
            except TaggerError as e:
                failed += 1
                echo(f"tagger: error: {e} ({os.path.basename(src)} not written)")
                continue
            for w in warnings:
                echo(f"tagger: warning: {w}")
            written += n
    finally:
        client.close()
    echo(f"tagger: {_n(len(todo) - failed, 'partition')} tagged ({_n(written, 'record')}) into {out_dir}"
         + (f"; {failed} failed (rerun to redo them)" if failed else ""))
    return 2 if failed else 0


def _n(n: int, word: str) -> str:
    return f"{n:,} {word}" + ("" if n == 1 else "s")


def tag(ddf, *, text="abstract", title="title", model=None, taxonomy=None, facets=None, thresholds=None,
        min_words=None):
    """``ddf`` (a ``dask.dataframe.DataFrame``) with the columns ``tags`` (list of label ids),
    ``scores`` (dict) and ``reason`` (str or None) added, lazily, partition by partition:
    same partitions, index and columns, as :meth:`tagger.api.Tagger.tag_frame` gives for
    each.  ``model``/``taxonomy``: as :func:`tagger.load` (module docstring: where the model
    comes from); the other arguments as :meth:`~tagger.api.Tagger.tag`.  Raises TaggerError
    at once when ``text`` is not a column, or for an unknown facet or label; errors in a
    partition's records are raised when it is computed.
    """
    import pandas as pd

    if text not in ddf.columns:
        have = ", ".join(repr(c) for c in list(ddf.columns)[:20]) or "none"
        raise TaggerError(f"no column {text!r} in the frame (its columns: {have})")
    spec = make_spec(model, taxonomy, text=text, title=title, facets=facets, thresholds=thresholds,
                     min_words=min_words)
    meta = ddf._meta.copy()
    for name in ("tags", "scores", "reason"):
        meta[name] = pd.Series([], index=meta.index, dtype=object)
    return ddf.map_partitions(_tag_frame_partition, spec, meta=meta)


def tag_bag(bag, *, text="abstract", title="title", model=None, taxonomy=None, facets=None, thresholds=None,
            min_words=None):
    """A ``dask.bag.Bag`` of record dicts, tagged: each record becomes a new dict with
    ``tags``, ``scores`` and ``reason`` added (as :meth:`tagger.api.Tagger.tag_records`),
    lazily, partition by partition.  Arguments as :func:`tag`."""
    spec = make_spec(model, taxonomy, text=text, title=title, facets=facets, thresholds=thresholds,
                     min_words=min_words)
    return bag.map_partitions(_tag_records_partition, spec)
