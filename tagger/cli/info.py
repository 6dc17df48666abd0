"""``tagger info``: the model card of a model directory."""

from __future__ import annotations

import click

from ..wording import plural
from ._app import cli
from ._common import exit_code


@cli.command(short_help="Print the model card of a model directory.")
@click.argument("directory", required=False)
@exit_code
def info(directory):
    """Print the model card of a model directory [default: the model in use]."""
    import json

    from ..model import Model
    from ..resources import model_dir

    d = model_dir(directory)
    m = Model.load(d)
    card = d / "README.md"
    if card.is_file():
        click.echo(card.read_text(encoding="utf-8"), nl=False)
        return 0
    man = m.manifest
    click.echo(f"{d}: {plural(len(man['labels']), 'label')}, trained {man.get('created')} on "
                   f"{plural(man.get('corpus_size') or 0, 'abstract')}")
    click.echo(f"no model card; write one with `tagger evaluate --card {d}`")
    figs = man.get("figures", {}).get("out_of_fold")
    if figs:
        click.echo("out-of-fold figures: " + json.dumps({k: v["f1_micro"] for k, v in figs.items()}))
    return 0


