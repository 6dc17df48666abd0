"""``tagger label --dask ADDRESS INPUT_GLOB -o OUTPUT_DIR/``: a partitioned dataset tagged on
a Dask cluster, one task per input partition (file).

- Inputs: JSON Lines (``.jsonl``, ``.ndjson``, either ``.gz``) and Parquet (``.parquet``)
  files, named by glob patterns the client expands; every worker must read them at the same
  paths (a shared file system).
- Each partition is written to ``OUTPUT_DIR/<its name>`` (its path below the inputs' common
  directory, :func:`plan`), in its own format, by the
  worker that tags it, exactly as ``tagger label FILE -f jsonl`` (or ``-o x.parquet``)
  writes it: first to a temporary file beside it (``.<name>.<random>.tmp``), renamed into
  place when complete.  So a partition's output exists only when it is whole, and a rerun
  skips the partitions whose output exists and redoes the others (a temporary file left by
  a run cut short is removed then).
- The model is loaded once per worker process (:func:`tagger.dask.worker_tagger`); the
  client's side, which hands the partitions out, is :func:`tagger.dask.label_partitions`.
"""

from __future__ import annotations

import glob
import os
from dataclasses import dataclass

from ..errors import TaggerError

#: partition formats by the end of the file name
SUFFIXES = {".jsonl": "jsonl", ".ndjson": "jsonl", ".jsonl.gz": "jsonl", ".ndjson.gz": "jsonl",
            ".json.gz": "jsonl", ".gz": "jsonl", ".parquet": "parquet"}


def partition_format(path: str) -> str:
    """``"jsonl"`` or ``"parquet"`` by ``path``'s extension; TaggerError for another."""
    low = path.lower()
    for suffix in sorted(SUFFIXES, key=len, reverse=True):
        if low.endswith(suffix):
            return SUFFIXES[suffix]
    raise TaggerError(f"{path}: --dask reads partitions of JSON Lines (.jsonl, .ndjson, .gz of those or "
                      "any .gz, as OpenAlex names them) or Parquet (.parquet), not this kind of file")


def plan(patterns, out_dir: str) -> list[tuple[str, str]]:
    """``[(input file, output file)]`` for the glob ``patterns`` (each a pattern or a file
    name), inputs sorted and made absolute; each output is ``out_dir`` joined with the
    input's path below the inputs' common directory (``works/d=1/part_0.gz`` and
    ``works/d=2/part_0.gz`` give ``OUT/d=1/part_0.gz`` and ``OUT/d=2/part_0.gz``; files of
    one directory keep their names).

    Raises TaggerError for a pattern that matches no file, or a file of another format."""
    files = []
    for pat in patterns:
        found = sorted(glob.glob(pat)) if glob.has_magic(pat) else ([pat] if os.path.exists(pat) else [])
        found = [f for f in found if os.path.isfile(f)]
        if not found:
            raise TaggerError(f"{pat}: no such file (or no file matches; quote the pattern)")
        files += [os.path.abspath(f) for f in found]
    files = list(dict.fromkeys(files))
    for f in files:
        partition_format(f)
    root = os.path.commonpath([os.path.dirname(f) for f in files])
    out_dir = os.path.abspath(out_dir)
    return [(f, os.path.join(out_dir, os.path.relpath(f, root))) for f in files]


@dataclass(frozen=True)
class PartitionJob:
    """The options of ``tagger label`` a worker needs: the :class:`~tagger.dask.TagSpec`,
    ``id_field``, ``on_error`` and ``explain`` (n-grams per tag, 0 for none)."""

    spec: object
    id_field: str = "id"
    on_error: str = "fail"
    explain: int = 0


def tag_partition(tagger, src: str, dst: str, job: PartitionJob) -> tuple[int, list[str]]:
    """Tag the partition ``src`` into ``dst`` atomically with ``tagger`` (a
    :class:`tagger.api.Tagger`; runs on a worker); returns ``(records written, warnings)``.
    Raises TaggerError (InputError) for bad input, and then ``dst`` is not written."""
    from ..writers.target import Target

    _remove_leftovers(dst)
    kw = job.spec.tag_kw()
    if partition_format(src) == "parquet":
        from ..writers.parquet import tag_parquet

        with Target(dst, binary=True) as fh:
            return tag_parquet(tagger, src, fh, **kw), []
    from .batches import read_batches
    from .labeling import render_stream
    from ..readers import ReadOptions
    from ..writers import Renderer

    warnings, n = [], 0
    opts = ReadOptions(text_field=kw["text"], title_field=kw["title"], id_field=job.id_field)
    with Target(dst) as fh:  # gzip'd when dst ends .gz
        for text, k in render_stream(tagger.model, read_batches(src, "jsonl", opts),
                                     Renderer("jsonl", tagger.model.facets, job.id_field),
                                     text_field=kw["text"], title_field=kw["title"], thresholds=kw["thresholds"],
                                     facets=kw["facets"], min_words=kw["min_words"], explain=job.explain,
                                     on_error=job.on_error, warn=warnings.append, id_field=job.id_field):
            fh.write(text)
            n += k
    return n, warnings


def _remove_leftovers(dst: str) -> None:
    """Temporary files of ``dst`` left by a run cut short."""
    d, name = os.path.split(dst)
    for f in glob.glob(os.path.join(glob.escape(d), "." + glob.escape(name) + ".*.tmp")):
        try:
            os.unlink(f)
        except OSError:
            pass
