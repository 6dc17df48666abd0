"""``tagger taxonomy show|check``."""

from __future__ import annotations

import click

from ._app import cli
from ._common import exit_code


@cli.group()
def taxonomy():
    """Show or check a taxonomy file."""


@taxonomy.command("show")
@click.argument("file", required=False)
@exit_code
def taxonomy_show(file):
    """Print the facets and labels of FILE [default: $TAGGER_TAXONOMY, else the packaged one]."""
    from ..resources import taxonomy_path
    from ..taxonomy import format_tree, load_taxonomy

    click.echo(format_tree(load_taxonomy(taxonomy_path(file))), nl=False)
    return 0


@taxonomy.command("check")
@click.argument("file")
@exit_code
def taxonomy_check(file):
    """Validate FILE; report the first problem with its line."""
    from ..taxonomy import load_taxonomy

    tax = load_taxonomy(file)
    click.echo(f"{file}: ok ({len(tax.facets)} facets, {len(tax.labels)} labels)")
    return 0
