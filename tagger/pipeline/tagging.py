"""``tagger label`` and ``tagger filter`` as library functions: the records of
:class:`~tagger.pipeline.inputs.Inputs`, tagged, written to a
:class:`~tagger.writers.target.Target` in a format.

``tagger`` is a :class:`tagger.api.Tagger` (the loaded model); ``opts`` the options as a
dict (``text_field``, ``title_field``, ``id_field``, ``threshold``, ``min_words``,
``on_error``, ``jobs``, ``output``, ``facets``).  ``warn(message)`` reports a record skipped
as bad (``on_error="skip"``); ``progress(done, total, what)`` how many records are done
(``total`` None: unknown), and, with ``what`` None, that output is about to be written (a
display on the same terminal clears itself).  A ``BrokenPipeError`` (the reader went away)
is the caller's to handle.
"""

from __future__ import annotations

from ..errors import TaggerError
from ..wording import plural


def make_writer(fh, fmt, model, inputs, target, opts, rows: bool = True):
    """The :class:`~tagger.writers.Writer` of a command's output; raises TaggerError, before
    anything is written, when a table output of several tables would lose columns
    (:meth:`~tagger.pipeline.inputs.Inputs.table_head`).  ``rows``: records will be
    written (not only counted)."""
    from ..writers import Writer

    head = inputs.table_head() if rows and fmt in ("csv", "tsv") else None  # the header of an output without rows
    return Writer(fh, fmt, model.facets, inputs.table_format, opts["id_field"], head, text_field=opts["text_field"],
                  title_field=opts["title_field"], titles=fmt == "text" and target.is_terminal())


def label_files(tagger, inputs, target, fmt, opts, *, explain=0, warn=None, progress=None) -> tuple[int, int]:
    """Tag the records of ``inputs`` and write them to ``target`` in ``fmt`` (Parquet from
    Parquet column by column, every column kept); ``explain``: n-grams shown per tag.

    Returns ``(written, skipped)``; raises TaggerError (with how many were written) for bad
    input, and when every record was skipped as bad."""
    with target as fh:
        if fmt == "parquet" and set(inputs.formats) == {"parquet"}:  # column by column, types kept
            return tag_parquet_files(tagger, inputs, fh, opts), 0
        writer = make_writer(fh, fmt, tagger.model, inputs, target, opts)
        written, skipped = _stream(tagger.model, inputs, writer, opts, explain, warn, progress)
        if skipped and not written:
            raise nothing_written(skipped)
        writer.close()
    return written, skipped


def _stream(model, inputs, writer, opts, explain, warn, progress):
    """Label the records of ``inputs`` with ``model`` and write them through ``writer``.

    Returns ``(written, skipped)`` record counts; a TaggerError gains how many were written.
    """
    from .labeling import label_stream, render_stream

    skipped = []
    progress = progress or (lambda done, total, what: None)

    def skip(msg):
        skipped.append(msg)
        if warn:
            warn(msg)

    kw = dict(text_field=opts["text_field"], title_field=opts["title_field"], thresholds=opts["threshold"],
              facets=opts.get("facets"), min_words=opts["min_words"], explain=explain, on_error=opts["on_error"],
              warn=skip, jobs=opts["jobs"], id_field=opts["id_field"])
    try:
        if writer.renderer is not None:  # per-record output: rendered (and parsed) where the tagging is done
            for text, n in render_stream(model, inputs.batches(), writer.renderer, **kw):
                progress(writer.count, None, None)
                writer.write_rendered(text, n)
                writer.fh.flush()
                progress(writer.count, None, "records tagged")
        else:
            for rec, pred in label_stream(model, inputs.records(), **kw):
                writer.write(rec, pred)
                if writer.count % 256 == 0:
                    progress(writer.count, None, None)
                    writer.fh.flush()
                    progress(writer.count, None, "records tagged")
    except TaggerError as e:
        raise with_count(e, writer.count, opts["output"]) from None
    except KeyboardInterrupt as e:  # how far it got, for the line the command prints
        e.records_done = writer.count
        raise
    finally:
        progress(writer.count, None, None)
    return writer.count, len(skipped)


def filter_files(tagger, inputs, target, fmt, query, opts, *, retag=False, min_score=None, invert=False,
                 count=False, warn=None) -> tuple[int, int]:
    """Write the records of ``inputs`` whose tags match ``query`` (a :mod:`tagger.query`
    expression; ``invert``: those that do not) to ``target`` in ``fmt``, or, with ``count``,
    only their number.  Records that carry tags keep them unless ``retag`` or a threshold of
    one's own; the others are tagged on the fly.  Returns ``(kept, skipped)`` (and sets
    ``inputs.seen``, the records read, when it reads them one by one); a
    ``BrokenPipeError`` carries ``kept`` as the records kept so far."""
    from .trusted import trusted_or_tagged

    model = tagger.model
    skipped = []

    def skip(msg):
        skipped.append(msg)
        if warn:
            warn(msg)

    # a threshold of one's own only means something for records tagged now
    vocabulary = None
    if "bib" in inputs.formats:
        from ..bib import Vocabulary

        vocabulary = Vocabulary(model.facets)
    stream = trusted_or_tagged(inputs.records(), lambda: model, retag=retag or opts["threshold"] is not None,
                               need_scores=min_score is not None, vocabulary=vocabulary,
                               text_field=opts["text_field"], title_field=opts["title_field"],
                               id_field=opts["id_field"], thresholds=opts["threshold"], min_words=opts["min_words"],
                               on_error=opts["on_error"], warn=skip, jobs=opts["jobs"])
    kept = seen = 0
    target.binary = fmt == "parquet" and not count
    fresh = retag or opts["threshold"] is not None or not any(_carries_tags(f) for f in inputs.files)
    try:
        with target as fh:
            if target.binary and set(inputs.formats) == {"parquet"} and fresh:  # column by column, types kept
                kept = tag_parquet_files(tagger, inputs, fh, opts,
                                         keep=lambda p: query.matches(p.tags, p.scores, min_score) != invert)
                return kept, 0
            writer = make_writer(fh, fmt, model, inputs, target, opts, rows=not count)
            try:
                for rec, pred in stream:
                    seen += 1
                    if query.matches(pred.tags, pred.scores, min_score) != invert:
                        kept += 1
                        if not count:
                            writer.write(rec, pred)
            except TaggerError as e:
                raise with_count(e, writer.count, opts["output"]) from None
            if skipped and not seen:
                raise nothing_written(len(skipped))
            if count:
                fh.write(f"{kept}\n")
            else:
                writer.close()
    except BrokenPipeError as e:
        e.kept = kept
        raise
    inputs.seen = seen + len(skipped)  # records read, for "no records read from FILE"
    return kept, len(skipped)


def _carries_tags(path: str) -> bool:
    """A Parquet file with a ``tags`` column (an earlier ``tagger label``: trusted)."""
    if not path.lower().endswith(".parquet"):
        return False
    from ..readers.parquet import open_parquet

    return "tags" in open_parquet(path).schema_arrow.names


def tag_parquet_files(tagger, inputs, fh, opts, keep=None) -> int:
    """Parquet input to Parquet output (:func:`tagger.writers.parquet.tag_parquet`, every
    column kept as it was); ``keep(prediction)`` for ``filter``.  Returns the rows written."""
    from ..writers.parquet import tag_parquet

    if opts["output"] and opts["output"].lower().endswith(".gz"):
        raise TaggerError(f"{opts['output']}: Parquet is compressed within; name the output .parquet")
    return tag_parquet(tagger, inputs.files, fh, text=opts["text_field"], title=opts["title_field"],
                       facets=opts.get("facets"), thresholds=opts["threshold"], min_words=opts["min_words"], keep=keep)


def nothing_written(skipped: int) -> TaggerError:
    """The error of a run whose every record was skipped as bad (``--on-error skip``)."""
    what = "the one record read was" if skipped == 1 else f"all {skipped} records read were"
    return TaggerError(f"no record written: {what} bad and skipped")


def with_count(e: TaggerError, written: int, output: str | None = None) -> TaggerError:
    """``e`` with how many records were written before it (to stdout), or, with ``-o FILE``,
    that the file was left as it was (the output is written atomically); nothing is added for
    a file that could not be opened before anything was written."""
    from ..readers import FileError
    from ..writers.target import OutputError

    if isinstance(e, OutputError) or (isinstance(e, FileError) and not written):
        return e
    if output and output != "-":
        return TaggerError(f"{e} ({output} left as it was; {plural(written, 'record')} had been tagged before it)")
    return TaggerError(f"{e} ({plural(written, 'record')} {'was' if written == 1 else 'were'} written before it)")
