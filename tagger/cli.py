"""The ``tagger`` command: a thin click layer over the library.

Each command parses options, calls one library function, prints the result and returns an
exit status.  Heavy libraries are imported inside the commands that use them, never at
module level: ``tagger --help`` imports click and this module only, ``tagger label`` adds
numpy, and only ``train``/``evaluate`` import scikit-learn, nltk and lightgbm
(``tests/test_cli.py`` asserts this on ``sys.modules``).

Exit statuses: 0 success; 1 "found something" (``bib`` changed or would change a file,
``corpus check`` found problems, ``filter`` matched nothing); 2 bad usage or bad input, with
one line ``tagger: error: ...`` on stderr and no traceback; 3 an internal error (a bug: one
line, or the traceback with ``TAGGER_DEBUG=1``); 130 interrupted (Ctrl-C).
"""

from __future__ import annotations

import functools
import os
import sys

import click

from .errors import TaggerError


def _exit_code(fn):
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


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(package_name="tagger", message="tagger %(version)s")
def cli():
    """Tag scientific paper abstracts with the labels of a YAML taxonomy, offline.

    \b
    tagger label abstracts.txt            tag paragraphs of a text file
    tagger label --input-format jsonl - < day.jsonl > out.jsonl
    tagger filter 'modality:image and not method:cnn' day.jsonl
    tagger bib refs.bib                   write tags into a .bib file's keywords
    tagger train                          retrain from the hand-tagged corpus
    """


# --- shared options ---------------------------------------------------------------------

def _model_options(fn):
    fn = click.option("--taxonomy", "taxonomy", metavar="FILE",
                      help="Taxonomy the model must match [default: $TAGGER_TAXONOMY, else the one the model was "
                           "trained with].")(fn)
    fn = click.option("--model", "model", metavar="DIR",
                      help="Model directory [default: $TAGGER_MODEL, else the packaged model].")(fn)
    return fn


def _load_model(model_opt, taxonomy_opt):
    from .model import Model
    from .resources import model_dir, taxonomy_chosen, taxonomy_path

    tax = None
    if taxonomy_chosen(taxonomy_opt):
        from .taxonomy import load_taxonomy

        tax = load_taxonomy(taxonomy_path(taxonomy_opt))
    return Model.load(model_dir(model_opt), tax)


def _io_options(fn):
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
    return _model_options(fn)


class _Inputs:
    """The input files of a command, read one after another as one stream of records."""

    def __init__(self, files, input_format, text_field, id_field):
        from .corpus import detect_format

        self.files = list(files) or ["-"]
        self.formats = [detect_format(f, input_format, sniff=True) for f in self.files]
        self.text_field, self.id_field = text_field, id_field
        tables = {f for f in self.formats if f in ("csv", "tsv")}
        self.table_format = tables.pop() if len(tables) == 1 and len(set(self.formats)) == 1 else None

    def records(self):
        from .corpus import read_records

        for f, fmt in zip(self.files, self.formats):
            yield from read_records(f, fmt, self.text_field, self.id_field)

    def batches(self):
        """The records in batches for ``labeling.render_stream``: JSON Lines as undecoded
        chunks of lines, other formats as lists of records; no batch spans two files."""
        from .labeling import read_batches

        for f, fmt in zip(self.files, self.formats):
            yield from read_batches(f, fmt, self.text_field, self.id_field)


def _default_format(out_format, inputs, output):
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


class _AtomicOutput:
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


def _stream(model, inputs, writer, opts, explain=0):
    """Label records and write them; returns (written, skipped)."""
    from .labeling import label_stream, render_stream

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
        raise _with_count(e, writer.count, opts["output"]) from None
    return writer.count, len(skipped)


def _plural(n: int, word: str) -> str:
    """``"1 record"``, ``"3 records"``."""
    return f"{n} {word}" + ("" if n == 1 else "s")


def _with_count(e: TaggerError, written: int, output: str | None = None) -> TaggerError:
    """``e`` with how many records were written before it (to stdout), or, with ``-o FILE``,
    that the file was left as it was (the output is written atomically); nothing is added for
    a file that could not be opened before anything was written."""
    from .corpus import FileError

    if isinstance(e, FileError) and not written:
        return e
    if output and output != "-":
        return TaggerError(f"{e} ({output} left as it was; {_plural(written, 'record')} had been tagged before it)")
    return TaggerError(f"{e} ({_plural(written, 'record')} {'was' if written == 1 else 'were'} written before it)")


def _quiet_broken_pipe():
    """The reader went away (``| head``): stop quietly, status 0."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


@cli.command()
@click.argument("files", nargs=-1, metavar="[FILE]...")
@_io_options
@click.option("--facet", "facets", multiple=True, metavar="NAME", help="Only these facets (repeatable).")
@click.option("--explain", is_flag=True, help="Show, per tag, the n-grams of the text that raised its score most.")
@click.option("--explain-top", type=click.IntRange(1), default=3, show_default=True, help="How many n-grams --explain shows.")
@_exit_code
def label(files, facets, explain, explain_top, **opts):
    """Tag abstracts: .txt (one per paragraph), .jsonl, .csv, .tsv, .gz of those, or - (stdin)."""
    from .output import Writer

    inputs = _Inputs(files, opts["input_format"], opts["text_field"], opts["id_field"])
    model = _load_model(opts["model"], opts["taxonomy"])
    if facets:
        known = [f for f, _, _ in model.facets]
        for f in facets:
            if f not in known:
                raise TaggerError(f"unknown facet {f!r} (this model has: {', '.join(known)})")
    opts["facets"] = list(facets) or None
    fmt = _default_format(opts["out_format"], inputs, opts["output"])
    try:
        with _AtomicOutput(opts["output"]) as fh:
            writer = Writer(fh, fmt, model.facets, inputs.table_format, opts["id_field"])
            written, skipped = _stream(model, inputs, writer, opts, explain=explain_top if explain else 0)
            writer.close()
            fh.flush()
    except BrokenPipeError:
        _quiet_broken_pipe()
        return 0
    if skipped:
        click.echo(f"tagger: {_plural(skipped, 'bad record')} skipped, {written} written", err=True)
    return 0


@cli.command("filter")
@click.argument("expr")
@click.argument("files", nargs=-1, metavar="[FILE]...")
@_io_options
@click.option("--retag", is_flag=True, help="Tag every record anew, even those that carry tags.")
@click.option("--min-score", type=click.FloatRange(0, 1), default=None,
              help="A label matches only where its score is at least this.")
@click.option("--invert-match", "-v", "invert", is_flag=True, help="Keep the records that do not match.")
@click.option("--count", "-c", is_flag=True, help="Print only the number of records kept.")
@_exit_code
def filter_(expr, files, retag, min_score, invert, count, **opts):
    """Keep the records whose tags match EXPR, e.g. 'modality:image and not method:cnn'.

    \b
    EXPR: label ids and facet wildcards (method:*), and/or/not, parentheses.
    Records that carry tags are trusted (unless --retag or --threshold); others are tagged on the fly.
    Exit 0 if any record was kept, 1 if none, 2 on error (as grep).
    """
    from .labeling import trusted_or_tagged
    from .output import Writer
    from .query import parse

    inputs = _Inputs(files, opts["input_format"], opts["text_field"], opts["id_field"])
    model = _load_model(opts["model"], opts["taxonomy"])
    query = parse(expr, model.labels, [f for f, _, _ in model.facets])
    fmt = _default_format(opts["out_format"], inputs, opts["output"])
    skipped = []

    def warn(msg):
        skipped.append(msg)
        click.echo(f"tagger: warning: {msg}", err=True)

    # a threshold of one's own only means something for records tagged now
    stream = trusted_or_tagged(inputs.records(), lambda: model, retag=retag or opts["threshold"] is not None,
                               need_scores=min_score is not None,
                               text_field=opts["text_field"], title_field=opts["title_field"],
                               thresholds=opts["threshold"], min_words=opts["min_words"],
                               on_error=opts["on_error"], warn=warn, jobs=opts["jobs"])
    kept = 0
    try:
        with _AtomicOutput(opts["output"]) as fh:
            writer = Writer(fh, fmt, model.facets, inputs.table_format, opts["id_field"])
            try:
                for rec, pred in stream:
                    if query.matches(pred.tags, pred.scores, min_score) != invert:
                        kept += 1
                        if not count:
                            writer.write(rec, pred)
            except TaggerError as e:
                raise _with_count(e, writer.count, opts["output"]) from None
            if count:
                fh.write(f"{kept}\n")
            else:
                writer.close()
            fh.flush()
    except BrokenPipeError:
        _quiet_broken_pipe()
        return 0 if kept else 1
    return 0 if kept else 1


# --- training ---------------------------------------------------------------------------

def _progress(label):
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


def _need_corpus(path: str) -> None:
    """A clear error when the default corpus is not here (run from elsewhere than the
    repository root, or an installed tagger without the repository)."""
    if path == DEFAULT_CORPUS and not os.path.exists(path):
        raise TaggerError(f"{path}: no such file (the default, relative to the repository root; "
                          "name a hand-tagged corpus with --corpus FILE)")


@cli.command()
@click.option("--corpus", default=DEFAULT_CORPUS, show_default=True, metavar="FILE",
              help="Hand-tagged corpus (JSON Lines with abstract, labels, annotator).")
@click.option("--taxonomy", metavar="FILE", help="Taxonomy [default: $TAGGER_TAXONOMY, else the packaged one].")
@click.option("--out", default="models", show_default=True, metavar="DIR", help="Model directory to (re)write atomically.")
@click.option("--folds", type=click.IntRange(0), default=5, show_default=True,
              help="Folds of the out-of-fold pass that tunes per-label thresholds (0: no tuning).")
@click.option("--rounds", type=click.IntRange(1), default=None, help="Boosting rounds per label [default: the model's].")
@_exit_code
def train(corpus, taxonomy, out, folds, rounds):
    """Train TF-IDF + LightGBM models on a hand-tagged corpus and write a model directory."""
    from .corpus import check_corpus, load_corpus
    from .model import NUM_ROUNDS, train as train_model
    from .resources import taxonomy_path
    from .taxonomy import load_taxonomy

    tax = load_taxonomy(taxonomy_path(taxonomy))
    _need_corpus(corpus)
    problems = check_corpus(corpus, tax)
    if problems:
        raise TaggerError(f"{problems[0]} (and {len(problems) - 1} more problems; see `tagger corpus check {corpus}`)"
                          if len(problems) > 1 else problems[0])
    records = load_corpus(corpus)
    if len(records) < 10:
        raise TaggerError(f"{corpus}: {len(records)} examples; training needs at least 10 hand-tagged abstracts")
    if folds > len(records) // 2:
        raise TaggerError(f"--folds {folds} is too many for {len(records)} examples (at most {len(records) // 2})")
    from .model import check_out_dir

    check_out_dir(out)
    bar, update = _progress("out-of-fold pass")
    try:
        manifest = train_model(records, tax, out, num_rounds=rounds or NUM_ROUNDS, threshold_folds=folds, progress=update)
    finally:
        if bar:
            bar.__exit__(None, None, None)
    figs = manifest.get("figures", {}).get("out_of_fold", {})
    click.echo(f"trained {len(manifest['labels'])} labels on {manifest['corpus_size']} abstracts "
               f"({manifest['n_features']} features, {manifest['n_trees']} trees) -> {out}")
    if figs:
        click.echo(f"out-of-fold F1 (micro/macro): {figs['all']['f1_micro']:.3f} / {figs['all']['f1_macro']:.3f}")
    return 0


@cli.command()
@click.option("--corpus", default=DEFAULT_CORPUS, show_default=True, metavar="FILE",
              help="Hand-tagged corpus to cross-validate on.")
@click.option("--test", "test_file", metavar="FILE", help="Instead: score the trained model on this hand-tagged file.")
@click.option("--folds", "-k", type=click.IntRange(2), default=5, show_default=True, help="Cross-validation folds.")
@click.option("--baseline", is_flag=True, help="Also run the logistic-regression baseline on the same folds.")
@click.option("--json", "json_out", metavar="FILE", help="Write all figures as JSON.")
@click.option("--per-label", metavar="FILE", help="Write the per-label table (TSV).")
@click.option("--card", metavar="DIR", help="Write the model card DIR/README.md from these figures.")
@_model_options
@_exit_code
def evaluate(corpus, test_file, folds, baseline, json_out, per_label, card, model, taxonomy):
    """Cross-validated precision, recall and F1 (micro, macro, samples), per facet and label."""
    import json

    from .corpus import check_corpus, load_corpus
    from .evaluation import cross_validate, evaluate_model, format_report, model_card, write_per_label
    from .model import Model
    from .resources import model_dir, taxonomy_chosen, taxonomy_path
    from .taxonomy import from_model_manifest, load_taxonomy

    if test_file and not taxonomy_chosen(taxonomy):  # score a model by the labels it was trained on
        trained = Model.load(model_dir(model))
        tax = from_model_manifest(trained.manifest)
    else:
        tax = load_taxonomy(taxonomy_path(taxonomy))
    if card:
        Model.load(card, tax)  # fail now, not after the cross-validation
    for out_path in (json_out, per_label):
        if out_path and os.path.isdir(out_path):
            raise TaggerError(f"{out_path}: is a directory; give a file name")
    path = test_file or corpus
    _need_corpus(path)
    problems = check_corpus(path, tax)
    if problems:
        raise TaggerError(problems[0] + (f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""))
    records = load_corpus(path)
    if not records:
        raise TaggerError(f"{path}: no hand-tagged examples")
    if not test_file and len(records) < 2 * folds:
        raise TaggerError(f"{path}: {len(records)} examples are too few for {folds}-fold cross-validation")
    if test_file:
        result = evaluate_model(Model.load(model_dir(model), tax), records, tax)
    else:
        bar, update = _progress(f"{folds}-fold cross-validation")
        try:
            result = cross_validate(records, tax, k=folds, baseline=baseline, progress=update)
        finally:
            if bar:
                bar.__exit__(None, None, None)
    click.echo(format_report(result, tax), nl=False)
    if json_out:
        with open(json_out, "w", encoding="utf-8") as fh:
            json.dump(result, fh, indent=1)
            fh.write("\n")
    if per_label:
        write_per_label(per_label, result["tagger"]["per_label"])
    if card:
        from pathlib import Path

        m = Model.load(card, tax)
        text = model_card(m.manifest, result, tax)
        tmp = Path(card) / ".README.md.tmp"
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(Path(card) / "README.md")
        click.echo(f"model card written to {Path(card) / 'README.md'}")
    return 0


@cli.command()
@click.argument("directory", required=False)
@_exit_code
def info(directory):
    """Print the model card of a model directory [default: the model in use]."""
    import json

    from .model import Model
    from .resources import model_dir

    d = model_dir(directory)
    m = Model.load(d)
    card = d / "README.md"
    if card.is_file():
        click.echo(card.read_text(encoding="utf-8"), nl=False)
        return 0
    man = m.manifest
    click.echo(f"{d}: {len(man['labels'])} labels, trained {man.get('created')} on {man.get('corpus_size')} abstracts")
    click.echo(f"no model card; write one with `tagger evaluate --card {d}`")
    figs = man.get("figures", {}).get("out_of_fold")
    if figs:
        click.echo("out-of-fold figures: " + json.dumps({k: v["f1_micro"] for k, v in figs.items()}))
    return 0


# --- taxonomy and corpus ------------------------------------------------------------------

@cli.group()
def taxonomy():
    """Show or check a taxonomy file."""


@taxonomy.command("show")
@click.argument("file", required=False)
@_exit_code
def taxonomy_show(file):
    """Print the facets and labels of FILE [default: $TAGGER_TAXONOMY, else the packaged one]."""
    from .resources import taxonomy_path
    from .taxonomy import format_tree, load_taxonomy

    click.echo(format_tree(load_taxonomy(taxonomy_path(file))), nl=False)
    return 0


@taxonomy.command("check")
@click.argument("file")
@_exit_code
def taxonomy_check(file):
    """Validate FILE; report the first problem with its line."""
    from .taxonomy import load_taxonomy

    tax = load_taxonomy(file)
    click.echo(f"{file}: ok ({len(tax.facets)} facets, {len(tax.labels)} labels)")
    return 0


@cli.group()
def corpus():
    """Check a hand-tagged corpus."""


@corpus.command("check")
@click.argument("file")
@click.option("--taxonomy", metavar="FILE", help="Taxonomy [default: $TAGGER_TAXONOMY, else the packaged one].")
@_exit_code
def corpus_check(file, taxonomy):
    """Validate a hand-tagged corpus: unknown labels, duplicate ids or abstracts, empty abstracts."""
    from .corpus import check_corpus, load_corpus
    from .resources import taxonomy_path
    from .taxonomy import load_taxonomy

    problems = check_corpus(file, load_taxonomy(taxonomy_path(taxonomy)))
    for p in problems:
        click.echo(p)
    if problems:
        click.echo(f"{file}: {len(problems)} problem(s)", err=True)
        return 1
    click.echo(f"{file}: ok ({len(load_corpus(file))} examples)")
    return 0


# --- bibliographies ------------------------------------------------------------------------

@cli.command()
@click.argument("files", nargs=-1, required=True, metavar="FILE...")
@click.option("--check", is_flag=True, help="Change nothing; exit 1 if any entry's tags are missing or stale.")
@click.option("--strict", is_flag=True, help="Also fail (exit 1) on entries that cannot be read safely.")
@click.option("--diff", is_flag=True, help="Print the unified diff of what is (or would be) written.")
@click.option("--field", metavar="NAME", help="Write tags into this tool-owned field instead of merging into keywords.")
@click.option("--encoding", metavar="NAME", help="The files' encoding when not UTF-8 (written back in it).")
@click.option("--min-words", type=click.IntRange(0), default=None, help="Abstain on shorter abstracts [default: 20].")
@_model_options
@_exit_code
def bib(files, check, strict, diff, field, encoding, min_words, model, taxonomy):
    """Keep the tags of .bib entries with an abstract current (the pre-commit hook).

    Tags are merged into each entry's keywords field, after the user's own terms, which keep
    their text, order and separator; every other byte of the file stays as it was.  Exit 1 when
    a file was changed (or, with --check, would be), else 0; 2 on unreadable files.
    """
    import codecs

    from . import bib as bibmod

    if encoding:
        try:
            if not codecs.lookup(encoding)._is_text_encoding:
                raise TaggerError(f"--encoding {encoding}: not a text encoding")
        except LookupError:
            raise TaggerError(f"--encoding {encoding}: unknown encoding") from None
    m = _load_model(model, taxonomy)

    def predict(entries):
        preds = m.predict(entries, min_words=min_words)
        return [p.tags for p in preds]

    try:
        return bibmod.run(files, predict=predict, facets=[f for f, _, _ in m.facets], check=check, strict=strict,
                          diff=diff, field=field, encoding=encoding)
    except ValueError as e:
        raise TaggerError(str(e)) from None


def _kill_workers():
    """Stop --jobs worker processes now: a signal sent to tagger alone (kill PID) does not
    reach them, and idle workers would otherwise linger, holding the caller's pipes open."""
    import signal

    mod = sys.modules.get("tagger.labeling")
    for executor in list(getattr(mod, "_POOL", {}).values()):
        for pid in list(getattr(executor, "_processes", None) or {}):
            try:
                os.kill(pid, signal.SIGKILL)
            except (OSError, TypeError):
                pass


class _Terminated(KeyboardInterrupt):
    """SIGTERM, unwound like Ctrl-C so that temporary output files are removed."""


def _on_sigterm(signum, frame):
    raise _Terminated()


def main(argv=None):
    """Console entry point: runs the click group, mapping Ctrl-C to 130 (SIGTERM to 143)
    and keeping click's own usage errors at status 2."""
    import signal

    signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        rv = cli.main(args=argv, prog_name="tagger", standalone_mode=False)
    except (click.exceptions.Abort, KeyboardInterrupt) as e:
        # Output files were already removed on the way out (_AtomicOutput).  Leave at once:
        # a normal exit would wait on worker processes (--jobs), which end with their parent.
        term = isinstance(e, _Terminated) or isinstance(e.__cause__, _Terminated)
        try:
            _kill_workers()
            if not isinstance(e, click.exceptions.Abort):  # click has already ended the line
                sys.stderr.write("\n")
            sys.stderr.flush()
        finally:
            os._exit(143 if term else 130)
    except click.ClickException as e:
        e.show()
        sys.exit(e.exit_code)
    except BrokenPipeError:
        _quiet_broken_pipe()
        sys.exit(0)
    except Exception as e:  # a bug of ours: one line, unless asked for the traceback
        if os.environ.get("TAGGER_DEBUG"):
            raise
        sys.stderr.write(f"tagger: internal error: {type(e).__name__}: {e} (set TAGGER_DEBUG=1 for the traceback)\n")
        sys.exit(3)
    sys.exit(rv if isinstance(rv, int) else 0)


if __name__ == "__main__":  # pragma: no cover
    main()
