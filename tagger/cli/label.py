"""``tagger label``: tag abstracts from files or standard input."""

from __future__ import annotations

import click

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
    stream,
)


@cli.command()
@click.argument("files", nargs=-1, metavar="[FILE]...")
@io_options
@click.option("--facet", "facets", multiple=True, metavar="NAME", help="Only these facets (repeatable).")
@click.option("--explain", is_flag=True, help="Show, per tag, the n-grams of the text that raised its score most.")
@click.option("--explain-top", type=click.IntRange(1), default=3, show_default=True, help="How many n-grams --explain shows.")
@exit_code
def label(files, facets, explain, explain_top, **opts):
    """Tag abstracts: .txt (one per paragraph), .jsonl, .json, .csv, .tsv, .bib, .gz of those, or - (stdin)."""
    from ..writers.target import Target

    from ..api import Tagger

    inputs = Inputs(files, opts)
    target = Target(opts["output"])
    model = load_model(opts["model"], opts["taxonomy"])
    opts["facets"] = Tagger(model).check_facets(facets)
    fmt = default_format(opts["out_format"], inputs, target)
    try:
        with target as fh:
            writer = make_writer(fh, fmt, model, inputs, target, opts)
            written, skipped = stream(model, inputs, writer, opts, explain=explain_top if explain else 0)
            if skipped and not written:
                raise nothing_written(skipped)
            writer.close()
    except BrokenPipeError:
        quiet_broken_pipe()
        return 0
    if skipped:
        click.echo(f"tagger: {plural(skipped, 'bad record')} skipped, {written} written", err=True)
    return 0
