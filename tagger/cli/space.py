"""``tagger space build``: learn a text space from unlabelled abstracts."""

from __future__ import annotations

import click

from ._app import cli
from ._common import Progress, exit_code


@cli.group(short_help="Build the text space that models read beside their terms.")
def space():
    """The text space: dense components of a text, learned from unlabelled abstracts.

    Models read them beside their TF-IDF terms when trained with `tagger train --space DIR`
    (or `--space package`: the one the package ships, models/space).
    """


class _Phases:
    """A progress bar per phase of the build (reading, stemming, SVD...); a phase of unknown
    length is a line on stderr."""

    def __init__(self):
        self.what, self.bar = None, None

    def __call__(self, done, total, what=None):
        if total is None:
            click.echo(f"tagger: space: {what}: {done:,} records", err=True)
            return
        if what != self.what:
            self.close()
            self.what, self.bar = what, Progress(f"space: {what}")
        self.bar(done, total, f"{done:,} of {total:,}")

    def close(self):
        if self.bar is not None:
            self.bar.close()
            self.bar = None


@space.command(short_help="Learn a text space from pools of unlabelled abstracts.")
@click.argument("pools", nargs=-1, required=True, metavar="POOL...")
@click.option("--out", required=True, metavar="DIR", help="Directory to write the space into (space.json, "
              "components.npy, SHA256).")
@click.option("-k", "--components", "k", type=click.IntRange(2, 1024), default=256, show_default=True,
              help="Number of dense components.")
@click.option("--kind", type=click.Choice(["lsa", "ppmi", "lsa+ppmi"]), default="ppmi", show_default=True,
              help="PPMI word vectors pooled by TF-IDF weight (the packaged space's kind), LSA (SVD of the "
                   "TF-IDF matrix), or both.")
@click.option("--max-terms", type=click.IntRange(100), default=40_000, show_default=True,
              help="Size of the space's vocabulary (the most frequent stems).")
@click.option("--text-field", default="abstract", show_default=True, help="Field holding the abstract.")
@click.option("--title-field", default="title", show_default=True, help="Field holding the title.")
@exit_code
def build(pools, out, k, kind, max_terms, text_field, title_field):
    """Learn a text space from POOL... (anything `tagger label` reads), without labels.

    The four arXiv pools (370,000 abstracts) take about 7 minutes and 10 GB here; the same
    pools, machine and library versions give byte-identical files.
    """
    from ..pipeline.space import build as build_space

    opts = {"text_field": text_field, "title_field": title_field, "id_field": "id", "input_format": None}
    phases = _Phases()
    try:
        info = build_space(pools, out, opts, k=k, kind=kind, max_terms=max_terms,
                           warn=lambda m: click.echo(f"tagger: warning: {m}", err=True), progress=phases)
    finally:
        phases.close()
    click.echo(f"text space ({info['kind']}, {info['k']} components over {info['terms']:,} terms) learned from "
               f"{info['texts']:,} abstracts -> {out} (sha256 {info['sha256'][:12]})")
    return 0
