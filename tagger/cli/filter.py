"""``tagger filter``: keep the records whose tags match an expression."""

from __future__ import annotations

import click

from ..errors import TaggerError
from ..wording import plural
from ._app import cli
from ._common import bib_status, exit_code, io_options, open_inputs, quiet_broken_pipe, say_if_empty, warn


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
    from ..api import load
    from ..pipeline.tagging import filter_files
    from ..query import parse
    from ..writers import PASS_THROUGH, default_format
    from ..writers.target import Target

    check_quoted(expr, files)
    inputs = open_inputs(files, opts)
    target = Target(opts["output"])
    tagger = load(opts["model"], opts["taxonomy"])
    model = tagger.model
    query = parse(expr, model.labels, [f for f, _, _ in model.facets])
    fmt = default_format(opts["out_format"], inputs, target, bib=True)
    if fmt == "bib" and set(inputs.formats) not in PASS_THROUGH:
        raise TaggerError("-f bib writes the records as they were: give .bib files, or RIS or MEDLINE files "
                          "(one format at a time)")
    try:
        kept, skipped = filter_files(tagger, inputs, target, fmt, query, opts, retag=retag, min_score=min_score,
                                     invert=invert, count=count, warn=warn)
    except BrokenPipeError as e:
        quiet_broken_pipe()
        return 0 if getattr(e, "kept", 0) else 1
    say_if_empty(inputs, getattr(inputs, "seen", 1))
    if skipped:
        click.echo(f"tagger: {plural(skipped, 'bad record')} skipped, {kept} kept", err=True)
    return bib_status(inputs, opts, 0 if kept else 1)
