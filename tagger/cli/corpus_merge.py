"""``tagger corpus merge``: merge tagged batches into one corpus."""

from __future__ import annotations

import click

from ..wording import plural
from ..writers.target import Target
from ._common import exit_code
from .corpus import corpus


@corpus.command("merge", short_help="Merge tagged batches into one row per id.")
@click.argument("files", nargs=-1, required=True, metavar="BATCH.jsonl...")
@click.option("--output", "-o", required=True, metavar="FILE",
              help="The merged corpus (written atomically; '-' for stdout).")
@click.option("--adjudicated", metavar="FILE",
              help="Rows of id, labels, annotator that settle ids the batches disagree on.")
@exit_code
def corpus_merge(files, output, adjudicated):
    """Merge tagged batches: one row per id, naming every hand (A+B, adjudicated C).

    The same id with different label sets is refused (exit 2, the ids listed) unless
    --adjudicated settles it.
    """
    import json

    from ..annotate.merge import merge_batches

    rows = merge_batches(list(files), adjudicated, warn=lambda m: click.echo(f"tagger: warning: {m}", err=True))
    with Target(output) as fh:
        for r in rows:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    multi = sum(1 for r in rows if "+" in r["annotator"] or ", adjudicated " in r["annotator"])
    adj = sum(1 for r in rows if ", adjudicated " in r["annotator"])
    click.echo(f"{output}: {plural(len(rows), 'row')} from {plural(len(files), 'file')} "
               f"({multi} tagged by more than one hand, {adj} adjudicated)", err=True)
    return 0
