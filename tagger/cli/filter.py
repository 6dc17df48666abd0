"""``tagger filter``: keep the records whose tags match an expression."""

from __future__ import annotations

import click

from ..errors import TaggerError
from ._app import cli
from ._common import (
    Inputs,
    default_format,
    exit_code,
    io_options,
    load_model,
    make_writer,
    nothing_written,
    plural,
    quiet_broken_pipe,
    tag_parquet_files,
    with_count,
)


def check_quoted(expr: str, files) -> None:
    """Raise TaggerError when the expression was not quoted, so that the shell split it and its
    pieces (``and``, ``not``, a label id, a parenthesis) came as file names that are not there:
    ``tagger filter method:cnn and modality:image x.jsonl`` names the quoting, with the command
    to type, instead of saying "and: no such file"."""
    import os
    import re

    def piece(f):
        return not os.path.exists(f) and (f.lower() in ("and", "or", "not") or f.startswith("(") or f.endswith(")")
                                          or re.fullmatch(r"[A-Za-z][\w-]*:[\w*-]+", f) is not None)

    n = 0
    while n < len(files) and piece(files[n]):
        n += 1
    # only when an operator came apart: two bare labels are no expression, quoted or not
    if n and any(f.lower() in ("and", "or", "not") or f.startswith("(") or f.endswith(")") for f in files[:n]):
        whole = " ".join([expr, *files[:n]])
        rest = " ".join(files[n:]) or "FILE"
        raise TaggerError(f"{files[0]}: no such file; the shell split the expression: quote it whole, as in "
                          f"tagger filter [OPTIONS] '{whole}' {rest}")


@cli.command("filter", short_help="Keep the records whose tags match an expression.")
@click.argument("expr")
@click.argument("files", nargs=-1, metavar="[FILE]...")
@io_options
@click.option("--retag", is_flag=True, help="Tag every record anew, even those that carry tags.")
@click.option("--min-score", type=click.FloatRange(0, 1), default=None,
              help="A label matches only where its score is at least this.")
@click.option("--invert-match", "-v", "invert", is_flag=True, help="Keep the records that do not match.")
@click.option("--count", "-c", is_flag=True, help="Print only the number of records kept.")
@exit_code
def filter_(expr, files, retag, min_score, invert, count, **opts):
    """Keep the records whose tags match EXPR, e.g. 'modality:image and not method:cnn'.

    \b
    EXPR: label ids and facet wildcards (method:*), and/or/not, parentheses.
    Records that carry tags are trusted (unless --retag or --threshold); others are tagged on the fly.
    Exit 0 if any record was kept, 1 if none, 2 on error (as grep).
    """
    from ..labeling import trusted_or_tagged
    from ..query import parse
    from ..writers.target import Target

    check_quoted(expr, files)
    inputs = Inputs(files, opts)
    target = Target(opts["output"])
    model = load_model(opts["model"], opts["taxonomy"])
    query = parse(expr, model.labels, [f for f, _, _ in model.facets])
    fmt = default_format(opts["out_format"], inputs, target, bib=True)
    if fmt == "bib" and set(inputs.formats) != {"bib"}:
        raise TaggerError("-f bib writes BibTeX entries: give .bib files (or --input-format bib)")
    skipped = []

    def warn(msg):
        skipped.append(msg)
        click.echo(f"tagger: warning: {msg}", err=True)

    # a threshold of one's own only means something for records tagged now
    vocabulary = None
    if "bib" in inputs.formats:
        from ..bib import Vocabulary

        vocabulary = Vocabulary(model.facets)
    stream = trusted_or_tagged(inputs.records(), lambda: model, retag=retag or opts["threshold"] is not None,
                               need_scores=min_score is not None, vocabulary=vocabulary,
                               text_field=opts["text_field"], title_field=opts["title_field"],
                               id_field=opts["id_field"], thresholds=opts["threshold"], min_words=opts["min_words"],
                               on_error=opts["on_error"], warn=warn, jobs=opts["jobs"])
    kept = seen = 0
    target.binary = fmt == "parquet" and not count
    fresh = retag or opts["threshold"] is not None or not any(_carries_tags(f) for f in inputs.files)
    try:
        with target as fh:
            if target.binary and set(inputs.formats) == {"parquet"} and fresh:  # column by column, types kept
                kept = tag_parquet_files(model, inputs, fh, opts,
                                         keep=lambda p: query.matches(p.tags, p.scores, min_score) != invert)
                return 0 if kept else 1
            writer = make_writer(fh, fmt, model, inputs, target, opts)
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
    except BrokenPipeError:
        quiet_broken_pipe()
        return 0 if kept else 1
    if skipped:
        click.echo(f"tagger: {plural(len(skipped), 'bad record')} skipped, {kept} kept", err=True)
    return 0 if kept else 1


def _carries_tags(path: str) -> bool:
    """A Parquet file with a ``tags`` column (an earlier ``tagger label``: trusted)."""
    if not path.lower().endswith(".parquet"):
        return False
    from ..readers.parquet import open_parquet

    return "tags" in open_parquet(path).schema_arrow.names
