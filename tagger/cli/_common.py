"""What the commands share: option sets, model loading, input files, atomic output, the
labelling loop, error wording and progress.

Heavy libraries are imported inside the functions that use them, never at module level.
"""

from __future__ import annotations

import functools
import os
import sys

import click

from ..errors import TaggerError
from ..wording import plural  # noqa: F401  (the commands import it from here)


def exit_code(fn):
    """Run a command body returning an exit status; turn TaggerError into one line + 2."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            code = fn(*args, **kwargs)
        except TaggerError as e:
            from ..writers.target import OutputError

            click.echo(f"tagger: error: {e}", err=True)
            if isinstance(e, OutputError):  # what is left in stdout's buffer must not fail again at exit
                quiet_broken_pipe()
            code = 2
        click.get_current_context().exit(code or 0)

    return wrapper


# --- shared options ---------------------------------------------------------------------

def model_options(fn):
    """Add ``--model DIR`` and ``--taxonomy FILE`` to a command."""
    fn = click.option("--taxonomy", "taxonomy", metavar="FILE",
                      help="Taxonomy the model must match [default: $TAGGER_TAXONOMY, else the one the model was "
                           "trained with].")(fn)
    fn = click.option("--model", "model", metavar="DIR",
                      help="Model directory [default: $TAGGER_MODEL, else the packaged model].")(fn)
    return fn


def load_model(model_opt, taxonomy_opt):
    """The ``tagger.model.Model`` chosen by ``--model``/``$TAGGER_MODEL`` (else the packaged one),
    checked against ``--taxonomy``/``$TAGGER_TAXONOMY`` when one is given
    (:func:`tagger.api.load`, as the Python API loads it).

    Raises TaggerError for a missing or incompatible model.
    """
    from ..api import load

    return load(model_opt, taxonomy_opt).model


def _delimiter(ctx, param, value):
    if value is None:
        return None
    value = {"tab": "\t", "\\t": "\t"}.get(value, value)
    if len(value) != 1:
        raise click.BadParameter("must be one character (or 'tab')")
    return value


def io_options(fn):
    """Add the input, output and labelling options that ``label`` and ``filter`` share."""
    opts = [
        click.option("--input-format", type=click.Choice(["txt", "lines", "jsonl", "json", "csv", "tsv", "bib", "parquet"]),
                     help="Input format [default: from the extension; .json/.jsonl and other files by their first "
                          "line: jsonl (one object per line), json (an array, or pretty-printed objects), bib, else "
                          "txt (one abstract per paragraph); lines: one abstract per line]."),
        click.option("--encoding", metavar="NAME",
                     help="The input's encoding [default: UTF-8; a UTF-16 or UTF-32 BOM is recognised]."),
        click.option("--no-header", "no_header", is_flag=True,
                     help="CSV/TSV without a header row: name columns by number (--text-column 3)."),
        click.option("--delimiter", metavar="CHAR", callback=_delimiter,
                     help="CSV delimiter [default: ',', or ';' when the header row is ';'-separated]."),
        click.option("--format", "-f", "out_format",
                     type=click.Choice(["text", "jsonl", "json", "tsv", "csv", "pairs", "parquet", "bib"]),
                     help="Output format [default: from -o's extension (.jsonl .json .csv .tsv .txt, each also .gz; "
                          ".parquet), else text on a terminal, else jsonl (csv/tsv for table input; for filter of .bib "
                          "input, bib: the matching entries as they were)]."),
        click.option("--output", "-o", metavar="FILE",
                     help="Write here: a file is replaced atomically when all is written; a device or FIFO is "
                          "written into."),
        click.option("--text-field", "--text-column", "text_field", default="abstract", show_default=True,
                     help="Field (JSON) or column (CSV/TSV) holding the abstract."),
        click.option("--title-field", "--title-column", "title_field", default="title", show_default=True,
                     help="Field or column holding the title, if any."),
        click.option("--id-field", "--id-column", "id_field", default="id", show_default=True,
                     help="Field or column holding the record id."),
        click.option("--on-error", type=click.Choice(["fail", "skip"]), default="fail", show_default=True,
                     help="A bad record: stop with exit 2, or warn on stderr and go on."),
        click.option("--min-words", type=click.IntRange(0), default=None,
                     help="Abstain on texts shorter than this many words [default: 20]."),
        click.option("--threshold", type=click.FloatRange(0, 1), default=None,
                     help="One threshold for every label, instead of the model's per-label ones."),
        click.option("--jobs", "-j", type=click.IntRange(1), default=1, show_default=True,
                     help="Worker processes (same output, byte for byte, as --jobs 1)."),
    ]
    for o in reversed(opts):
        fn = o(fn)
    return model_options(fn)


def _warn(msg: str) -> None:
    click.echo(f"tagger: warning: {msg}", err=True)


class Inputs:
    """The input files of a command (``opts``: the command's options), read one after
    another as one stream of records."""

    def __init__(self, files, opts: dict):
        from ..readers import ReadOptions, detect_format
        from ..readers.stream import check_encoding

        if opts.get("encoding"):
            check_encoding(opts["encoding"])
        self.files = list(files) or ["-"]
        if "-" in self.files and sys.stdin is not None and sys.stdin.isatty():
            ctx = click.get_current_context(silent=True)
            command = ctx.command_path if ctx is not None else "tagger label"
            first = " EXPR" if ctx is not None and ctx.info_name == "filter" else ""
            click.echo("tagger: reading abstracts from the terminal, one per paragraph; end with Ctrl-D "
                       f"(or name a file: {command}{first} FILE)", err=True)
        self.read_opts = ReadOptions(text_field=opts["text_field"], title_field=opts["title_field"],
                                     id_field=opts["id_field"], encoding=opts.get("encoding"),
                                     header=not opts.get("no_header"), delimiter=opts.get("delimiter"), warn=_warn)
        self.formats = [detect_format(f, opts["input_format"], sniff=True, encoding=opts.get("encoding"))
                        for f in self.files]
        self.text_field, self.id_field = opts["text_field"], opts["id_field"]
        self._check_fields_apply()
        tables = {f for f in self.formats if f in ("csv", "tsv")}
        self.table_format = tables.pop() if len(tables) == 1 and len(set(self.formats)) == 1 else None

    def _check_fields_apply(self) -> None:
        """--text-field, --title-field and --id-field name fields of records; a text input
        (.txt: one abstract per paragraph; lines) has none.  Named on the command line with
        only such inputs: an error (the option would do nothing); with some: a warning."""
        from click.core import ParameterSource

        ctx = click.get_current_context(silent=True)
        if ctx is None:
            return
        given = [f"--{name.replace('_', '-')}" for name in ("text_field", "title_field", "id_field")
                 if ctx.get_parameter_source(name) == ParameterSource.COMMANDLINE]
        plain = [(f, fmt) for f, fmt in zip(self.files, self.formats) if fmt in ("txt", "lines")]
        if not given or not plain:
            return
        f, fmt = plain[0]
        name = "standard input" if f == "-" else f
        what = "one abstract per paragraph" if fmt == "txt" else "one abstract per line"
        msg = (f"{given[0]} does not apply to {name}: it is read as text ({what}), which has no fields; "
               f"name its format with --input-format jsonl, json or csv if it has them")
        if len(plain) == len(self.files):
            raise TaggerError(msg)
        _warn(msg)

    def records(self):
        from ..readers import open_reader

        for f, fmt in zip(self.files, self.formats):
            yield from open_reader(f, fmt, self.read_opts)

    def batches(self):
        """The records in batches for ``labeling.render_stream``: JSON Lines as undecoded
        chunks of lines, other formats as lists of records; no batch spans two files."""
        from ..labeling import read_batches

        for f, fmt in zip(self.files, self.formats):
            yield from read_batches(f, fmt, self.read_opts)


def default_format(out_format, inputs, target, bib: bool = False):
    """The output format: ``--format``; else, for a file, by its extension (an extension that
    names no format is an error); else (standard output, a device) csv/tsv for a table, with
    ``bib`` (``tagger filter``) bib for BibTeX input, text on a terminal, jsonl otherwise."""
    from ..writers import OUTPUT_EXTENSIONS, format_for_path

    if out_format:
        return out_format
    if not target.streams:
        fmt = format_for_path(target.path)
        if fmt is None or (fmt == "bib" and not bib):
            exts = " ".join(e for e in OUTPUT_EXTENSIONS if e not in (".ndjson", ".bib", ".parquet"))
            more = ", .parquet" + (", .bib" if bib else "")
            raise TaggerError(f"{target.path}: cannot tell the output format from the file name (known: {exts}, "
                              f"each also with .gz{more}); name it with --format")
        if fmt in ("parquet", "bib") and target.path.lower().endswith(".gz"):
            raise TaggerError(f"{target.path}: {'Parquet is compressed within' if fmt == 'parquet' else '.bib files are not gzipped'}; "
                              f"name the output {target.path[:-3]}")
        return fmt
    if inputs.table_format:
        return inputs.table_format
    if bib and set(inputs.formats) == {"bib"}:
        return "bib"
    return "text" if target.is_terminal() else "jsonl"


def AtomicOutput(path):  # noqa: N802  (was a class; kept for the commands that use it)
    """Where a command writes: ``path``, or standard output for None or ``-``
    (:class:`tagger.writers.target.Target`: a file is replaced atomically, a device or FIFO
    written into); a context manager giving a text file object."""
    from ..writers.target import Target

    return Target(path)


def make_writer(fh, fmt, model, inputs, target, opts):
    """The :class:`~tagger.writers.Writer` of a command's output."""
    from ..writers import Writer

    return Writer(fh, fmt, model.facets, inputs.table_format, opts["id_field"], text_field=opts["text_field"],
                  title_field=opts["title_field"], titles=fmt == "text" and target.is_terminal())


def stream(model, inputs, writer, opts, explain=0):
    """Label the records of ``inputs`` with ``model`` and write them through ``writer``.

    Returns ``(written, skipped)`` record counts; a TaggerError gains how many were written.
    """
    from ..labeling import label_stream, render_stream

    skipped = []

    def warn(msg):
        skipped.append(msg)
        click.echo(f"tagger: warning: {msg}", err=True)

    kw = dict(text_field=opts["text_field"], title_field=opts["title_field"], thresholds=opts["threshold"],
              facets=opts.get("facets"), min_words=opts["min_words"], explain=explain, on_error=opts["on_error"],
              warn=warn, jobs=opts["jobs"], id_field=opts["id_field"])
    ticker = Ticker("records tagged")
    try:
        if writer.renderer is not None:  # per-record output: rendered (and parsed) where the tagging is done
            for text, n in render_stream(model, inputs.batches(), writer.renderer, **kw):
                ticker.clear()
                writer.write_rendered(text, n)
                writer.fh.flush()
                ticker.update(writer.count)
        else:
            for rec, pred in label_stream(model, inputs.records(), **kw):
                writer.write(rec, pred)
                if writer.count % 256 == 0:
                    ticker.clear()
                    writer.fh.flush()
                    ticker.update(writer.count)
    except TaggerError as e:
        raise with_count(e, writer.count, opts["output"]) from None
    finally:
        ticker.clear()
    return writer.count, len(skipped)


def nothing_written(skipped: int) -> TaggerError:
    """The error of a run whose every record was skipped as bad (``--on-error skip``)."""
    what = "the one record read was" if skipped == 1 else f"all {skipped} records read were"
    return TaggerError(f"no record written: {what} bad and skipped")


def tag_parquet_files(model, inputs, fh, opts, keep=None) -> int:
    """Parquet input to Parquet output (:func:`tagger.writers.parquet.tag_parquet`, every
    column kept as it was); ``keep(prediction)`` for ``filter``.  Returns the rows written."""
    from ..api import Tagger
    from ..writers.parquet import tag_parquet

    if opts["output"] and opts["output"].lower().endswith(".gz"):
        raise TaggerError(f"{opts['output']}: Parquet is compressed within; name the output .parquet")
    return tag_parquet(Tagger(model), inputs.files, fh, text=opts["text_field"], title=opts["title_field"],
                       facets=opts.get("facets"), thresholds=opts["threshold"], min_words=opts["min_words"], keep=keep)


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


def quiet_broken_pipe():
    """The reader went away (``| head``): stop quietly, status 0."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # AttributeError: no stdout at all (>&-)
        pass


# --- training ---------------------------------------------------------------------------

class Progress:
    """How far a long command is, on stderr: a click progress bar when stderr is a terminal,
    else one line per step (``tagger: LABEL: WHAT``), so that a log shows that it moves.
    Call it as ``progress(done, total, what)``; :meth:`close` ends the bar."""

    def __init__(self, label: str, stream=None):
        self.label, self.stream = label, stream or sys.stderr
        self.bar = None
        if _isatty(self.stream):
            self.bar = click.progressbar(length=1, label=label, file=self.stream)
            self.bar.__enter__()

    def __call__(self, done: int, total: int, what: str | None = None) -> None:
        if self.bar is not None:
            self.bar.length = total
            self.bar.update(done - self.bar.pos)
        else:
            click.echo(f"tagger: {self.label}: {what or f'{done} of {total}'}", file=self.stream)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.__exit__(None, None, None)
            self.bar = None


class Ticker:
    """A count of work done, shown on stderr after ``delay`` seconds and only when stderr is
    a terminal (``tagger label``, ``tagger bib``): one line, rewritten in place at most every
    0.2 s; :meth:`clear` removes it (before other output reaches the same terminal)."""

    def __init__(self, what: str, delay: float = 2.0, stream=None, clock=None):
        import time

        self.what, self.delay = what, delay
        self.stream = stream or sys.stderr
        self.clock = clock or time.monotonic
        self.on = _isatty(self.stream)
        self.start = self.clock()
        self.last, self.shown = 0.0, False

    def update(self, n: int) -> None:
        """Show that ``n`` records (entries) are done, if it is time to."""
        if not self.on:
            return
        now = self.clock()
        if now - self.start < self.delay or (self.shown and now - self.last < 0.2):
            return
        self.stream.write(f"\rtagger: {n:,} {self.what}\x1b[K")
        self.stream.flush()
        self.last, self.shown = now, True

    def clear(self) -> None:
        """Remove the line, if shown."""
        if self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self.shown = False


def _isatty(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError, OSError):
        return False


#: the repository's hand-tagged corpus, relative to the repository root
DEFAULT_CORPUS = "fixtures/corpus.jsonl"


def need_corpus(path: str) -> None:
    """A clear error when the default corpus is not here (run from elsewhere than the
    repository root, or an installed tagger without the repository)."""
    if path == DEFAULT_CORPUS and not os.path.exists(path):
        raise TaggerError(f"{path}: no such file (the default, relative to the repository root; "
                          "name a hand-tagged corpus with --corpus FILE)")
