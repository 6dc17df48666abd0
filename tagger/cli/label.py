"""``tagger label``: tag abstracts from files or standard input."""

from __future__ import annotations

import click

from ._app import cli
from ._common import (
    AtomicOutput,
    Inputs,
    default_format,
    exit_code,
    io_options,
    load_model,
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
    """Tag abstracts: .txt (one per paragraph), .jsonl, .csv, .tsv, .gz of those, or - (stdin)."""
    from ..output import Writer

    inputs = Inputs(files, opts["input_format"], opts["text_field"], opts["id_field"])
    from ..api import Tagger

    model = load_model(opts["model"], opts["taxonomy"])
    opts["facets"] = Tagger(model).check_facets(facets)
    fmt = default_format(opts["out_format"], inputs, opts["output"])
    try:
        with AtomicOutput(opts["output"]) as fh:
            writer = Writer(fh, fmt, model.facets, inputs.table_format, opts["id_field"])
            written, skipped = stream(model, inputs, writer, opts, explain=explain_top if explain else 0)
            writer.close()
            fh.flush()
    except BrokenPipeError:
        quiet_broken_pipe()
        return 0
    if skipped:
        click.echo(f"tagger: {plural(skipped, 'bad record')} skipped, {written} written", err=True)
    return 0
