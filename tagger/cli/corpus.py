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

    tax = load_taxonomy(taxonomy_path(taxonomy))
    problems = check_corpus(file, tax, provenance="auto" if provenance is None else provenance)
    other = _another_taxonomy(file, tax)
    if other:  # one line, not one per row and label
        problems = [other] + [p for p in problems if ": unknown label " not in p]
    for p in problems:
        click.echo(p)
    if problems:
        click.echo(f"{file}: {plural(len(problems), 'problem')}", err=True)
        return 1
    click.echo(f"{file}: ok ({plural(len(load_corpus(file)), 'example')})")
    return 0




def _another_taxonomy(file, tax) -> str | None:
    """The line to print instead of the unknown-label lines when most of the distinct labels
    ``file`` uses (and 3 or more) are not ``tax``'s: it looks like a corpus of another taxonomy."""
    from ..corpus import load_corpus

    used = {lb for r in load_corpus(file) for lb in r["labels"]}
    unknown = sorted(used - set(tax.label_ids))
    if len(unknown) < 3 or len(unknown) * 2 <= len(used):  # a typo or two: each named as usual
        return None
    name = f"{tax.name} ({tax.path})" if getattr(tax, "path", None) else tax.name
    return (f"{file}: looks like a corpus of another taxonomy: {len(unknown)} of the {len(used)} labels it uses "
            f"(e.g. {', '.join(unknown[:3])}) are not in {name}; pass its taxonomy with --taxonomy FILE")
