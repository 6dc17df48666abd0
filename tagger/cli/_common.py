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


def exit_code(fn):
    """Run a command body returning an exit status; turn TaggerError into one line + 2."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            code = fn(*args, **kwargs)
        except TaggerError as e:
            click.echo(f"tagger: error: {e}", err=True)
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


def io_options(fn):
    """Add the input, output and labelling options that ``label`` and ``filter`` share."""
    opts = [
        click.option("--input-format", type=click.Choice(["txt", "jsonl", "csv", "tsv"]),
                     help="Input format [default: from the extension; for stdin and other files, jsonl if the "
                          "first character is '{', else txt]."),
        click.option("--format", "-f", "out_format", type=click.Choice(["text", "jsonl", "json", "tsv", "csv", "pairs"]),
                     help="Output format [default: from -o's extension, else text on a terminal, else jsonl (csv/tsv for table input)]."),
        click.option("--output", "-o", metavar="FILE", help="Write here (atomically: renamed into place on success)."),
        click.option("--text-field", "--text-column", "text_field", default="abstract", show_default=True,
                     help="Field (JSONL) or column (CSV/TSV) holding the abstract."),
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


class Inputs:
    """The input files of a command, read one after another as one stream of records."""

    def __init__(self, files, input_format, text_field, id_field):
        from ..corpus import detect_format

        self.files = list(files) or ["-"]
        self.formats = [detect_format(f, input_format, sniff=True) for f in self.files]
        self.text_field, self.id_field = text_field, id_field
        tables = {f for f in self.formats if f in ("csv", "tsv")}
        self.table_format = tables.pop() if len(tables) == 1 and len(set(self.formats)) == 1 else None

    def records(self):
        from ..corpus import read_records

        for f, fmt in zip(self.files, self.formats):
            yield from read_records(f, fmt, self.text_field, self.id_field)

    def batches(self):
        """The records in batches for ``labeling.render_stream``: JSON Lines as undecoded
        chunks of lines, other formats as lists of records; no batch spans two files."""
        from ..labeling import read_batches

        for f, fmt in zip(self.files, self.formats):
            yield from read_batches(f, fmt, self.text_field, self.id_field)


def default_format(out_format, inputs, output):
    if out_format:
        return out_format
    if output and output != "-":
        ext = {".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json", ".tsv": "tsv", ".csv": "csv", ".txt": "text"}
        fmt = ext.get(os.path.splitext(output)[1].lower())
        if fmt:
            return fmt
    if inputs.table_format:
        return inputs.table_format
    return "text" if output is None and sys.stdout.isatty() else "jsonl"


class AtomicOutput:
    """stdout, or a temporary file beside ``path`` renamed onto it only on success."""

    def __init__(self, path):
        self.path, self.tmp, self.fh = path, None, None

    def __enter__(self):
        if self.path is None or self.path == "-":
            self.fh = sys.stdout
            if hasattr(self.fh, "reconfigure"):  # a lone surrogate from a JSON escape: written as \udXXX
                self.fh.reconfigure(errors="backslashreplace")
            return self.fh
        import tempfile

        if os.path.isdir(self.path):
            raise TaggerError(f"{self.path}: is a directory; -o needs a file name")
        if self.path.lower().endswith(".gz"):
            raise TaggerError(f"{self.path}: compressed output is not written; pipe stdout through gzip instead")
        d = os.path.dirname(os.path.abspath(self.path))
        if not os.path.isdir(d):
            raise TaggerError(f"{self.path}: no such directory: {d}")
        try:
            fd, self.tmp = tempfile.mkstemp(prefix="." + os.path.basename(self.path) + ".", suffix=".tmp", dir=d)
        except OSError as e:
            raise TaggerError(f"{self.path}: cannot write here: {e.strerror}") from None
        # mkstemp makes 0600: give the file the mode it had, or what the umask allows
        try:
            mode = os.stat(self.path).st_mode & 0o7777
        except OSError:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.chmod(self.tmp, mode)
        self.fh = os.fdopen(fd, "w", encoding="utf-8", newline="", errors="backslashreplace")
        return self.fh

    def __exit__(self, exc_type, exc, tb):
        if self.tmp is None:
            return False
        try:
            self.fh.close()
            if exc_type is None:
                os.replace(self.tmp, self.path)
        except OSError as e:
            raise TaggerError(f"{self.path}: cannot write: {e.strerror}") from None
        finally:
            if os.path.exists(self.tmp):
                os.unlink(self.tmp)
        return False


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
              warn=warn, jobs=opts["jobs"])
    try:
        if writer.renderer is not None:  # per-record output: rendered (and parsed) where the tagging is done
            for text, n in render_stream(model, inputs.batches(), writer.renderer, **kw):
                writer.write_rendered(text, n)
                writer.fh.flush()
        else:
            for rec, pred in label_stream(model, inputs.records(), **kw):
                writer.write(rec, pred)
                if writer.count % 256 == 0:
                    writer.fh.flush()
    except TaggerError as e:
        raise with_count(e, writer.count, opts["output"]) from None
    return writer.count, len(skipped)


def plural(n: int, word: str) -> str:
    """``"1 record"``, ``"3 records"``."""
    return f"{n} {word}" + ("" if n == 1 else "s")


def with_count(e: TaggerError, written: int, output: str | None = None) -> TaggerError:
    """``e`` with how many records were written before it (to stdout), or, with ``-o FILE``,
    that the file was left as it was (the output is written atomically); nothing is added for
    a file that could not be opened before anything was written."""
    from ..corpus import FileError

    if isinstance(e, FileError) and not written:
        return e
    if output and output != "-":
        return TaggerError(f"{e} ({output} left as it was; {plural(written, 'record')} had been tagged before it)")
    return TaggerError(f"{e} ({plural(written, 'record')} {'was' if written == 1 else 'were'} written before it)")


def quiet_broken_pipe():
    """The reader went away (``| head``): stop quietly, status 0."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass



# --- training ---------------------------------------------------------------------------

def progress(label):
    """A click progress bar on stderr when it is a terminal, else nothing."""
    if not sys.stderr.isatty():
        return None, None
    bar = click.progressbar(length=1, label=label, file=sys.stderr)
    bar.__enter__()

    def update(done, total):
        bar.length = total
        bar.update(done - bar.pos)

    return bar, update


#: the repository's hand-tagged corpus, relative to the repository root
DEFAULT_CORPUS = "fixtures/corpus.jsonl"


def need_corpus(path: str) -> None:
    """A clear error when the default corpus is not here (run from elsewhere than the
    repository root, or an installed tagger without the repository)."""
    if path == DEFAULT_CORPUS and not os.path.exists(path):
        raise TaggerError(f"{path}: no such file (the default, relative to the repository root; "
                          "name a hand-tagged corpus with --corpus FILE)")
