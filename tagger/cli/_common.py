"""What the commands share, and only that: click option sets, the mapping of errors to exit
statuses, checks of the terminal (abstracts typed in, options named on the command line)
and the progress display.  The work itself is the library's (:mod:`tagger.pipeline`,
:mod:`tagger.api`, ...).

Heavy libraries are imported inside the functions that use them, never at module level.
"""

from __future__ import annotations

import functools
import os
import sys

import click

from ..errors import TaggerError


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


def echo_guarded(text: str) -> None:
    """``text`` on standard output, guarded as ``tagger label``'s output is: closed or full,
    one line and exit 2 (:class:`~tagger.writers.target.Target`)."""
    from ..writers.target import Target

    with Target(None, option=None) as out:
        out.write(text)


def space_options(what: str):
    """Add ``--space``, ``--space-weight`` and ``--space-trees/--no-space-trees`` to a command;
    ``what`` ends the ``--space`` help (its default).  The command receives ``space_dir``,
    ``space_weight`` (float or None) and ``space_trees`` (bool or None); pass them to
    :func:`tagger.model.space.resolve_training_space`."""
    def deco(fn):
        fn = click.option("--space-trees/--no-space-trees", "space_trees", default=None,
                          help="Whether the LightGBM boosters read the space's components too, or only the "
                               "linear base [default: the linear base only].")(fn)
        fn = click.option("--space-weight", "space_weight", type=click.FloatRange(0, 100, min_open=True),
                          default=None, metavar="W", callback=_finite, help="Scale of the space's unit-norm components beside the TF-IDF row "
                                            "[default: 0.5].")(fn)
        fn = click.option("--space", "space_dir", metavar="DIR|package|none", default=None,
                          help="Text space whose components the model reads beside its terms: a directory "
                               "written by `tagger space build`, package (the packaged models/space), or none "
                               f"{what}.")(fn)
        return fn
    return deco


def _finite(ctx, param, value):
    if value is not None and value != value:  # nan passes FloatRange's comparisons
        raise click.BadParameter("must be a number, not nan")
    return value


def _delimiter(ctx, param, value):
    if value is None:
        return None
    value = {"tab": "\t", "\\t": "\t"}.get(value, value)
    if len(value) != 1:
        raise click.BadParameter("must be one character (or 'tab')")
    return value


def _size(ctx, param, value):
    """``--max-record-size``: bytes, with an optional K, M or G (1024-based): ``4M``, ``500K``."""
    if value is None:
        return None
    from ..readers.stream import parse_size

    try:
        return parse_size(value)
    except ValueError as e:
        raise click.BadParameter(str(e)) from None


def max_record_size_option(fn):
    """Add ``--max-record-size SIZE`` to a command."""
    return click.option("--max-record-size", "max_record_size", metavar="SIZE", default="4M", show_default=True,
                        callback=_size,
                        help="Largest record read (a line, paragraph, JSON value, CSV cell, .bib value, Parquet cell), "
                             "in bytes or with K, M, G; a larger one is a bad record.")(fn)


def io_options(fn):
    """Add the input, output and labelling options that ``label`` and ``filter`` share."""
    opts = [
        click.option("--input-format", type=click.Choice(["txt", "lines", "jsonl", "json", "csv", "tsv", "bib", "parquet",
                                                          "feed", "medline", "pubmed-xml", "ris"]),
                     help="Input format [default: from the extension; stdin, .txt, .xml, .json/.jsonl and other files "
                          "by their first bytes: feed (Atom, RSS), pubmed-xml, ris, medline, jsonl (one object per "
                          "line), json (an array, or pretty-printed objects), bib, csv or tsv (except .txt: a header line naming a title "
                          "or abstract column), else txt (one abstract per paragraph); lines: one abstract per line]."),
        click.option("--encoding", metavar="NAME",
                     help="The input's encoding [default: UTF-8; a UTF-16 or UTF-32 BOM is recognised]."),
        click.option("--no-header", "no_header", is_flag=True,
                     help="CSV/TSV without a header row: name columns by number (--text-column 3)."),
        click.option("--delimiter", metavar="CHAR", callback=_delimiter,
                     help="CSV delimiter [default: ',', or ';' when the header row is ';'-separated]; with it, "
                          "stdin and files of no known extension are read as CSV."),
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
    return model_options(max_record_size_option(fn))


def bib_status(inputs, opts: dict, status: int) -> int:
    """The exit status after the output is written: 2, with one line saying how many, when
    entries of ``.bib`` inputs could not be read (each was warned about) and ``--on-error``
    is ``fail``; else ``status``."""
    if "bib" not in inputs.formats:
        return status
    from ..readers.bib import unreadable_entries
    from ..wording import plural

    bad = unreadable_entries(f for f, fmt in zip(inputs.files, inputs.formats) if fmt == "bib")
    if bad and opts["on_error"] == "fail":
        click.echo(f"tagger: {plural(bad, 'BibTeX entry', 'BibTeX entries')} could not be read, not tagged "
                   "(the warnings above say why); the readable ones were written; --on-error skip exits 0", err=True)
        return 2
    return status


def warn(msg: str) -> None:
    """One line ``tagger: warning: MSG`` on stderr."""
    click.echo(f"tagger: warning: {msg}", err=True)


def say_if_empty(inputs, read: int) -> None:
    """One line on stderr when no record at all was read from ``inputs`` (an empty file,
    ``[]``, a CSV of only its header row, ``< /dev/null``); the exit status stays 0."""
    if not read:
        click.echo(f"tagger: no records read from {inputs.names()}", err=True)


def open_inputs(files, opts: dict):
    """The :class:`~tagger.pipeline.inputs.Inputs` of a command's ``files`` and options; on a
    terminal, first says how to end abstracts typed in."""
    from click.core import ParameterSource

    from ..pipeline.inputs import Inputs
    from ..readers.stream import check_encoding

    if opts.get("encoding"):
        check_encoding(opts["encoding"])
    files = list(files) or ["-"]
    ctx = click.get_current_context(silent=True)
    if "-" in files and sys.stdin is not None and sys.stdin.isatty():
        command = ctx.command_path if ctx is not None else "tagger label"
        first = " EXPR" if ctx is not None and ctx.info_name == "filter" else ""
        click.echo("tagger: reading abstracts from the terminal, one per paragraph; end with Ctrl-D "
                   f"(or name a file: {command}{first} FILE)", err=True)
    given = [] if ctx is None else [f"--{name.replace('_', '-')}" for name in ("text_field", "title_field", "id_field")
                                    if ctx.get_parameter_source(name) == ParameterSource.COMMANDLINE]
    return Inputs(files, opts, warn=warn, given=given)


def quiet_broken_pipe():
    """The reader went away (``| head``): stop quietly, status 0."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # AttributeError: no stdout at all (>&-)
        pass


# --- progress ---------------------------------------------------------------------------

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

    def __call__(self, done: int, total: int | None = None, what: str | None = None) -> None:
        """As the library's ``progress(done, total, what)``: show ``done``, if it is time to;
        ``what`` None (output is about to be written): clear the line."""
        if what is None:
            self.clear()
        else:
            self.update(done)

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
