"""``tagger corpus check``: validate a hand-tagged corpus."""

from __future__ import annotations

import click

from ..wording import plural
from ._app import cli
from ._common import exit_code


@cli.group()
def corpus():
    """Check, merge and compare hand-tagged corpora."""


@corpus.command("check", short_help="Validate a hand-tagged corpus.")
@click.argument("file")
@click.option("--taxonomy", metavar="FILE", help="Taxonomy [default: $TAGGER_TAXONOMY, else the packaged one].")
@click.option("--provenance/--labels-only", default=None,
              help="Also check the project corpus's provenance fields (year, licence, sample, source), or "
                   "skip them [default: checked for the project's corpus, a fixtures/corpus.jsonl].")
@exit_code
def corpus_check(file, taxonomy, provenance):
    """Validate a hand-tagged corpus: unknown labels, duplicate ids or abstracts, empty abstracts,
    missing annotators, and (the project's corpus) the provenance fields year, licence, sample, source."""
    from ..corpus import check_corpus, load_corpus
    from ..resources import taxonomy_path
    from ..taxonomy import load_taxonomy

    problems = check_corpus(file, load_taxonomy(taxonomy_path(taxonomy)), provenance="auto" if provenance is None else provenance)
    for p in problems:
        click.echo(p)
    if problems:
        click.echo(f"{file}: {plural(len(problems), 'problem')}", err=True)
        return 1
    click.echo(f"{file}: ok ({plural(len(load_corpus(file)), 'example')})")
    return 0


