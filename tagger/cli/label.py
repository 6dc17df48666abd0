"""``tagger label``: tag abstracts from files or standard input."""

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
    stream,
    tag_parquet_files,
)


@cli.command(short_help="Tag the abstracts of text, JSON, CSV, BibTeX or Parquet files.")
@click.argument("files", nargs=-1, metavar="[FILE]...")
@io_options
@click.option("--facet", "facets", multiple=True, metavar="NAME", help="Only these facets (repeatable).")
@click.option("--explain", is_flag=True, help="Show, per tag, the n-grams of the text that raised its score most.")
@click.option("--explain-top", type=click.IntRange(1), default=3, show_default=True, help="How many n-grams --explain shows.")
@click.option("--dask", "dask_address", metavar="ADDRESS",
              help="Tag the partitions FILE... (globs) on this Dask scheduler (tcp://host:8786) into the directory -o, "
                   "one output per input partition.")
@exit_code
def label(files, facets, explain, explain_top, dask_address, **opts):
    """Tag abstracts: .txt (one per paragraph), .jsonl, .json, .csv, .tsv, .bib, .gz of those, .parquet, or - (stdin)."""
    from ..writers.target import Target

    if dask_address:
        return _label_dask(dask_address, files, facets, explain_top if explain else 0, opts)
    from ..api import Tagger

    inputs = Inputs(files, opts)
    target = Target(opts["output"])
    model = load_model(opts["model"], opts["taxonomy"])
    opts["facets"] = Tagger(model).check_facets(facets)
    fmt = default_format(opts["out_format"], inputs, target)
    if fmt == "bib":
        raise TaggerError("-f bib is for tagger filter (the matching entries as they were); "
                          "tagger bib FILE writes the tags into a .bib file")
    target.binary = fmt == "parquet"
    if target.binary and explain:
        raise TaggerError("--explain is shown in text, jsonl and json output, not written to Parquet")
    try:
        with target as fh:
            if fmt == "parquet" and set(inputs.formats) == {"parquet"}:  # column by column, types kept
                tag_parquet_files(model, inputs, fh, opts)
                return 0
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


def _label_dask(address, files, facets, explain, opts):
    """``--dask``: the partitions ``files`` (globs) tagged on a cluster (:mod:`tagger.partitions`)."""
    from ..dask import make_spec
    from ..partitions import PartitionJob, run

    if not files or "-" in files:
        raise TaggerError("--dask needs the input partitions as files or a glob (quoted), not stdin")
    if not opts["output"] or opts["output"] == "-":
        raise TaggerError("--dask needs -o OUTPUT_DIR/ (each partition is written there under its own name)")
    for name, bad in (("--format", opts["out_format"]), ("--input-format", opts["input_format"]),
                      ("--jobs", opts["jobs"] != 1)):
        if bad:
            raise TaggerError(f"--dask writes each partition in its own format with the cluster's workers; "
                              f"leave out {name}")
    spec = make_spec(opts["model"], opts["taxonomy"], text=opts["text_field"], title=opts["title_field"],
                     facets=list(facets) or None, thresholds=opts["threshold"], min_words=opts["min_words"])
    job = PartitionJob(spec, opts["id_field"], opts["on_error"], explain)
    return run(address, files, opts["output"], job, lambda line: click.echo(line, err=True))
