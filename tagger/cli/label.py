"""``tagger label``: tag abstracts from files or standard input."""

from __future__ import annotations

import click

from ..errors import TaggerError
from ..wording import plural
from ._app import cli
from ._common import Ticker, bib_status, exit_code, io_options, open_inputs, quiet_broken_pipe, say_if_empty, warn


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
    from ..api import load
    from ..pipeline.tagging import label_files
    from ..writers import default_format

    inputs = open_inputs(files, opts)
    target = Target(opts["output"])
    tagger = load(opts["model"], opts["taxonomy"])
    opts["facets"] = tagger.check_facets(facets)
    fmt = default_format(opts["out_format"], inputs, target)
    if fmt == "bib":
        raise TaggerError("-f bib is for tagger filter (the matching entries as they were); "
                          "tagger bib FILE writes the tags into a .bib file")
    target.binary = fmt == "parquet"
    if target.binary and explain:
        raise TaggerError("--explain is shown in text, jsonl and json output, not written to Parquet")
    try:
        written, skipped = label_files(tagger, inputs, target, fmt, opts, explain=explain_top if explain else 0,
                                       warn=warn, progress=Ticker("records tagged"))
    except BrokenPipeError:
        quiet_broken_pipe()
        return 0
    except KeyboardInterrupt as e:  # Ctrl-C (or SIGTERM): the temporary file is gone already
        if not target.streams:
            done = getattr(e, "records_done", 0)
            e.tagger_message = (f"tagger: interrupted: {opts['output']} was not written "
                                f"({plural(done, 'record')} had been tagged)")
        raise
    say_if_empty(inputs, written + skipped)
    if skipped:
        click.echo(f"tagger: {plural(skipped, 'bad record')} skipped, {written} written", err=True)
    return bib_status(inputs, opts, 0)


def _label_dask(address, files, facets, explain, opts):
    """``--dask``: the partitions ``files`` (globs) tagged on a cluster (:mod:`tagger.pipeline.partitions`)."""
    from ..dask import label_partitions, make_spec
    from ..pipeline.partitions import PartitionJob

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
    return label_partitions(address, files, opts["output"], job, lambda line: click.echo(line, err=True))
